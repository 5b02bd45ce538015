"""MCP tools as smolagents tools (``smolagents.Tool``)::

    from smolagents import ToolCallingAgent
    from mcpclient.integrations import smolagents as mcp_smolagents
    agent = ToolCallingAgent(tools=mcp_smolagents.tools(client), model=model)

smolagents describes arguments as ``inputs``: one entry per top-level property with a
``type`` among its own names (string, integer, number, boolean, array, object, null, any), a
``description``, and ``nullable`` for optional ones. Each property's schema is copied into its
entry as it is (``enum``, ``items``, ``properties``, bounds and formats pass through to the
model); what smolagents cannot express: a property whose type it does not know or that has no
``type`` (``anyOf`` of untyped branches, ``$ref``) becomes ``any``, and top-level keywords
other than ``properties``/``required`` (``$defs``, ``additionalProperties``, ``oneOf``) are not
shown to the model; the server still validates. Names must be Python identifiers (``-``
becomes ``_``, a leading digit or keyword gets a ``t_`` prefix). The output is text (images
described); a failed tool raises ``mcpclient.ToolError``, which smolagents reports to the
model as a tool execution error.
"""

from __future__ import annotations

import copy
import functools
from typing import TYPE_CHECKING, Any, Mapping

from .._core.timeouts import DEFAULT
from ..llm._common import ToolSource
from ._core import Bound, bind, identifier

if TYPE_CHECKING:
    from smolagents import Tool

__all__ = ["tools"]

_TYPES = {"string", "boolean", "integer", "number", "array", "object", "null", "any"}


def inputs(schema: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """smolagents ``inputs`` for a JSON Schema of an object (see the module's docstring)."""
    required = set(schema.get("required") or ())
    result: dict[str, dict[str, Any]] = {}
    for name, prop in (schema.get("properties") or {}).items():
        entry = copy.deepcopy(prop) if isinstance(prop, dict) else {}
        kind = entry.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if not kinds or not all(isinstance(k, str) and k in _TYPES for k in kinds):
            entry["type"] = "any"
            entry.pop("anyOf", None)  # smolagents reads anyOf branches' types; untyped ones break it
        elif "null" in kinds and len(kinds) > 1:
            entry["type"] = [k for k in kinds if k != "null"]
            entry["nullable"] = True
        entry["description"] = str(entry.get("description") or entry.get("title") or name)
        if name not in required:
            entry["nullable"] = True
        result[name] = entry
    return result


@functools.cache
def _tool_class() -> type[Tool]:
    from smolagents import Tool

    class MCPTool(Tool):  # type: ignore[misc]
        """One MCP tool; its ``forward`` takes the arguments as keywords, so the signature
        check smolagents makes for hand-written tools does not apply."""

        skip_forward_signature_validation = True
        output_type = "string"

        def __init__(self, bound: Bound) -> None:
            self.name = bound.name
            self.description = bound.description
            self.inputs = inputs(bound.schema)
            self.bound = bound
            self._required = set(bound.schema.get("required") or ())
            super().__init__()
            self.validate_arguments()
            self.is_initialized = True

        def forward(self, **arguments: Any) -> str:
            # An optional argument the model left as null is left out: the server's schema
            # says it may be absent, not that it may be null.
            arguments = {k: v for k, v in arguments.items() if v is not None or k in self._required}
            return self.bound.call(arguments).text

    return MCPTool


def tools(source: ToolSource, *, timeout: Any = DEFAULT, timeouts: Mapping[str, Any] | None = None) -> list[Tool]:
    """smolagents tools for every tool of ``source`` (a ``Client``, ``ClientGroup`` or tool
    list); ``timeout`` bounds each call, ``timeouts`` maps a tool's name to its own."""
    cls = _tool_class()
    return [cls(b) for b in bind(source, timeout=timeout, timeouts=timeouts, rename=identifier)]
