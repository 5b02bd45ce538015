"""Pydantic AI: the adapter's tools inside ``Agent.run_sync``, driven by Pydantic AI's own
``FunctionModel`` and ``TestModel``, against real MCP servers."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

from mcpclient.integrations import pydantic_ai as mcp_pydantic_ai  # noqa: E402


def scripted(*calls):
    """A FunctionModel that makes ``calls`` (one list of (tool, args) per turn), then answers
    with every tool result it received, so the test sees exactly what reached the model."""
    seen: dict = {"tools": None, "returns": []}

    def model(messages, info):
        seen["tools"] = {t.name: t.parameters_json_schema for t in info.function_tools}
        turn = sum(isinstance(m, ModelResponse) for m in messages)
        for part in messages[-1].parts:
            if isinstance(part, (ToolReturnPart, RetryPromptPart)):
                seen["returns"].append(part)
        if turn < len(calls):
            return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"c{turn}{i}")
                                        for i, (name, args) in enumerate(calls[turn])])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(model), seen


def test_agent_run_gets_the_demo_servers_answer(demo):
    model, seen = scripted([("add", {"a": 2, "b": 40}), ("shout", {"text": "hey"})])
    agent = Agent(model, toolsets=[mcp_pydantic_ai.toolset(demo)])
    assert agent.run_sync("go").output == "done"
    assert [p.content for p in seen["returns"]] == ["42", "HEY"]
    assert seen["tools"]["add"]["properties"]["a"] == {"type": "number", "description": "The first number"}


def test_test_model_calls_every_tool_with_schema_valid_arguments(demo):
    agent = Agent(TestModel(), tools=mcp_pydantic_ai.tools(demo))
    output = agent.run_sync("go").output
    # TestModel sums up what each tool returned: both ran on the server.
    assert '"add"' in output and '"shout"' in output


def test_group_prefixed_names(group):
    model, seen = scripted([("math__add", {"a": 1, "b": 1}), ("text__shout", {"text": "x"})])
    Agent(model, tools=mcp_pydantic_ai.tools(group)).run_sync("go")
    assert [p.content for p in seen["returns"]] == ["2", "X"]


def test_arguments_the_server_refuses_ask_the_model_to_retry(demo):
    model, seen = scripted([("add", {"a": "x", "b": 1}), ("add", {"a": 1, "b": 1})])
    Agent(model, tools=mcp_pydantic_ai.tools(demo)).run_sync("go")
    retry, fixed = seen["returns"]
    assert retry.outcome == "retried" and "add needs numbers" in str(retry.content)
    assert fixed.content == "2"


def test_a_failing_tool_is_a_failed_result(sdk):
    model, seen = scripted([("fail", {})])
    Agent(model, tools=mcp_pydantic_ai.tools(sdk)).run_sync("go")
    (failed,) = seen["returns"]
    assert isinstance(failed, ToolReturnPart) and failed.outcome == "failed"
    assert "this tool always fails" in str(failed.content)


def test_timeout_is_a_failed_result(sdk):
    model, seen = scripted([("slow", {"seconds": 5, "steps": 1})])
    Agent(model, tools=mcp_pydantic_ai.tools(sdk, timeout=0.3)).run_sync("go")
    assert "within 0.3s" in str(seen["returns"][0].content)


def test_images_reach_the_model_as_binary_content(sdk):
    model, seen = scripted([("image", {})])
    result = Agent(model, tools=mcp_pydantic_ai.tools(sdk)).run_sync("go")
    dump = repr(result.all_messages())
    assert "BinaryContent" in dump and "image/png" in dump


def test_a_call_the_policy_denies_is_a_failed_result_and_never_sent(gated):
    from .conftest import REFUSED, reached

    model, seen = scripted([("delete_all", {})])
    Agent(model, tools=mcp_pydantic_ai.tools(gated)).run_sync("go")
    (denied,) = seen["returns"]
    assert isinstance(denied, ToolReturnPart) and denied.outcome == "failed"
    assert REFUSED in str(denied.content) and "no deletes" in str(denied.content)
    assert reached(gated) == {}
