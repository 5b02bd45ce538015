"""OpenAI Agents SDK: the adapter's tools inside ``Runner.run_sync``, driven by a fake model
written against the SDK's ``Model`` interface, against real MCP servers."""

from __future__ import annotations

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

from mcpclient.integrations import openai_agents as mcp_agents  # noqa: E402


class ScriptedModel(Model):
    """Asks for ``calls`` first, then answers with every function call output it was sent."""

    def __init__(self, *calls):
        self.calls = calls
        self.offered = {}

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, **kwargs):
        for tool in tools:
            self.offered[tool.name] = tool.params_json_schema
        outputs = [item["output"] for item in (input if isinstance(input, list) else [])
                   if isinstance(item, dict) and item.get("type") == "function_call_output"]
        if outputs:
            text = " | ".join(o if isinstance(o, str) else repr(o) for o in outputs)
            output = [ResponseOutputMessage(id="m1", type="message", role="assistant", status="completed",
                                            content=[ResponseOutputText(type="output_text", text=text, annotations=[])])]
        else:
            output = [ResponseFunctionToolCall(type="function_call", call_id=f"c{i}", name=name, arguments=args, id=f"f{i}")
                      for i, (name, args) in enumerate(self.calls)]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def run_agent(tools, *calls):
    model = ScriptedModel(*calls)
    agent = Agent(name="test", tools=tools, model=model)
    result = Runner.run_sync(agent, "go", run_config=RunConfig(tracing_disabled=True))
    return result.final_output, model


def test_runner_gets_the_servers_answers(demo):
    text, model = run_agent(mcp_agents.tools(demo), ("add", '{"a": 2, "b": 40}'), ("shout", '{"text": "hi"}'))
    assert sorted(text.split(" | ")) == ["42", "HI"]  # the framework may run the two calls at once
    assert model.offered["add"]["properties"]["a"] == {"type": "number", "description": "The first number"}


def test_group_prefixed_names(group):
    text, _ = run_agent(mcp_agents.tools(group), ("text__add", '{"a": 1, "b": 2}'))
    assert text == "3"


def test_failures_bad_json_and_timeouts_are_error_outputs(sdk):
    tools = mcp_agents.tools(sdk, timeouts={"slow": 0.3})
    text, _ = run_agent(tools, ("fail", "{}"), ("add", "{not json"), ("slow", '{"seconds": 5, "steps": 1}'))
    failed, bad_json, slow = text.split(" | ")
    assert failed.startswith("An error occurred while running the tool") and "this tool always fails" in failed
    assert "not valid JSON" in bad_json
    assert "within 0.3s" in slow


def test_images_are_image_outputs(sdk):
    text, _ = run_agent(mcp_agents.tools(sdk), ("image", "{}"))
    assert "input_image" in text and "data:image/png;base64,iVBOR" in text


def test_a_call_the_policy_denies_is_an_error_output_and_never_sent(gated):
    from .conftest import REFUSED, reached

    text, _ = run_agent(mcp_agents.tools(gated), ("delete_all", "{}"), ("read_file", '{"path": "a"}'))
    denied, read = text.split(" | ")
    assert denied.startswith("An error occurred while running the tool") and REFUSED in denied
    assert read == "read a"
    assert reached(gated) == {"read_file": 1}
