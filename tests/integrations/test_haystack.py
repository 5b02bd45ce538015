"""Haystack: the adapter's tools inside Haystack's ``Agent``, driven by a scripted chat
generator (a component written against Haystack's ChatGenerator protocol), against real MCP
servers."""

from __future__ import annotations

import pytest

pytest.importorskip("haystack")

from haystack import component  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.dataclasses import ChatMessage, ToolCall  # noqa: E402

from mcpclient.integrations import haystack as mcp_haystack  # noqa: E402


@component
class ScriptedChatGenerator:
    """Asks for ``calls`` first, then answers with every tool result it was sent."""

    def __init__(self, calls):
        self.calls = calls
        self.offered = {}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools=None, **kwargs):
        for tool in tools or []:
            self.offered[tool.name] = tool.parameters
        results = [r for m in messages for r in m.tool_call_results]
        if results:
            text = " | ".join(("ERROR " if r.error else "") + r.result for r in results)
            return {"replies": [ChatMessage.from_assistant(text)]}
        return {"replies": [ChatMessage.from_assistant(tool_calls=[
            ToolCall(id=f"c{i}", tool_name=name, arguments=args) for i, (name, args) in enumerate(self.calls)])]}


def run_agent(tools, *calls):
    generator = ScriptedChatGenerator(list(calls))
    agent = Agent(chat_generator=generator, tools=tools)
    agent.warm_up()
    result = agent.run(messages=[ChatMessage.from_user("go")])
    return result["last_message"].text, generator


def test_agent_runs_the_demo_servers_tools(demo):
    text, generator = run_agent(mcp_haystack.tools(demo), ("add", {"a": 2, "b": 40}), ("shout", {"text": "hi"}))
    assert sorted(text.split(" | ")) == ["42", "HI"]  # the framework may run the two calls at once
    assert generator.offered["add"]["properties"]["a"] == {"type": "number", "description": "The first number"}


def test_group_prefixed_names(group):
    text, _ = run_agent(mcp_haystack.tools(group), ("math__shout", {"text": "yo"}))
    assert text == "YO"


def test_failures_and_timeouts_are_error_results(sdk):
    tools = mcp_haystack.tools(sdk, timeouts={"slow": 0.3})
    text, _ = run_agent(tools, ("fail", {}), ("slow", {"seconds": 5, "steps": 1}))
    first, second = text.split(" | ")
    assert first.startswith("ERROR") and "this tool always fails" in first
    assert second.startswith("ERROR") and "within 0.3s" in second


def test_a_call_the_policy_denies_is_an_error_result_and_never_sent(gated):
    from .conftest import REFUSED, reached

    text, _ = run_agent(mcp_haystack.tools(gated), ("delete_all", {}), ("read_file", {"path": "a"}))
    results = sorted(text.split(" | "))
    assert results[0].startswith("ERROR") and REFUSED in results[0] and "no deletes" in results[0]
    assert results[1] == "read a"
    assert reached(gated) == {"read_file": 1}
