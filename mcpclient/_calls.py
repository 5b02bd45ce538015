"""Client methods that ask the server for something: lists, tools, resources, prompts."""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any, Mapping, TypeVar

from . import types as t
from ._base import ClientBase
from ._cache import freshness
from ._eras import modern
from ._exceptions import ProtocolError, ResourceNotFound, RPCError
from ._rpc.cancel import CancelToken
from ._rpc.engine import ProgressCallback
from ._session import MODERN
from ._tasks import finish_task_result
from ._timeouts import DEFAULT
from ._wire import structure, structure_list, unstructure

__all__ = ["CallsMixin"]

log = logging.getLogger("mcpclient")

T = TypeVar("T")

#: A server that keeps paginating past this many pages is treated as broken.
MAX_PAGES = 10_000
#: How long a legacy list result is cached (with cache=True) when the server announces changes.
LEGACY_CACHE_TTL = 3600.0


class CallsMixin(ClientBase):
    """The server's features as blocking calls (part of ``Client``)."""

    def _paginate(
        self, method: str, key: str, cls: type[T], timeout: float | None, capability: str, cancel: Any = None
    ) -> list[T]:
        self._require(capability, method)
        # Keyed by method too: resources/list and resources/templates/list share a capability
        # (and are dropped together by its list_changed).
        cache_key = (capability, method)
        cached = self._cache.get(cache_key) if self._cache is not None else None
        if cached is not None:
            return list(cached)
        pages: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        deadline = _Deadline(self._timeout(timeout))
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            result = self._call(method, params, deadline.remaining(), cancel=cancel)
            pages.append(result)
            cursor = result.get("nextCursor")
            if cursor is None or cursor == "":
                break
            if not isinstance(cursor, str) or cursor in seen:
                raise ProtocolError(f"the server repeated the {method!r} cursor {cursor!r}; stopping")
            seen.add(cursor)
        else:
            raise ProtocolError(f"the server paginated {method!r} past {MAX_PAGES} pages; stopping")
        items: list[T] = []
        for page in pages:
            items.extend(structure_list(page.get(key, []), cls))
        if self._cache is not None:
            self._store(capability, cache_key, pages, items)
        return items

    def _store(self, capability: str, key: tuple[Any, ...], pages: list[dict[str, Any]], value: Any) -> None:
        assert self._cache is not None
        caps = self.server_capabilities.get(capability)
        announces = isinstance(caps, dict) and bool(caps.get("listChanged") or caps.get("subscribe"))
        ttl, private = freshness(pages, LEGACY_CACHE_TTL if announces else None)
        if private:
            return  # per-credential results are never kept: no transport names its identity
        self._cache.put(key, value, ttl)

    def ping(self, *, timeout: float | None = DEFAULT) -> None:
        """Check that the server answers (``ping``; ``server/discover`` in the modern era)."""
        self._call("server/discover" if self._session.era == MODERN else "ping", None, timeout)

    def list_tools(self, *, timeout: float | None = DEFAULT) -> list[t.ToolDef]:
        """Every tool the server offers, following pagination to the end."""
        tools = self._paginate("tools/list", "tools", t.ToolDef, timeout, "tools")
        note_tools = getattr(self.transport, "note_tools", None)
        if note_tools is not None:
            tools = note_tools(tools)  # the transport may drop tools it cannot call
        self._outputs.learn(tools)
        return tools

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        max_total: float | None = None,
        cancel: CancelToken | threading.Event | None = None,
    ) -> t.ToolResult:
        """Run a tool and return its ``ToolResult``.

        ``arguments`` is a JSON-able mapping (None sends ``{}``). A tool that fails reports
        ``is_error=True`` in the result rather than raising; call ``result.raise_for_error()``
        to raise ``ToolError`` instead.

        ``on_progress(progress, total, message)`` receives the server's progress reports; each
        one renews ``timeout`` (an idle timeout), while ``max_total`` caps the whole call.
        ``cancel`` (a ``CancelToken`` or ``threading.Event``) cancels the call from another
        thread: the server is told, and this call raises ``RequestCancelled``.
        """
        self._require("tools", "tools/call")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise TypeError(f"arguments must be a mapping, got {type(arguments).__name__}")
        params = {"name": name, "arguments": dict(arguments) if arguments else {}}
        options: dict[str, Any] = dict(on_progress=on_progress, max_total=max_total, cancel=cancel)
        try:
            result = self._call("tools/call", params, timeout, **options)
        except RPCError as exc:
            if exc.code != modern.HEADER_MISMATCH:
                raise
            log.info("the server rejected the tool headers; refreshing the tool list and retrying once")
            self.list_tools(timeout=timeout)
            result = self._call("tools/call", params, timeout, **options)
        if result.get("resultType") == "task":  # the server made it a task: wait for the end
            budget = max_total if max_total is not None else self._timeout(timeout)
            result = finish_task_result(self, result, name, budget, cancel)  # type: ignore[arg-type]
        return self._outputs.check(name, structure(result, t.ToolResult))

    def list_resources(self, *, timeout: float | None = DEFAULT) -> list[t.Resource]:
        """Every resource the server lists, following pagination to the end."""
        return self._paginate("resources/list", "resources", t.Resource, timeout, "resources")

    def list_resource_templates(self, *, timeout: float | None = DEFAULT) -> list[t.ResourceTemplate]:
        """Every resource template, following pagination to the end."""
        return self._paginate(
            "resources/templates/list", "resourceTemplates", t.ResourceTemplate, timeout, "resources"
        )

    def read_resource(
        self,
        uri: str,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        cancel: CancelToken | threading.Event | None = None,
    ) -> list[t.ResourceContents]:
        """Read a resource: each entry has ``text`` or decoded ``blob`` bytes.

        Raises ``ResourceNotFound`` (an ``RPCError``) when the server has no such resource.
        """
        self._require("resources", "resources/read")
        key = ("read", uri)
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is not None:
            return list(cached)
        try:
            result = self._call("resources/read", {"uri": uri}, timeout, on_progress=on_progress, cancel=cancel)
        except RPCError as exc:
            raise _not_found(exc, uri) from None
        contents = structure_list(result.get("contents", []), t.ResourceContents)
        if self._cache is not None:
            self._store("resources", key, [result], contents)
        return contents

    def list_prompts(self, *, timeout: float | None = DEFAULT) -> list[t.Prompt]:
        """Every prompt the server offers, following pagination to the end."""
        return self._paginate("prompts/list", "prompts", t.Prompt, timeout, "prompts")

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        cancel: CancelToken | threading.Event | None = None,
    ) -> tuple[str | None, list[t.PromptMessage]]:
        """Render a prompt: return its description and messages."""
        self._require("prompts", "prompts/get")
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        result = self._call("prompts/get", params, timeout, on_progress=on_progress, cancel=cancel)
        messages = structure_list(result.get("messages", []), t.PromptMessage)
        description = result.get("description")
        return (description if isinstance(description, str) else None), messages

    def complete(
        self,
        ref: t.CompletionRef,
        arg_name: str,
        arg_value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT,
    ) -> t.Completion:
        """Ask for completions of one argument of a prompt or resource template.

        ``context`` gives the values of arguments already filled in.
        """
        self._require("completions", "completion/complete")
        params: dict[str, Any] = {
            "ref": unstructure(ref),
            "argument": {"name": arg_name, "value": arg_value},
        }
        if context:
            params["context"] = {"arguments": dict(context)}
        result = self._call("completion/complete", params, timeout)
        completion = result.get("completion")
        if not isinstance(completion, dict):
            raise ProtocolError(f"the server's completion result has no completion object: {result!r:.200}")
        return structure(completion, t.Completion)



