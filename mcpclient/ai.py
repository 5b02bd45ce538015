"""MCP tools as plain callables for an LLM tool loop."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping, Protocol

from attrs import field, frozen

from ._core.exceptions import ToolError
from ._core.timeouts import DEFAULT
from .apps import visible_to_model

if TYPE_CHECKING:
    from .types import ToolDef, ToolResult

__all__ = ["Tool", "ToolCaller", "ToolSource", "tools"]


class ToolCaller(Protocol):
    """Anything that runs a tool by name: a ``Client``, or a ``ClientGroup`` (prefixed names)."""

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = ..., *, timeout: Any = ...) -> ToolResult:
        """Run the tool ``name`` and return its result."""


class ToolSource(ToolCaller, Protocol):
    """What ``tools()`` takes: a ``Client``, a ``SharedClient`` or a ``SharedGroup``."""

    def list_tools(self, *, timeout: Any = ...) -> list[ToolDef]:
        """Every tool, as the server describes it."""


@frozen(kw_only=True)
class Tool:
    """One server tool, ready for an LLM tool loop.

    ``name``, ``description`` and ``schema`` (the tool's input JSON schema) are the server's,
    verbatim. ``execute(arguments)`` calls the tool and returns its text; a result with
    ``is_error`` raises ``ToolError`` so the loop records a failed tool call. ``client`` is
    what runs it: a ``Client``, or a ``ClientGroup`` for the group's prefixed names.
    """

    name: str
    description: str
    schema: dict[str, Any]
    client: ToolCaller = field(repr=False, eq=False)

    def execute(self, arguments: Mapping[str, Any] | str | None = None, *, timeout: Any = DEFAULT) -> str:
        """Call the tool; ``arguments`` may be a mapping or the JSON text an LLM produced."""
        if isinstance(arguments, (str, bytes)):
            try:
                arguments = json.loads(arguments) if arguments.strip() else None
            except ValueError as exc:
                raise ToolError(f"arguments for tool {self.name!r} are not valid JSON: {exc}", tool=self.name) from exc
            if arguments is not None and not isinstance(arguments, dict):
                raise ToolError(f"arguments for tool {self.name!r} must be a JSON object", tool=self.name)
        kwargs = {} if timeout is DEFAULT else {"timeout": timeout}
        result = self.client.call_tool(self.name, arguments, **kwargs)
        result.raise_for_error(self.name)
        return result.text


def tools(client: ToolSource, *, timeout: Any = DEFAULT) -> list[Tool]:
    """List the client's tools as ``Tool`` objects (schemas passed through, never re-derived).

    Tools meant for an MCP App view only (``_meta.ui.visibility`` without ``"model"``) are
    left out, as SEP-1865 requires; ``client.call_tool`` still runs them.
    """
    kwargs = {} if timeout is DEFAULT else {"timeout": timeout}
    return [
        Tool(name=d.name, description=d.description, schema=d.input_schema, client=client)
        for d in client.list_tools(**kwargs)
        if visible_to_model(d)
    ]
