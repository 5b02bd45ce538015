"""A sampling request in each LLM API's request shape, and each API's answer as a
``CreateMessageResult``. Plain dicts only: the SDK client sends them."""

from __future__ import annotations

import base64
import json
from typing import Any

from .. import types as t
from .._core.exceptions import RPCError

__all__ = ["anthropic_answer", "anthropic_request", "chat_answer", "chat_request", "genai_answer", "genai_request",
           "responses_answer", "responses_request"]


def _blocks(message: t.SamplingMessage) -> list[dict[str, Any]]:
    content = message.content
    items = content if isinstance(content, list) else [content]
    return [c for c in items if isinstance(c, dict)]


def _refuse(what: str) -> RPCError:
    return RPCError(RPCError.INVALID_PARAMS, what)


def _result_text(block: dict[str, Any]) -> str:
    parts = block.get("content") or []
    parts = parts if isinstance(parts, list) else [parts]
    return "\n".join(p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text")


def _choice(request: t.CreateMessageRequest) -> str | None:
    mode = request.tool_choice.get("mode") if isinstance(request.tool_choice, dict) else None
    return mode if mode in ("auto", "required", "none") else None


def _result(content: list[dict[str, Any]], model: str, stop: str | None) -> t.CreateMessageResult:
    body: Any = content[0] if len(content) == 1 else content
    return t.CreateMessageResult(content=body, model=model, role="assistant", stop_reason=stop)


def _tool_use(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            arguments = {"_raw": arguments}
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments or {}}


# -- OpenAI Chat Completions ---------------------------------------------------------------

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def _chat_part(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block.get("text", "")}
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": f"data:{block.get('mimeType')};base64,{block.get('data')}"}}
    if kind == "audio":
        fmt = _AUDIO_FORMATS.get(str(block.get("mimeType")))
        if fmt is None:
            raise _refuse(f"Chat Completions takes wav or mp3 audio, not {block.get('mimeType')}")
        return {"type": "input_audio", "input_audio": {"data": block.get("data"), "format": fmt}}
    raise _refuse(f"Chat Completions cannot take {kind!r} content here")


def chat_request(request: t.CreateMessageRequest, model: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": "system", "content": request.system_prompt})
    for message in request.messages:
        blocks = _blocks(message)
        for block in blocks:
            if block.get("type") == "tool_result":
                messages.append({"role": "tool", "tool_call_id": block.get("toolUseId"), "content": _result_text(block)})
        calls = [{"id": b.get("id"), "type": "function",
                  "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input") or {})}}
                 for b in blocks if b.get("type") == "tool_use"]
        rest = [b for b in blocks if b.get("type") not in ("tool_use", "tool_result")]
        if message.role == "assistant":
            text = "".join(b.get("text", "") for b in rest if b.get("type") == "text")
            if rest or calls:
                messages.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
        elif rest:
            messages.append({"role": "user", "content": [_chat_part(b) for b in rest]})
    body: dict[str, Any] = {"model": model, "messages": messages, "max_completion_tokens": request.max_tokens}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop_sequences:
        body["stop"] = request.stop_sequences
    if isinstance(request.metadata, dict) and request.metadata:
        body["metadata"] = {str(k): str(v) for k, v in request.metadata.items()}
    if request.tools:
        body["tools"] = [{"type": "function", "function": {"name": d.get("name"), "description": d.get("description", ""),
                                                           "parameters": d.get("inputSchema") or {"type": "object"}}}
                         for d in request.tools if isinstance(d, dict)]
        if _choice(request):
            body["tool_choice"] = _choice(request)
    return body


_CHAT_STOP = {"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse", "function_call": "toolUse"}


def chat_answer(reply: Any, model: str) -> t.CreateMessageResult:
    choice = reply["choices"][0]
    message = choice.get("message") or {}
    content: list[dict[str, Any]] = []
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        content.append(_tool_use(call.get("id", ""), function.get("name", ""), function.get("arguments")))
    reason = choice.get("finish_reason")
    return _result(content or [{"type": "text", "text": ""}], reply.get("model") or model, _CHAT_STOP.get(reason, reason))


# -- OpenAI Responses API -------------------------------------------------------------------


