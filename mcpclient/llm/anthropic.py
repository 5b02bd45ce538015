"""MCP tools in Anthropic's Messages API format (no SDK needed)::

    tools = mcpclient.tools(client)
    reply = anthropic_client.messages.create(model=..., max_tokens=1024, messages=messages,
                                             tools=mcpclient.llm.anthropic.tools(tools))
    messages.append({"role": "assistant", "content": reply.content})
    messages.append({"role": "user", "content": mcpclient.llm.anthropic.run_tool_uses(tools, reply)})

Tool names are sanitized to what the API accepts (``^[a-zA-Z0-9_-]{1,64}$``) and mapped back
when calls are run; pass the same ``tools`` list to both sides. Tools an MCP App view
alone may call (visibility without "model") are never offered: ``mcpclient.tools`` leaves them out. Text and images go back as
``tool_result`` content blocks, with ``is_error`` set for failures the model should see.
"""

from __future__ import annotations

from typing import Any

from ._common import Outcome, ToolSource, as_dict, index, parameters, resolve, run_calls

__all__ = ["run_tool_uses", "tools"]


def tools(source: ToolSource) -> list[dict[str, Any]]:
    """Tool definitions: ``{"name", "description", "input_schema"}``."""
    return [
        {"name": name, "description": tool.description, "input_schema": parameters(tool)}
        for name, tool in index(resolve(source)).items()
    ]


def _tool_uses(message: Any) -> list[tuple[str, str, Any]]:
    message = as_dict(message)
    blocks = message.get("content", []) if isinstance(message, dict) else message
    found = []
    for block in blocks or []:
        block = as_dict(block)
        if isinstance(block, dict) and block.get("type") == "tool_use":
            found.append((block["id"], block.get("name", ""), block.get("input")))
    return found


def _tool_result(outcome: Outcome) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for part in outcome.parts:
        if part.kind == "image":
            content.append({"type": "image", "source": {"type": "base64", "media_type": part.mime_type, "data": part.data}})
        elif part.text:
            content.append({"type": "text", "text": part.text})
    return {"type": "tool_result", "tool_use_id": outcome.call_id, "content": content, "is_error": outcome.is_error}


def run_tool_uses(
    source: ToolSource, message: Any, *, timeout: float | None = None, parallel: bool = False
) -> list[dict[str, Any]]:
    """Run the ``tool_use`` blocks of an assistant message; return one ``tool_result`` block
    each, to send back as the content of the next ``user`` message.

    ``message`` is the whole message (dict or SDK object) or its ``content`` list.
    """
    return run_calls(_tool_uses(message), source, _tool_result, timeout=timeout, parallel=parallel)
