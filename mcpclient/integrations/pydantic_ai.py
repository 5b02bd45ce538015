"""MCP tools as Pydantic AI tools (``Tool.from_schema``) or a ``FunctionToolset``::

    from pydantic_ai import Agent
    from mcpclient.integrations import pydantic_ai as mcp_pydantic_ai
    agent = Agent(model, toolsets=[mcp_pydantic_ai.toolset(client)])   # or tools=tools(client)

The JSON Schema is given to Pydantic AI verbatim (``Tool.from_schema``: Pydantic AI does not
validate arguments against it; the server does). A tool's text comes back as a string; images
come back as ``BinaryContent`` next to the text, which Pydantic AI sends to models that take
images in tool results. Errors follow Pydantic AI's two kinds: arguments the server refused
(JSON-RPC -32602) raise ``ModelRetry``, so the model corrects them within the tool's retry
budget; a tool that ran and failed, or timed out, raises ``ToolFailed``, a failed result the
model sees and adapts to. The function is synchronous; Pydantic AI runs it on a worker thread.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Mapping

from .._core.exceptions import RPCError, ToolError
from .._core.timeouts import DEFAULT
from ..llm._common import ToolSource
from ._core import Bound, bind

if TYPE_CHECKING:
    from pydantic_ai import Tool
    from pydantic_ai.toolsets import FunctionToolset

__all__ = ["tools", "toolset"]


def _run(bound: Bound, arguments: dict[str, Any]) -> Any:
    from pydantic_ai import BinaryContent, ModelRetry
    from pydantic_ai.exceptions import ToolFailed

    try:
        reply = bound.call(arguments)
    except ToolError as exc:
        cause = exc.__cause__
        if isinstance(cause, RPCError) and cause.code == RPCError.INVALID_PARAMS:
            raise ModelRetry(str(cause)) from exc
        raise ToolFailed(str(exc)) from exc
    if not reply.has_images:
        return reply.text
    content: list[Any] = []
    for part in reply.parts:
        if part.kind == "image":
            content.append(BinaryContent(data=base64.b64decode(part.data), media_type=part.mime_type))
        elif part.text:
            content.append(part.text)
    return content


def _tool(bound: Bound) -> Tool[Any]:
    from pydantic_ai import Tool

    def run(**arguments: Any) -> Any:
        return _run(bound, arguments)

    return Tool.from_schema(run, name=bound.name, description=bound.description, json_schema=bound.schema)


def tools(source: ToolSource, *, timeout: Any = DEFAULT, timeouts: Mapping[str, Any] | None = None) -> list[Tool[Any]]:
    """Pydantic AI tools for every tool of ``source`` (a ``Client``, ``ClientGroup`` or tool
    list); ``timeout`` bounds each call, ``timeouts`` maps a tool's name to its own."""
    return [_tool(b) for b in bind(source, timeout=timeout, timeouts=timeouts)]


def toolset(source: ToolSource, *, timeout: Any = DEFAULT, timeouts: Mapping[str, Any] | None = None) -> FunctionToolset[Any]:
    """The same tools as one ``FunctionToolset``, for ``Agent(toolsets=[...])``."""
    from pydantic_ai.toolsets import FunctionToolset

    return FunctionToolset(tools(source, timeout=timeout, timeouts=timeouts))