def responses_request(request: t.CreateMessageRequest, model: str) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for message in request.messages:
        parts: list[dict[str, Any]] = []
        for block in _blocks(message):
            kind = block.get("type")
            if kind == "tool_use":
                items.append({"type": "function_call", "call_id": block.get("id"), "name": block.get("name"),
                              "arguments": json.dumps(block.get("input") or {})})
            elif kind == "tool_result":
                items.append({"type": "function_call_output", "call_id": block.get("toolUseId"),
                              "output": _result_text(block)})
            elif kind == "text":
                parts.append({"type": "output_text" if message.role == "assistant" else "input_text",
                              "text": block.get("text", "")})
            elif kind == "image" and message.role != "assistant":
                parts.append({"type": "input_image", "image_url": f"data:{block.get('mimeType')};base64,{block.get('data')}"})
            else:
                raise _refuse(f"the Responses API cannot take {kind!r} content in a {message.role} message")
        if parts:
            items.append({"role": message.role, "content": parts})
    body: dict[str, Any] = {"model": model, "input": items, "max_output_tokens": request.max_tokens}
    if request.system_prompt:
        body["instructions"] = request.system_prompt
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop_sequences:
        raise _refuse("the Responses API has no stop sequences")
    if isinstance(request.metadata, dict) and request.metadata:
        body["metadata"] = {str(k): str(v) for k, v in request.metadata.items()}
    if request.tools:
        body["tools"] = [{"type": "function", "name": d.get("name"), "description": d.get("description", ""),
                          "parameters": d.get("inputSchema") or {"type": "object"}, "strict": False}
                         for d in request.tools if isinstance(d, dict)]
        if _choice(request):
            body["tool_choice"] = _choice(request)
    return body


def responses_answer(reply: Any, model: str) -> t.CreateMessageResult:
    content: list[dict[str, Any]] = []
    for item in reply.get("output") or []:
        if item.get("type") == "message":
            text = "".join(p.get("text", "") for p in item.get("content") or [] if p.get("type") == "output_text")
            content.append({"type": "text", "text": text})
        elif item.get("type") == "function_call":
            content.append(_tool_use(item.get("call_id", ""), item.get("name", ""), item.get("arguments")))
    details = reply.get("incomplete_details") or {}
    if any(c["type"] == "tool_use" for c in content):
        stop = "toolUse"
    elif reply.get("status") == "incomplete" and details.get("reason") == "max_output_tokens":
        stop = "maxTokens"
    else:
        stop = "endTurn"
    return _result(content or [{"type": "text", "text": ""}], reply.get("model") or model, stop)


# -- Anthropic Messages API -----------------------------------------------------------------


def _anthropic_block(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block.get("text", "")}
    if kind == "image":
        return {"type": "image", "source": {"type": "base64", "media_type": block.get("mimeType"), "data": block.get("data")}}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.get("id"), "name": block.get("name"), "input": block.get("input") or {}}
    if kind == "tool_result":
        return {"type": "tool_result", "tool_use_id": block.get("toolUseId"),
                "content": [{"type": "text", "text": _result_text(block)}], "is_error": bool(block.get("isError"))}
    raise _refuse(f"the Anthropic Messages API cannot take {kind!r} content")


def anthropic_request(request: t.CreateMessageRequest, model: str) -> dict[str, Any]:
    messages = [{"role": m.role, "content": [_anthropic_block(b) for b in _blocks(m)]} for m in request.messages]
    body: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": request.max_tokens}
    if request.system_prompt:
        body["system"] = request.system_prompt
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop_sequences:
        body["stop_sequences"] = request.stop_sequences
    if isinstance(request.metadata, dict) and isinstance(request.metadata.get("user_id"), str):
        body["metadata"] = {"user_id": request.metadata["user_id"]}  # the only field the API takes
    if request.tools:
        body["tools"] = [{"name": d.get("name"), "description": d.get("description", ""),
                          "input_schema": d.get("inputSchema") or {"type": "object"}}
                         for d in request.tools if isinstance(d, dict)]
        choice = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}.get(_choice(request) or "")
        if choice:
            body["tool_choice"] = choice
    return body


_ANTHROPIC_STOP = {"end_turn": "endTurn", "stop_sequence": "stopSequence", "max_tokens": "maxTokens",
                   "tool_use": "toolUse"}


