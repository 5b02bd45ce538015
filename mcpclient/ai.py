"""MCP tools as plain callables for an LLM tool loop."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping

from attrs import field, frozen

from ._exceptions import ToolError

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["Tool", "tools"]


@frozen(kw_only=True)
class Tool:
    """One server tool, ready for an LLM tool loop.

    ``name``, ``description`` and ``schema`` (the tool's input JSON schema) are the server's,
    verbatim. ``execute(arguments)`` calls the tool and returns its text; a result with
    ``is_error`` raises ``ToolError`` so the loop records a failed tool call.
    """

    name: str
    description: str
    schema: dict[str, Any]
    client: Client = field(repr=False, eq=False)

    def execute(self, arguments: Mapping[str, Any] | str | None = None, *, timeout: Any = None) -> str:
        """Call the tool; ``arguments`` may be a mapping or the JSON text an LLM produced."""
        if isinstance(arguments, (str, bytes)):
            try:
                arguments = json.loads(arguments) if arguments.strip() else None
            except ValueError as exc:
                raise ToolError(f"arguments for tool {self.name!r} are not valid JSON: {exc}", tool=self.name) from exc
            if arguments is not None and not isinstance(arguments, dict):
                raise ToolError(f"arguments for tool {self.name!r} must be a JSON object", tool=self.name)
        kwargs = {} if timeout is None else {"timeout": timeout}
        result = self.client.call_tool(self.name, arguments, **kwargs)
        result.raise_for_error(self.name)
        return result.text


def tools(client: Client, *, timeout: Any = None) -> list[Tool]:
    """List the client's tools as ``Tool`` objects (schemas passed through, never re-derived)."""
    kwargs = {} if timeout is None else {"timeout": timeout}
    return [
        Tool(name=d.name, description=d.description, schema=d.input_schema, client=client)
        for d in client.list_tools(**kwargs)
    ]
