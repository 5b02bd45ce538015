"""LangChain: the adapter's tools inside LangChain's own agent (``create_agent``), driven by
LangChain's fake chat model, against real MCP servers."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402

from mcpclient.integrations import langchain as mcp_langchain  # noqa: E402
from tests.helpers import RELEASED_WITHIN  # noqa: E402


class ToolCallingFakeModel(GenericFakeChatModel):
    """LangChain's fake chat model, scripted, accepting ``bind_tools`` like a real one and
    recording the tool definitions it was given."""

    bound: list = []

    def bind_tools(self, tools, **kwargs):
        from langchain_core.utils.function_calling import convert_to_openai_tool

        self.bound.extend(convert_to_openai_tool(t) for t in tools)
        return self


def call(name, args, call_id="call_1"):
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def run_agent(tools, script, prompt="go"):
    model = ToolCallingFakeModel(messages=iter(script))
    model.bound = []
    agent = create_agent(model, tools)
    state = agent.invoke({"messages": [HumanMessage(prompt)]})
    return model, [m for m in state["messages"] if isinstance(m, ToolMessage)]


def test_agent_calls_the_demo_server_and_sees_its_result(demo):
    tools = mcp_langchain.tools(demo)
    model, results = run_agent(tools, [call("add", {"a": 2, "b": 40}), AIMessage(content="done")])
    assert [r.content for r in results] == ["42"]
    assert results[0].status == "success"
    assert results[0].artifact.text == "42"  # the whole ToolResult rides along
    # The model was offered the server's schema, verbatim.
    add = next(t for t in model.bound if t["function"]["name"] == "add")
    assert add["function"]["parameters"]["properties"]["a"] == {"type": "number", "description": "The first number"}
    assert add["function"]["parameters"]["required"] == ["a", "b"]


def test_group_prefixed_names_route_to_the_right_server(group):
    tools = mcp_langchain.tools(group)
    assert {t.name for t in tools} == {"math__add", "math__shout", "text__add", "text__shout"}
    _, results = run_agent(tools, [call("text__shout", {"text": "hi"}), AIMessage(content="done")])
    assert [r.content for r in results] == ["HI"]


def test_tool_errors_become_error_tool_messages(sdk):
    tools = mcp_langchain.tools(sdk)
    _, results = run_agent(tools, [call("fail", {}, "c1"), call("add", {"a": "x"}, "c2"), AIMessage(content="ok")])
    assert [r.status for r in results] == ["error", "error"]
    assert "this tool always fails" in results[0].content
    assert "add" in results[1].content  # the server's invalid-arguments reply, for the model to fix


def test_images_become_image_blocks(sdk):
    _, results = run_agent(mcp_langchain.tools(sdk), [call("image", {}), AIMessage(content="ok")])
    (block,) = results[0].content
    assert block["type"] == "image" and block["mime_type"] == "image/png" and block["base64"].startswith("iVBOR")


def test_per_tool_timeout_is_an_error_result(sdk):
    tools = mcp_langchain.tools(sdk, timeouts={"slow": 0.3})
    started = time.monotonic()
    _, results = run_agent(tools, [call("slow", {"seconds": 30, "steps": 1}), AIMessage(content="ok")])
    assert time.monotonic() - started < 0.3 + RELEASED_WITHIN  # (the tool runs 30 s)
    assert results[0].status == "error" and "within 0.3s" in results[0].content


def test_unknown_timeout_name_is_refused(demo):
    with pytest.raises(ValueError, match="nope"):
        mcp_langchain.tools(demo, timeouts={"nope": 1})


def test_threads_share_one_tool(demo):
    (add,) = [t for t in mcp_langchain.tools(demo) if t.name == "add"]
    results: dict[int, object] = {}

    def work(i):
        results[i] = add.invoke({"a": i, "b": 1000})

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert results == {i: str(i + 1000) for i in range(8)}


def test_a_call_the_policy_denies_is_an_error_tool_message_and_never_sent(gated):
    from .conftest import REFUSED, reached

    _, results = run_agent(mcp_langchain.tools(gated), [call("delete_all", {}, "c1"), call("read_file", {"path": "a"}, "c2"),
                                                        AIMessage(content="done")])
    denied, read = results
    assert denied.status == "error" and REFUSED in denied.content and "no deletes" in denied.content
    assert (read.status, read.content) == ("success", "read a")  # the agent went on after the refusal
    assert reached(gated) == {"read_file": 1}
