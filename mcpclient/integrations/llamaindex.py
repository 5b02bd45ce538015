"""MCP tools as LlamaIndex tools (llama-index-core ``FunctionTool``)::

    from llama_index.core.agent.workflow import FunctionAgent
    from mcpclient.integrations import llamaindex as mcp_llamaindex
    agent = FunctionAgent(tools=mcp_llamaindex.tools(client), llm=llm)

LlamaIndex describes a tool's arguments with a pydantic model (``ToolMetadata.fn_schema``);
these tools carry the server's JSON Schema instead, returned verbatim by
``metadata.get_parameters_dict()``, which is what LlamaIndex sends to the model. Results are
content blocks: ``TextBlock`` for text, ``ImageBlock`` for images; the whole
``mcpclient.ToolResult`` is the output's ``raw_output``. A failed tool raises
``mcpclient.ToolError``, which LlamaIndex's agents record as a tool output with
``is_error=True`` for the model to read. Agents run tools asynchronously: the blocking call
runs on a worker thread, keeping the event loop free.
"""

from __future__ import annotations

import asyncio
import base64
import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from .._core.timeouts import DEFAULT
from ..llm._common import ToolSource
from ._core import Bound, bind

if TYPE_CHECKING:
    from llama_index.core.tools import FunctionTool, ToolMetadata

__all__ = ["tools"]


@functools.cache
def _metadata_class() -> type[ToolMetadata]:
    from llama_index.core.tools import ToolMetadata

    @dataclass
    class JSONSchemaToolMetadata(ToolMetadata):  # type: ignore[misc]
        """``ToolMetadata`` whose parameters are a JSON Schema rather than a pydantic model."""

        json_schema: dict[str, Any] = field(default_factory=dict)

        def get_parameters_dict(self) -> dict[str, Any]:
            return self.json_schema

    return JSONSchemaToolMetadata


def _run(bound: Bound, arguments: dict[str, Any]) -> Any:
    from llama_index.core.base.llms.types import ImageBlock, TextBlock

    reply = bound.call(arguments)
    blocks: list[Any] = []
    for part in reply.parts:
        if part.kind == "image":
            blocks.append(ImageBlock(image=base64.b64decode(part.data), image_mimetype=part.mime_type))
        else:
            blocks.append(TextBlock(text=part.text))
    return blocks or [TextBlock(text="")]


def _tool(bound: Bound) -> FunctionTool:
    from llama_index.core.tools import FunctionTool

    def run(**arguments: Any) -> Any:
        return _run(bound, arguments)

    async def arun(**arguments: Any) -> Any:
        return await asyncio.to_thread(_run, bound, arguments)

    metadata = _metadata_class()(name=bound.name, description=bound.description, fn_schema=None,
                                 json_schema=bound.schema)
    return FunctionTool(fn=run, async_fn=arun, metadata=metadata)


def tools(source: ToolSource, *, timeout: Any = DEFAULT, timeouts: Mapping[str, Any] | None = None) -> list[FunctionTool]:
    """LlamaIndex tools for every tool of ``source`` (a ``Client``, ``ClientGroup`` or tool
    list); ``timeout`` bounds each call, ``timeouts`` maps a tool's name to its own."""
    return [_tool(b) for b in bind(source, timeout=timeout, timeouts=timeouts)]