def anthropic_answer(reply: Any, model: str) -> t.CreateMessageResult:
    content: list[dict[str, Any]] = []
    for block in reply.get("content") or []:
        if block.get("type") == "text":
            content.append({"type": "text", "text": block.get("text", "")})
        elif block.get("type") == "tool_use":
            content.append(_tool_use(block.get("id", ""), block.get("name", ""), block.get("input")))
    reason = reply.get("stop_reason")
    return _result(content or [{"type": "text", "text": ""}], reply.get("model") or model,
                   _ANTHROPIC_STOP.get(reason, reason))


# -- Google GenAI (Gemini API, Vertex AI) -----------------------------------------------------


def _genai_part(block: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"text": block.get("text", "")}
    if kind in ("image", "audio"):
        try:  # the SDK takes bytes (and encodes them itself)
            data = base64.b64decode(str(block.get("data") or ""), validate=True)
        except ValueError as exc:
            raise _refuse(f"the {kind} content's data is not base64: {exc}") from exc
        return {"inline_data": {"mime_type": block.get("mimeType"), "data": data}}
    if kind == "tool_use":
        names[str(block.get("id"))] = str(block.get("name"))
        return {"function_call": {"id": block.get("id"), "name": block.get("name"), "args": block.get("input") or {}}}
    if kind == "tool_result":
        call_id = str(block.get("toolUseId"))
        if call_id not in names:
            raise _refuse(f"the tool result {call_id!r} answers no tool use of the conversation (Gemini needs its name)")
        key = "error" if block.get("isError") else "output"
        return {"function_response": {"id": call_id, "name": names[call_id], "response": {key: _result_text(block)}}}
    raise _refuse(f"the Google GenAI API cannot take {kind!r} content")


def genai_request(request: t.CreateMessageRequest, model: str) -> dict[str, Any]:
    """``client.models.generate_content``'s keywords: ``model``, ``contents``, ``config``."""
    names: dict[str, str] = {}  # tool use id -> the function's name, which a result must repeat
    contents = [{"role": "model" if m.role == "assistant" else "user", "parts": [_genai_part(b, names) for b in _blocks(m)]}
                for m in request.messages]
    config: dict[str, Any] = {"max_output_tokens": request.max_tokens}
    if request.system_prompt:
        config["system_instruction"] = request.system_prompt
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.stop_sequences:
        config["stop_sequences"] = request.stop_sequences
    if request.tools:
        config["tools"] = [{"function_declarations": [
            {"name": d.get("name"), "description": d.get("description", ""),
             "parameters_json_schema": d.get("inputSchema") or {"type": "object"}}
            for d in request.tools if isinstance(d, dict)]}]
        mode = {"auto": "AUTO", "required": "ANY", "none": "NONE"}.get(_choice(request) or "")
        if mode:
            config["tool_config"] = {"function_calling_config": {"mode": mode}}
    return {"model": model, "contents": contents, "config": config}


_GENAI_STOP = {"STOP": "endTurn", "MAX_TOKENS": "maxTokens"}


def genai_answer(reply: Any, model: str) -> t.CreateMessageResult:
    candidates = reply.get("candidates") or []
    if not candidates:
        feedback = reply.get("prompt_feedback") or {}
        reason = _enum(feedback.get("block_reason")) or "no candidate"
        raise RPCError(RPCError.INTERNAL_ERROR, f"the LLM API gave no answer ({reason})", {"blockReason": reason})
    candidate = candidates[0]
    content: list[dict[str, Any]] = []
    for number, part in enumerate((candidate.get("content") or {}).get("parts") or []):
        if part.get("thought"):
            continue  # a thinking model's summary of its reasoning, not its answer
        if part.get("text") is not None:
            content.append({"type": "text", "text": part["text"]})
        elif part.get("function_call"):
            call = part["function_call"]
            content.append(_tool_use(call.get("id") or f"call_{number}", call.get("name", ""), call.get("args")))
    finish = _enum(candidate.get("finish_reason"))
    stop = "toolUse" if any(c["type"] == "tool_use" for c in content) else _GENAI_STOP.get(finish or "", finish)
    return _result(content or [{"type": "text", "text": ""}], reply.get("model_version") or model, stop)


def _enum(value: Any) -> str | None:
    """An SDK enum member (``FinishReason.STOP``) or its string, as the string."""
    value = getattr(value, "value", value)
    return value if isinstance(value, str) else None
