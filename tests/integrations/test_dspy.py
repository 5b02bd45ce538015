"""DSPy: the adapter's tools inside a real ``dspy.ReAct`` program, driven by DSPy's own
``DummyLM`` (scripted answers through DSPy's real adapter), against real MCP servers."""

from __future__ import annotations

import pytest

dspy = pytest.importorskip("dspy")

from dspy.utils.dummies import DummyLM  # noqa: E402

from mcpclient.integrations import dspy as mcp_dspy  # noqa: E402


def react(tools, steps):
    lm = DummyLM([*steps, {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}},
                  {"reasoning": "read the observations", "answer": "finished"}])
    with dspy.context(lm=lm):
        return dspy.ReAct("question -> answer", tools=tools, max_iters=5)(question="go")


def test_react_calls_the_servers_tools(demo):
    tools = mcp_dspy.tools(demo)
    assert sorted(tool.name for tool in tools) == ["add", "shout"]
    add = next(tool for tool in tools if tool.name == "add")
    assert add.args == {"a": {"type": "number", "description": "The first number"},
                        "b": {"type": "number", "description": "The second number"}}
    prediction = react(tools, [{"next_thought": "add them", "next_tool_name": "add", "next_tool_args": {"a": 2, "b": 40}},
                               {"next_thought": "shout", "next_tool_name": "shout", "next_tool_args": {"text": "hi"}}])
    assert prediction.trajectory["observation_0"] == "42"
    assert prediction.trajectory["observation_1"] == "HI"
    assert prediction.answer == "finished"


def test_a_failed_tool_is_an_observation_the_model_sees(sdk):
    tools = mcp_dspy.tools(sdk)
    prediction = react(tools, [{"next_thought": "try", "next_tool_name": "fail", "next_tool_args": {}}])
    assert "this tool always fails" in prediction.trajectory["observation_0"]


def test_arguments_are_checked_against_the_schema_before_the_call(demo):
    add = next(tool for tool in mcp_dspy.tools(demo) if tool.name == "add")
    assert add(a=1, b=2) == "3"
    with pytest.raises(ValueError, match="Arg a is invalid"):
        add(a="one", b=2)


def test_a_group_routes_each_tool_to_its_server(group):
    tools = {tool.name: tool for tool in mcp_dspy.tools(group)}
    assert sorted(tools) == ["math__add", "math__shout", "text__add", "text__shout"]
    assert tools["text__shout"](text="x") == "X"


def test_a_call_the_policy_denies_is_an_observation_and_never_sent(gated):
    from .conftest import REFUSED, reached

    prediction = react(mcp_dspy.tools(gated), [
        {"next_thought": "clean up", "next_tool_name": "delete_all", "next_tool_args": {}},
        {"next_thought": "read instead", "next_tool_name": "read_file", "next_tool_args": {"path": "a"}}])
    denied = prediction.trajectory["observation_0"]
    assert REFUSED in denied and "no deletes" in denied
    assert prediction.trajectory["observation_1"] == "read a"  # the program went on after the refusal
    assert prediction.answer == "finished"
    assert reached(gated) == {"read_file": 1}
