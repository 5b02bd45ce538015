"""MCP tools as LangChain tools (langchain-core ``StructuredTool``)::

    from mcpclient.integrations import langchain as mcp_langchain
    tools = mcp_langchain.tools(client)          # or a ClientGroup
    model = chat_model.bind_tools(tools)

The tool's JSON Schema is the ``args_schema`` as a dict, verbatim (LangChain sends it to the
model as it is and does not validate arguments against it; the server does). Results use
``response_format="content_and_artifact"``: the ``ToolMessage`` content is the text, or text
and image blocks when the tool returned images; the artifact is the whole
``mcpclient.ToolResult`` (structured content included). A failed tool raises
``ToolException``, which LangChain turns into a ``ToolMessage`` with ``status="error"``
(``handle_tool_error=True``). Names follow ``^[a-zA-Z0-9_-]{1,64}$``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Mapping

from .._core.exceptions import ToolError
from .._core.timeouts import DEFAULT
from ..llm._common import ToolSource
from ._core import Bound, bind

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

__all__ = ["tools"]


def _content(bound: Bound, arguments: dict[str, Any]) -> tuple[Any, Any]:
    from langchain_core.tools import ToolException

    try:
        reply = bound.call(arguments)
    except ToolError as exc:
        raise ToolException(str(exc)) from exc
    if not reply.has_images:
        return reply.text, reply.result
    blocks: list[dict[str, Any]] = []
    for part in reply.parts:
        if part.kind == "image":
            blocks.append({"type": "image", "base64": part.data, "mime_type": part.mime_type})
        else:
            blocks.append({"type": "text", "text": part.text})
    return blocks, reply.result


def _tool(bound: Bound) -> StructuredTool:
    from langchain_core.tools import StructuredTool

    def run(**arguments: Any) -> tuple[Any, Any]:
        return _content(bound, arguments)

    async def arun(**arguments: Any) -> tuple[Any, Any]:
        # The call blocks; a worker thread keeps the event loop free.
        return await asyncio.to_thread(_content, bound, arguments)

    return StructuredTool(
        name=bound.name,
        description=bound.description,
        args_schema=bound.schema,
        func=run,
        coroutine=arun,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def tools(source: ToolSource, *, timeout: Any = DEFAULT, timeouts: Mapping[str, Any] | None = None) -> list[StructuredTool]:
    """LangChain tools for every tool of ``source`` (a ``Client``, ``ClientGroup`` or tool list).

    ``timeout`` bounds each call (default: the client's); ``timeouts`` maps a tool's name
    (prefixed, for a group) to its own timeout.
    """
    return [_tool(b) for b in bind(source, timeout=timeout, timeouts=timeouts)]
