"""MCP tools as Haystack tools (haystack-ai ``Tool``)::

    from haystack.components.tools import ToolInvoker
    from mcpclient.integrations import haystack as mcp_haystack
    tools = mcp_haystack.tools(client)
    invoker = ToolInvoker(tools=tools)              # or a chat generator's / Agent's tools=

The JSON Schema is the tool's ``parameters``, verbatim (Haystack checks that it is a valid
schema and sends it to the model as it is). The function returns the tool's text, which is
what Haystack puts in the tool result message (images are described in the text: Haystack's
tool results are strings unless a tool configures ``outputs_to_string``). A failed tool raises
``mcpclient.ToolError``: ``ToolInvoker`` turns it into a tool result with ``error=True`` (or
raises ``ToolInvocationError`` with ``raise_on_failure=True``, its default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from .._core.timeouts import DEFAULT
from ..llm._common import ToolSource
from ._core import Bound, bind

if TYPE_CHECKING:
    from haystack.tools import Tool

__all__ = ["tools"]


def _tool(bound: Bound) -> Tool:
    from haystack.tools import Tool

    def run(**arguments: Any) -> str:
        return bound.call(arguments).text

    return Tool(name=bound.name, description=bound.description, parameters=bound.schema, function=run)


def tools(source: ToolSource, *, timeout: Any = DEFAULT, timeouts: Mapping[str, Any] | None = None) -> list[Tool]:
    """Haystack tools for every tool of ``source`` (a ``Client``, ``ClientGroup`` or tool
    list); ``timeout`` bounds each call, ``timeouts`` maps a tool's name to its own."""
    return [_tool(b) for b in bind(source, timeout=timeout, timeouts=timeouts)]
