"""An LLM tool loop over MCP tools, in OpenAI's and Anthropic's formats, without an LLM SDK.

``openai_loop`` and ``anthropic_loop`` take ``model``: a function that receives the request
body (``messages``, ``tools``) and returns the response as a dict. With the real SDKs::

    from openai import OpenAI
    oa = OpenAI()
    answer = openai_loop(client, lambda **body: oa.chat.completions.create(model="gpt-4.1", **body).model_dump(), question)

    from anthropic import Anthropic
    an = Anthropic()
    answer = anthropic_loop(client, lambda **body: an.messages.create(
        model="claude-sonnet-4-5", max_tokens=1024, **body).model_dump(), question)

Run as a script, it uses stub models that ask for the demo server's ``add`` tool.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

import mcpclient
from mcpclient import Client, connect
from mcpclient.llm import anthropic, openai

DEMO_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "demo_server.py")]
Model = Callable[..., dict[str, Any]]


def openai_loop(client: Client, model: Model, question: str, max_turns: int = 8) -> str:
    """Ask ``question``; run the tools the model calls until it answers in text."""
    tools = mcpclient.tools(client)
    definitions = openai.chat_tools(tools)
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(max_turns):
        message = model(messages=messages, tools=definitions)["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            return str(message.get("content") or "")
        messages += openai.run_chat_tool_calls(tools, message)
    raise RuntimeError("the model kept calling tools")


def anthropic_loop(client: Client, model: Model, question: str, max_turns: int = 8) -> str:
    """The same loop in the Messages API's shapes."""
    tools = mcpclient.tools(client)
    definitions = anthropic.tools(tools)
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(max_turns):
        reply = model(messages=messages, tools=definitions)
        messages.append({"role": "assistant", "content": reply["content"]})
        if reply["stop_reason"] != "tool_use":
            return "".join(block["text"] for block in reply["content"] if block["type"] == "text")
        messages.append({"role": "user", "content": anthropic.run_tool_uses(tools, reply)})
    raise RuntimeError("the model kept calling tools")


def stub_openai(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Plays gpt: first calls ``add``, then answers with the tool's result."""
    last = messages[-1]
    if last["role"] == "tool":
        message = {"role": "assistant", "content": f"The sum is {last['content']}.", "refusal": None}
        finish = "stop"
    else:
        assert any(t["function"]["name"] == "add" for t in tools)
        message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [{
            "id": "call_stub_1", "type": "function",
            "function": {"name": "add", "arguments": json.dumps({"a": 2, "b": 40})}}]}
        finish = "tool_calls"
    return {"id": "chatcmpl-stub", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]}


def stub_anthropic(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Plays claude: first a ``tool_use`` of ``add``, then a text answer."""
    last = messages[-1]
    if isinstance(last["content"], list) and last["content"][0]["type"] == "tool_result":
        text = last["content"][0]["content"][0]["text"]
        content = [{"type": "text", "text": f"The sum is {text}."}]
        stop = "end_turn"
    else:
        assert any(t["name"] == "add" for t in tools)
        content = [{"type": "text", "text": "Let me add those."},
                   {"type": "tool_use", "id": "toolu_stub_1", "name": "add", "input": {"a": 2, "b": 40}}]
        stop = "tool_use"
    return {"id": "msg_stub", "type": "message", "role": "assistant", "model": "stub",
            "content": content, "stop_reason": stop, "stop_sequence": None}


def main() -> None:
    with connect(DEMO_SERVER, timeout=10) as client:
        print("openai:   ", openai_loop(client, stub_openai, "What is 2 + 40?"))
        print("anthropic:", anthropic_loop(client, stub_anthropic, "What is 2 + 40?"))


if __name__ == "__main__":
    main()
