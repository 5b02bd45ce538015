"""LlamaIndex: the adapter's tools inside LlamaIndex's ``FunctionAgent``, driven by its own
``MockFunctionCallingLLM`` with a scripted response generator, against real MCP servers."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402

from mcpclient.integrations import llamaindex as mcp_llamaindex  # noqa: E402


def run_agent(tools, *calls):
    """Make ``calls`` ((tool, kwargs) each) in the first turn, then answer with every tool
    message the LLM was sent; also return the tool definitions it was offered."""
    offered = {}

    def generate(messages, **kwargs):
        for tool in kwargs.get("tools") or []:
            offered[tool.metadata.name] = tool.metadata.to_openai_tool()["function"]["parameters"]
        results = [m.content for m in messages if m.role == MessageRole.TOOL]
        if results:
            return ChatMessage(role=MessageRole.ASSISTANT, content=" | ".join(results))
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[
            ToolCallBlock(tool_call_id=f"c{i}", tool_name=name, tool_kwargs=args) for i, (name, args) in enumerate(calls)
        ])

    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=generate), streaming=False)

    async def main():
        return await agent.run(user_msg="go")

    response = asyncio.run(main())
    return str(response), offered, response


def test_function_agent_gets_the_servers_answers(demo):
    text, offered, response = run_agent(mcp_llamaindex.tools(demo), ("add", {"a": 2, "b": 40}), ("shout", {"text": "hi"}))
    assert sorted(text.split(" | ")) == ["42", "HI"]  # the framework may run the two calls at once
    assert offered["add"]["properties"]["b"] == {"type": "number", "description": "The second number"}
    assert [c.tool_output.is_error for c in response.tool_calls] == [False, False]


def test_group_prefixed_names(group):
    text, _, _ = run_agent(mcp_llamaindex.tools(group), ("text__add", {"a": 1, "b": 2}))
    assert text == "3"


def test_failures_and_timeouts_are_error_outputs(sdk):
    tools = mcp_llamaindex.tools(sdk, timeouts={"slow": 0.3})
    text, _, response = run_agent(tools, ("fail", {}), ("slow", {"seconds": 5, "steps": 1}))
    assert [c.tool_output.is_error for c in response.tool_calls] == [True, True]
    assert "this tool always fails" in text and "within 0.3s" in text


def test_images_are_image_blocks(sdk):
    (image,) = [t for t in mcp_llamaindex.tools(sdk) if t.metadata.name == "image"]
    output = image.call()
    assert output.blocks[0].image_mimetype == "image/png"
    assert output.blocks[0].image.startswith(b"iVBORw0KGgo")  # the server's PNG (LlamaIndex keeps it base64)


def test_a_call_the_policy_denies_is_an_error_output_and_never_sent(gated):
    from .conftest import REFUSED, reached

    text, _, response = run_agent(mcp_llamaindex.tools(gated), ("delete_all", {}), ("read_file", {"path": "a"}))
    assert [c.tool_output.is_error for c in response.tool_calls] == [True, False]
    assert REFUSED in text and "no deletes" in text and "read a" in text
    assert reached(gated) == {"read_file": 1}
