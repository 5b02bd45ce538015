"""Asking the server for something: lists, tools, resources, prompts, completions.

``Calls`` is the client's collaborator for the server's features. Its methods take the call's
options, made once by the ``Client`` (``_core.options.CallOptions``, the timeout resolved), and
pass them on as they are to ``Conversation.call``; a listing's ``timeout`` bounds all its pages.
Every list follows its pages through ``_pages`` (the result cache, a plug-in, answers pages and
reads as middleware: ``mcpclient.plugins.cache``); every ``tools/call`` goes through
``_send_tool_call``, the one place that retries a call the server rejected for stale headers.
"""

from __future__ import annotations

import logging
import re
from collections import abc
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

from .. import types as t
from .._core import bounded as _bounded
from .._core.exceptions import MCPError, ProtocolError, RPCError
from .._core.methods import resendable_tool
from .._core.options import CallOptions
from .._core.text import clean
from .._core.timeouts import Deadline
from .._protocol.eras import modern
from .._protocol.reads import resource_not_found
from .._protocol.wire import structure, structure_list, structure_tool_result, unstructure
from .features import Task, TasksFeature
from .pages import Page, page_cursor, pages

if TYPE_CHECKING:
    from .conversation import Conversation

__all__ = ["Calls"]

log = logging.getLogger("mcpclient")

T = TypeVar("T")

#: The listings that page: the result's key for the items, and the capability they need.
_LISTINGS = {
    "tools/list": ("tools", "tools"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "resources"),
    "prompts/list": ("prompts", "prompts"),
}

#: The tool name format of the specification (SEP-986, 2025-11-25): names outside it still work.
TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


