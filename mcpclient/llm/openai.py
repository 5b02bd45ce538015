"""MCP tools in OpenAI's formats: Chat Completions and the Responses API (no SDK needed).

Chat Completions::

    tools = mcpclient.tools(client)
    reply = openai_client.chat.completions.create(model=..., messages=messages,
                                                 tools=mcpclient.llm.openai.chat_tools(tools))
    message = reply.choices[0].message
    messages.append(message)
    messages += mcpclient.llm.openai.run_chat_tool_calls(tools, message)

Responses API::

    response = openai_client.responses.create(model=..., input=items,
                                              tools=mcpclient.llm.openai.responses_tools(tools))
    items += response.output
    items += mcpclient.llm.openai.run_responses_calls(tools, response)

Tool names are sanitized to what OpenAI accepts (``^[a-zA-Z0-9_-]{1,64}$``) and mapped back
when calls are run; pass the same ``tools`` list to both sides. Tools an MCP App view
alone may call (visibility without "model") are never offered: ``mcpclient.tools`` leaves them out. A call to an unknown tool, bad
JSON arguments, a JSON-RPC error or a tool that reports failure become an error result the
model can read (text starting with ``Error:``); a lost connection still raises.
"""

from __future__ import annotations

from typing import Any

from ._common import Outcome, ToolSource, as_dict, index, parameters, resolve, run_calls

__all__ = ["chat_tools", "responses_tools", "run_chat_tool_calls", "run_responses_calls"]


def chat_tools(source: ToolSource) -> list[dict[str, Any]]:
    """Tool definitions for Chat Completions: ``{"type": "function", "function": {...}}``."""
    return [
        {"type": "function", "function": {"name": name, "description": tool.description, "parameters": parameters(tool)}}
        for name, tool in index(resolve(source)).items()
    ]


def responses_tools(source: ToolSource) -> list[dict[str, Any]]:
    """Tool definitions for the Responses API: ``{"type": "function", "name": ..., ...}``.

    ``strict`` is set to false: MCP schemas rarely meet OpenAI's strict-mode rules.
    """
    return [
        {"type": "function", "name": name, "description": tool.description,
         "parameters": parameters(tool), "strict": False}
        for name, tool in index(resolve(source)).items()
    ]


def _chat_calls(message: Any) -> list[tuple[str, str, Any]]:
    message = as_dict(message)
    if isinstance(message, dict) and "choices" in message:  # a whole ChatCompletion
        message = message["choices"][0]["message"]
    calls = message.get("tool_calls") if isinstance(message, dict) else message
    found = []
    for call in calls or []:
        call = as_dict(call)
        if call.get("type", "function") != "function":
            continue
        function = call.get("function") or {}
        found.append((call["id"], function.get("name", ""), function.get("arguments")))
    return found


def _chat_message(outcome: Outcome) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": outcome.call_id, "content": outcome.text()}


def run_chat_tool_calls(
    source: ToolSource, message: Any, *, timeout: float | None = None, parallel: bool = False
) -> list[dict[str, Any]]:
    """Run the ``tool_calls`` of an assistant message; return one ``role: "tool"`` message each.

    ``message`` is the assistant message (dict or SDK object), a whole chat completion, or
    its ``tool_calls`` list. Chat tool messages carry text only, so images are described.
    ``parallel=True`` runs the calls at once on threads; results keep the calls' order.
    """
    return run_calls(_chat_calls(message), source, _chat_message, timeout=timeout, parallel=parallel)


def _responses_calls(response: Any) -> list[tuple[str, str, Any]]:
    response = as_dict(response)
    items = response.get("output", []) if isinstance(response, dict) else response
    found = []
    for item in items or []:
        item = as_dict(item)
        if isinstance(item, dict) and item.get("type") == "function_call":
            found.append((item["call_id"], item.get("name", ""), item.get("arguments")))
    return found


def _responses_output(outcome: Outcome) -> dict[str, Any]:
    output: Any
    if any(p.kind == "image" for p in outcome.parts):
        output = []
        if outcome.is_error:
            output.append({"type": "input_text", "text": "Error:"})
        for part in outcome.parts:
            if part.kind == "image":
                output.append({"type": "input_image", "image_url": f"data:{part.mime_type};base64,{part.data}"})
            else:
                output.append({"type": "input_text", "text": part.text})
    else:
        output = outcome.text()
    return {"type": "function_call_output", "call_id": outcome.call_id, "output": output}


def run_responses_calls(
    source: ToolSource, response: Any, *, timeout: float | None = None, parallel: bool = False
) -> list[dict[str, Any]]:
    """Run the ``function_call`` items of a Responses API output; return one
    ``function_call_output`` item each (text, or ``input_text``/``input_image`` parts when the
    tool returned images).

    ``response`` is the whole response (dict or SDK object) or its ``output`` list.
    """
    return run_calls(_responses_calls(response), source, _responses_output, timeout=timeout, parallel=parallel)
