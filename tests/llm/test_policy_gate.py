"""The policy gate under the LLM tool formats and ``mcpclient.tools()``: a call the policy
denies is a failed tool call the model reads (or, from ``Tool.execute``, a ``ToolCallDenied``
a tool loop records), the next call still runs, and the official-SDK policy server
(tests/servers/sdk_policy_server.py) never sees the refused one. The model's turns are the
OpenAI and Anthropic SDKs' own response objects, built as their clients parse a reply."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mcpclient
from mcpclient import ClientGroup, Plugins, ToolCallDenied
from mcpclient.llm import anthropic, openai
from mcpclient.policy import Policy, Rule

from tests.conftest import SERVERS

pytestmark = pytest.mark.timeout(60)

POLICY_SERVER = [sys.executable, str(SERVERS / "sdk_policy_server.py")]
REFUSED = "refused by the policy"


def policy() -> Policy:
    return Policy([Rule("allow", annotations={"readOnlyHint": True}), Rule("deny", tool="delete_all", name="no deletes")])


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def gated(markers: Path):
    with mcpclient.connect([*POLICY_SERVER, "--markers", str(markers)],
                           plugins=mcpclient.Plugins(policy=policy()), protocol="legacy",
                           timeout=30) as client:
        yield client


def reached(markers: Path) -> list[str]:
    """The calls that reached the server, in order, as it wrote them down itself."""
    log = markers / "calls.log"
    return log.read_text().split() if log.exists() else []


@pytest.mark.parametrize("parallel", [False, True])
def test_openai_chat_a_denied_call_is_an_error_tool_message(gated, markers, parallel):
    pytest.importorskip("openai")  # the frameworks extra
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate({
        "id": "r1", "object": "chat.completion", "created": 0, "model": "m", "choices": [{
            "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "delete_all", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}}]}}]})
    denied, read = openai.run_chat_tool_calls(mcpclient.tools(gated), completion, parallel=parallel)
    assert denied["role"] == "tool" and denied["tool_call_id"] == "c1"
    assert denied["content"].startswith("Error: ") and REFUSED in denied["content"] and "no deletes" in denied["content"]
    assert (read["tool_call_id"], read["content"]) == ("c2", "read a")
    assert reached(markers) == ["read_file"]


def test_openai_responses_a_denied_call_is_an_error_output(gated, markers):
    pytest.importorskip("openai")  # the frameworks extra
    from openai.types.responses import Response

    response = Response.model_validate({
        "id": "r1", "object": "response", "created_at": 0, "model": "m", "parallel_tool_calls": True,
        "tool_choice": "auto", "tools": [], "output": [
            {"type": "function_call", "id": "f1", "call_id": "c1", "name": "delete_all", "arguments": "{}"},
            {"type": "function_call", "id": "f2", "call_id": "c2", "name": "read_file", "arguments": '{"path": "a"}'}]})
    denied, read = openai.run_responses_calls(gated, response)
    assert denied["type"] == "function_call_output" and denied["call_id"] == "c1"
    assert denied["output"].startswith("Error: ") and REFUSED in denied["output"]
    assert read["output"] == "read a"
    assert reached(markers) == ["read_file"]


def test_anthropic_a_denied_call_is_an_error_tool_result(gated, markers):
    pytest.importorskip("anthropic")  # the frameworks extra
    from anthropic.types import Message

    message = Message.model_validate({
        "id": "m1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1}, "content": [
            {"type": "tool_use", "id": "u1", "name": "delete_all", "input": {}},
            {"type": "tool_use", "id": "u2", "name": "read_file", "input": {"path": "a"}}]})
    denied, read = anthropic.run_tool_uses(gated, message)
    assert denied["type"] == "tool_result" and denied["tool_use_id"] == "u1" and denied["is_error"] is True
    assert REFUSED in denied["content"][0]["text"] and "no deletes" in denied["content"][0]["text"]
    assert read["is_error"] is False and read["content"] == [{"type": "text", "text": "read a"}]
    assert reached(markers) == ["read_file"]


def test_tools_execute_raises_tool_call_denied_and_the_loop_goes_on(gated, markers):
    tools = {tool.name: tool for tool in mcpclient.tools(gated)}
    with pytest.raises(ToolCallDenied) as caught:
        tools["delete_all"].execute("{}")
    assert isinstance(caught.value, mcpclient.MCPError)  # what a tool loop records as a failed call
    assert caught.value.rule == "no deletes" and caught.value.tool == "delete_all"
    assert tools["read_file"].execute(json.dumps({"path": "a"})) == "read a"
    assert reached(markers) == ["read_file"]


def test_a_groups_tools_in_the_formats_are_gated_per_server(markers):
    group_policy = Policy([Rule("allow", annotations={"readOnlyHint": True}),
                           Rule("deny", server="fs", tool="delete_all", name="no deletes on fs")])
    with ClientGroup({"fs": [*POLICY_SERVER, "--markers", str(markers)]}, plugins=Plugins(policy=group_policy),
                     protocol="legacy", timeout=30) as group:
        tools = group.tools()
        denied, read = anthropic.run_tool_uses(tools, [
            {"type": "tool_use", "id": "u1", "name": "fs__delete_all", "input": {}},
            {"type": "tool_use", "id": "u2", "name": "fs__read_file", "input": {"path": "b"}}])
        [chat] = openai.run_chat_tool_calls(tools, {"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "fs__delete_all", "arguments": "{}"}}]})
    assert denied["is_error"] is True and "no deletes on fs" in denied["content"][0]["text"]
    assert read["content"] == [{"type": "text", "text": "read b"}]
    assert REFUSED in chat["content"]
    assert reached(markers) == ["read_file"]
