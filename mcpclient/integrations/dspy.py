"""MCP tools as DSPy tools (``dspy.Tool``), for ``dspy.ReAct`` and any program that takes tools::

    import dspy
    from mcpclient.integrations import dspy as mcp_dspy
    react = dspy.ReAct("question -> answer", tools=mcp_dspy.tools(client))

Each tool's arguments are its input schema's properties, as DSPy reads a JSON Schema
(``convert_input_schema_to_tool_args``: DSPy checks the model's arguments against them
before the call). The call is synchronous, through the client's own thread-safe
``call_tool``; the answer is the result's text (images described). A failed tool raises
``mcpclient.ToolError``, which ``dspy.ReAct`` shows the model as the step's observation.
Needs the ``dspy`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from .._core.timeouts import DEFAULT
from ..llm._common import ToolSource
from ._core import Bound, bind

if TYPE_CHECKING:
    from dspy import Tool

__all__ = ["tools"]


def _tool(bound: Bound) -> Tool:
    import dspy
    from dspy.adapters.types.tool import convert_input_schema_to_tool_args

    args, arg_types, arg_desc = convert_input_schema_to_tool_args(bound.schema)

    def call(**arguments: Any) -> str:
        return bound.call(arguments).text

    return dspy.Tool(call, name=bound.name, desc=bound.description, args=args, arg_types=arg_types,
                     arg_desc=arg_desc)


def tools(source: ToolSource, *, timeout: Any = DEFAULT, timeouts: Mapping[str, Any] | None = None) -> list[Tool]:
    """DSPy tools for every tool of ``source`` (a ``Client``, ``ClientGroup`` or tool list);
    ``timeout`` bounds each call, ``timeouts`` maps a tool's name to its own."""
    return [_tool(b) for b in bind(source, timeout=timeout, timeouts=timeouts)]
