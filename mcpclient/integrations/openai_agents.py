"""MCP tools as OpenAI Agents SDK tools (``agents.FunctionTool``)::

    from agents import Agent, Runner
    from mcpclient.integrations import openai_agents as mcp_agents
    agent = Agent(name="assistant", tools=mcp_agents.tools(client))

The JSON Schema is ``params_json_schema``, verbatim, with ``strict_json_schema=False``: MCP
schemas rarely meet strict mode's rules (every property required, no open objects), and
rewriting them would change what the tool accepts. Text comes back as a string; a result with
images as ``ToolOutputText``/``ToolOutputImage`` items (data URLs). A failed tool, bad
arguments or a timeout come back as the SDK's own error text ("An error occurred while
running the tool. Please try again. Error: ..."), which is what its decorated tools do; a
closed client or a lost connection raises and ends the run. The blocking call runs on a worker
thread, keeping the event loop free.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, Mapping

from .._core.exceptions import ToolError
from .._core.timeouts import DEFAULT
from ..llm._common import ToolSource
from ._core import Bound, bind

if TYPE_CHECKING:
    from agents import FunctionTool

__all__ = ["tools"]


def _error(message: str) -> str:
    return f"An error occurred while running the tool. Please try again. Error: {message}"


def _run(bound: Bound, input_json: str) -> Any:
    from agents import ToolOutputImage, ToolOutputText

    try:
        arguments = json.loads(input_json) if input_json.strip() else {}
    except ValueError as exc:
        return _error(f"the arguments are not valid JSON: {exc}")
    if not isinstance(arguments, dict):
        return _error("the arguments must be a JSON object")
    try:
        reply = bound.call(arguments)
    except ToolError as exc:
        return _error(str(exc))
    if not reply.has_images:
        return reply.text
    return [
        ToolOutputImage(image_url=f"data:{p.mime_type};base64,{p.data}") if p.kind == "image"
        else ToolOutputText(text=p.text)
        for p in reply.parts
    ]


def _tool(bound: Bound) -> FunctionTool:
    from agents import FunctionTool

    async def invoke(context: Any, input_json: str) -> Any:
        return await asyncio.to_thread(_run, bound, input_json)

    return FunctionTool(name=bound.name, description=bound.description, params_json_schema=bound.schema,
                        on_invoke_tool=invoke, strict_json_schema=False)


def tools(source: ToolSource, *, timeout: Any = DEFAULT, timeouts: Mapping[str, Any] | None = None) -> list[FunctionTool]:
    """Agents SDK tools for every tool of ``source`` (a ``Client``, ``ClientGroup`` or tool
    list); ``timeout`` bounds each call, ``timeouts`` maps a tool's name to its own."""
    return [_tool(b) for b in bind(source, timeout=timeout, timeouts=timeouts)]