#: How servers word "no such resource" in a -32602 error when they put the URI in the message
#: only (the TypeScript SDK's servers: "Resource demo://x not found").
_NOT_FOUND_WORDS = re.compile(r"not found|unknown resource|no such resource|does(?: not|n't) exist", re.IGNORECASE)


def _not_found(exc: RPCError, uri: str) -> RPCError:
    """``ResourceNotFound`` for each way real servers say it to a ``resources/read``: the spec's
    -32002; -32602 with ``data.uri`` (the Python SDK); -32602 naming the URI in a not-found
    message (the TypeScript SDK, server-everything)."""
    data = exc.data if isinstance(exc.data, dict) else {}
    named = data.get("uri") == uri or (uri in exc.message and _NOT_FOUND_WORDS.search(exc.message) is not None)
    if exc.code == RPCError.RESOURCE_NOT_FOUND or (exc.code == RPCError.INVALID_PARAMS and named):
        return ResourceNotFound(exc.code, exc.message, exc.data, method=exc.method, request_id=exc.request_id)
    return exc


class _Deadline:
    """One time budget spread over several requests (the pages of a list)."""

    __slots__ = ("_end",)

    def __init__(self, timeout: float | None) -> None:
        self._end = None if timeout is None else time.monotonic() + timeout

    def remaining(self) -> float | None:
        return None if self._end is None else max(0.0, self._end - time.monotonic())

