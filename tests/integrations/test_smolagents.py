"""smolagents: the adapter's tools inside smolagents' ``ToolCallingAgent``, driven by a scripted
model written against smolagents' ``Model`` interface, against real MCP servers."""

from __future__ import annotations

import pytest

pytest.importorskip("smolagents")

from smolagents import ToolCallingAgent  # noqa: E402
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model  # noqa: E402

from mcpclient.integrations import smolagents as mcp_smolagents  # noqa: E402


class ScriptedModel(Model):
    """Makes one scripted tool call per step, then calls ``final_answer`` with every
    observation it was shown."""

    def __init__(self, calls):
        super().__init__(model_id="scripted")
        self.calls = list(calls)
        self.offered = {}

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
        from smolagents.models import get_tool_json_schema

        for tool in tools_to_call_from or []:
            self.offered[tool.name] = get_tool_json_schema(tool)["function"]["parameters"]
        if self.calls:
            name, args = self.calls.pop(0)
        else:
            seen = [_text(m) for m in messages if m.role == MessageRole.TOOL_RESPONSE]
            name, args = "final_answer", {"answer": " || ".join(seen)}
        call = ChatMessageToolCall(id=f"c{len(messages)}", type="function",
                                   function=ChatMessageToolCallFunction(name=name, arguments=args))
        return ChatMessage(role="assistant", content="", tool_calls=[call])


def _text(message):
    content = message.content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def test_tool_calling_agent_gets_the_servers_answers(demo):
    model = ScriptedModel([("add", {"a": 2, "b": 40}), ("shout", {"text": "hi"})])
    agent = ToolCallingAgent(tools=mcp_smolagents.tools(demo), model=model, max_steps=5, verbosity_level=0)
    answer = agent.run("go")
    assert answer == "Observation:\n42 || Observation:\nHI"
    assert model.offered["add"] == {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "number", "description": "The first number"},
        "b": {"type": "number", "description": "The second number"}}}


def test_group_names_are_identifiers_and_route(group):
    tools = mcp_smolagents.tools(group)
    assert sorted(t.name for t in tools) == ["math__add", "math__shout", "text__add", "text__shout"]
    agent = ToolCallingAgent(tools=tools, model=ScriptedModel([("text__shout", {"text": "x"})]), max_steps=3,
                             verbosity_level=0)
    assert agent.run("go") == "Observation:\nX"


def test_a_failing_tool_is_reported_to_the_model(sdk):
    tools = mcp_smolagents.tools(sdk, timeouts={"slow": 0.3})
    model = ScriptedModel([("fail", {}), ("slow", {"seconds": 5, "steps": 1})])
    agent = ToolCallingAgent(tools=tools, model=model, max_steps=5, verbosity_level=0)
    agent.run("go")
    errors = [str(step.error) for step in agent.memory.steps if getattr(step, "error", None)]
    assert any("this tool always fails" in e for e in errors)
    assert any("within 0.3s" in e for e in errors)


def test_inputs_keep_the_schema_and_mark_optional_arguments():
    schema = {"type": "object", "required": ["q"], "properties": {
        "q": {"type": "string", "minLength": 1},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "when": {"anyOf": [{"$ref": "#/$defs/date"}, {"type": "null"}]},
        "n": {"type": ["integer", "null"], "maximum": 3},
    }}
    assert mcp_smolagents.inputs(schema) == {
        "q": {"type": "string", "minLength": 1, "description": "q"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "description": "tags",
                 "nullable": True},
        "when": {"type": "any", "description": "when", "nullable": True},
        "n": {"type": ["integer"], "maximum": 3, "description": "n", "nullable": True},
    }


def test_a_call_the_policy_denies_is_reported_to_the_model_and_never_sent(gated):
    from .conftest import REFUSED, reached

    model = ScriptedModel([("delete_all", {})])
    agent = ToolCallingAgent(tools=mcp_smolagents.tools(gated), model=model, max_steps=5, verbosity_level=0)
    agent.run("go")
    errors = [str(step.error) for step in agent.memory.steps if getattr(step, "error", None)]
    assert any(REFUSED in e and "no deletes" in e for e in errors), errors
    assert reached(gated) == {}