class Calls:
    """The server's tools, resources, prompts and completions, as blocking calls."""

    def __init__(
        self,
        conversation: Conversation,
        tasks: TasksFeature | None,
        listed: Callable[[list[t.ToolDef]], list[t.ToolDef]] = lambda tools: tools,
    ) -> None:
        self._conversation = conversation
        #: Given every whole tool list, the client's own or one made for a call (the extensions'
        #: ``result`` hooks: output validation learns the schemas there); returns what to keep.
        self._listed = listed
        #: The tasks feature (the built-in ``Tasks`` extension), None when none is plugged in.
        self._tasks = tasks
        self._odd_names: set[str] = set()  # tool names already warned about (SEP-986)
        #: The tools whose annotations say a call changes nothing (``_methods.resendable_tool``),
        #: from the last listing: their calls may be sent again after a broken attempt.
        self._resendable: frozenset[str] = frozenset()

    # -- tools --------------------------------------------------------------------------------

    def ping(self, options: CallOptions) -> None:
        self._conversation.strategy.ping(self._conversation, options)

    def list_tools(self, options: CallOptions) -> list[t.ToolDef]:
        tools = self._listing("tools/list", "tools", t.ToolDef, options, "tools")
        self._resendable = frozenset(tool.name for tool in tools if resendable_tool(tool.annotations))
        tools = self._listed(tools)  # the tasks extension learns each tool's taskSupport there
        self._warn_odd_names(tools)
        return tools

    def _warn_odd_names(self, tools: list[t.ToolDef]) -> None:
        """One warning per client for tool names outside the spec's format (SEP-986), which
        LLM APIs and agent frameworks may refuse; the tools stay listed and callable."""
        odd = sorted({tool.name for tool in tools if not TOOL_NAME.fullmatch(tool.name)} - self._odd_names)
        if odd:
            self._odd_names.update(odd)
            log.warning(
                "%d tool name(s) outside the MCP format (1 to 128 of A-Z a-z 0-9 _ - .): %s%s",
                len(odd), ", ".join(f"'{clean(name, 80)}'" for name in odd[:5]), " ..." if len(odd) > 5 else "",
            )

    def list_page(self, method: str, cls: type[T], cursor: str | None, options: CallOptions) -> Page[T]:
        """One page of a listing (never cached); ``cursor`` None asks for the first.

        A page of tools teaches the client nothing (output schemas, tool headers): those are
        learned from a whole listing, as a page cannot say which tools went away.
        """
        key, capability = _LISTINGS[method]
        self._conversation.require(capability, method)
        params = {"cursor": cursor} if cursor is not None else None
        result = self._conversation.call(method, params, options)
        return Page(items=structure_list(result.get(key, []), cls), next_cursor=page_cursor(result, method))

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None, options: CallOptions,
        extra: Mapping[str, Any] | None = None,
    ) -> t.ToolResult | dict[str, Any]:
        """``tools/call``; ``extra`` adds to its params (a resumed call's answers and state).

        With ``options.on_input == "return"`` an input round ends the call: its result comes
        back as the server's dict (``resultType: input_required``), not a ``ToolResult``
        (``Inputs`` makes it a ``PendingInput``)."""
        self._conversation.require("tools", "tools/call")
        params = _tool_params(name, arguments)
        if extra:
            params.update(extra)
        result = self._send_tool_call(params, options)
        if options.on_input == "return" and result.get("resultType") == "input_required":
            return result
        if result.get("resultType") == "task":  # the server made it a task: wait for the end
            budget = options.max_total if options.max_total is not None else options.timeout
            result = self._task_feature().finish(result, name, budget, options.cancel)
        tool_result: t.ToolResult = structure_tool_result(result)
        return tool_result  # checked against its outputSchema by the OutputValidation extension's hook

    def call_tool_as_task(
        self, name: str, arguments: Mapping[str, Any] | None, ttl: float | None, options: CallOptions
    ) -> Task:
        """A ``tools/call`` that asks for a task: the tasks feature says how to ask (and may list
        the tools once, out of the call's time), and makes the handle from the answer."""
        tasks = self._task_feature()
        deadline = Deadline(options.timeout)
        params = tasks.task_call(_tool_params(name, arguments), ttl, options.timeout, self._list_tools_within)
        result = self._send_tool_call(params, CallOptions(deadline.remaining(), meta=options.meta))
        return tasks.started(result, name)

    def _list_tools_within(self, timeout: float | None) -> list[t.ToolDef]:
        return self.list_tools(CallOptions(timeout))

    def _task_feature(self) -> TasksFeature:
        if self._tasks is None:
            raise MCPError(TasksFeature.missing)
        return self._tasks

    def _send_tool_call(self, params: dict[str, Any], options: CallOptions) -> dict[str, Any]:
        """``tools/call``, sent again once if the server found its headers stale (-32020);
        resendable when the tool's annotations say a call changes nothing
        (``_methods.resendable_tool``, from the last listing).

        A modern server checks the ``Mcp-Param-*`` headers against the arguments; a mismatch
        means the tool list this client learned the headers from is out of date.
        """
        resendable = self._resendable
        try:
            return self._conversation.call(
                "tools/call", params, options.resending() if resendable and params["name"] in resendable else options
            )
        except RPCError as exc:
            if exc.code != modern.HEADER_MISMATCH:
                raise
            log.info("the server rejected the tool headers; refreshing the tool list and retrying once")
            self._list_tools_within(options.timeout)
            return self._conversation.call(
                "tools/call", params, options.resending() if params["name"] in self._resendable else options
            )


    # -- resources ------------------------------------------------------------------------------

    def list_resources(self, options: CallOptions) -> list[t.Resource]:
        return self._listing("resources/list", "resources", t.Resource, options, "resources")

    def list_resource_templates(self, options: CallOptions) -> list[t.ResourceTemplate]:
        return self._listing("resources/templates/list", "resourceTemplates", t.ResourceTemplate, options, "resources")

    def read_resource(self, uri: str, options: CallOptions) -> list[t.ResourceContents]:
        self._conversation.require("resources", "resources/read")
        try:
            result = self._conversation.call("resources/read", {"uri": uri}, options)
        except RPCError as exc:
            raise resource_not_found(exc, uri) from None
        return structure_list(result.get("contents", []), t.ResourceContents)

    # -- prompts and completions ----------------------------------------------------------------

    def list_prompts(self, options: CallOptions) -> list[t.Prompt]:
        return self._listing("prompts/list", "prompts", t.Prompt, options, "prompts")

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None, options: CallOptions
    ) -> tuple[str | None, list[t.PromptMessage]]:
        self._conversation.require("prompts", "prompts/get")
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        result = self._conversation.call("prompts/get", params, options)
        messages = structure_list(result.get("messages", []), t.PromptMessage)
        description = result.get("description")
        return (description if isinstance(description, str) else None), messages

    def complete(
        self, ref: t.CompletionRef, arg_name: str, arg_value: str, context: Mapping[str, str] | None,
        options: CallOptions,
    ) -> t.Completion:
        self._conversation.require("completions", "completion/complete")
        params: dict[str, Any] = {"ref": unstructure(ref), "argument": {"name": arg_name, "value": arg_value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        result = self._conversation.call("completion/complete", params, options)
        completion = result.get("completion")
        if not isinstance(completion, dict):
            raise ProtocolError(f"the server's completion result has no completion object: {_bounded.excerpt(result, 200)}")
        return structure(completion, t.Completion)

    # -- lists ----------------------------------------------------------------------------------

    def _listing(self, method: str, key: str, cls: type[T], options: CallOptions, capability: str) -> list[T]:
        self._conversation.require(capability, method)
        return [item for page in pages(self._conversation, method, options)
                for item in structure_list(page.get(key, []), cls)]


def _tool_params(name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    # A plain dict first: isinstance against the Mapping ABC costs more than the copy.
    if type(arguments) is not dict and arguments is not None and not isinstance(arguments, abc.Mapping):
        raise TypeError(f"arguments must be a mapping, got {type(arguments).__name__}")
    return {"name": name, "arguments": dict(arguments) if arguments else {}}

