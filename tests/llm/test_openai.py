"""OpenAI formats: tool definitions and tool calls, on recorded API payloads."""

from __future__ import annotations

import json

from mcpclient.llm import openai

from .conftest import PNG, fixture


def test_chat_tools_are_function_definitions_with_sanitized_names(calc):
    _, _, tools = calc
    definitions = openai.chat_tools(tools)
    assert definitions[0] == {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers.",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                           "required": ["a", "b"]},
        },
    }
    assert [d["function"]["name"] for d in definitions] == ["add", "files_read", "logo", "fail"]
    json.dumps(definitions)  # plain JSON, ready to send


def test_responses_tools_are_flat_function_definitions_not_strict(calc):
    _, _, tools = calc
    first = openai.responses_tools(tools)[0]
    assert first == {
        "type": "function",
        "name": "add",
        "description": "Add two numbers.",
        "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                       "required": ["a", "b"]},
        "strict": False,
    }


def test_chat_tool_calls_run_and_answer_with_tool_messages(calc):
    fake, _, tools = calc
    completion = fixture("openai_chat_completion_tool_calls.json")
    messages = openai.run_chat_tool_calls(tools, completion["choices"][0]["message"])
    assert messages == [
        {"role": "tool", "tool_call_id": "call_8Ql2VYd2mDk1uCXr3QbUZ7yT", "content": "5"},
        {"role": "tool", "tool_call_id": "call_Zc4P0sJm6wHnR9eKvB1tLx2A", "content": "contents of README.md"},
        {"role": "tool", "tool_call_id": "call_mE7yT3qWb5NvK0aHsD9gXc1R", "content": "the logo:\n[image image/png, 70 bytes]"},
    ]
    assert fake.tool_calls == [("add", {"a": 2, "b": 3}), ("files.read", {"path": "README.md"}), ("logo", {})]


def test_a_whole_chat_completion_is_accepted_and_parallel_keeps_the_order(calc):
    _, _, tools = calc
    messages = openai.run_chat_tool_calls(tools, fixture("openai_chat_completion_tool_calls.json"), parallel=True)
    assert [m["tool_call_id"] for m in messages] == [
        "call_8Ql2VYd2mDk1uCXr3QbUZ7yT", "call_Zc4P0sJm6wHnR9eKvB1tLx2A", "call_mE7yT3qWb5NvK0aHsD9gXc1R",
    ]


def test_unknown_tools_bad_json_and_failed_tools_become_error_messages(calc):
    fake, _, tools = calc
    messages = openai.run_chat_tool_calls(tools, fixture("openai_chat_completion_bad_calls.json"))
    unknown, bad_json, failed = (m["content"] for m in messages)
    assert unknown.startswith("Error: there is no tool named 'get_weather'; available tools: add, fail")
    assert bad_json.startswith("Error: the arguments for 'add' are not valid JSON")
    assert failed == "Error: the disk is full"
    assert fake.tool_calls == [("fail", {})]


def test_sdk_objects_are_accepted_through_model_dump(calc):
    _, _, tools = calc

    class SDKMessage:  # what the openai package returns: a pydantic model
        def __init__(self, data):
            self.data = data

        def model_dump(self, exclude_none=False):
            return self.data

    message = SDKMessage(fixture("openai_chat_completion_tool_calls.json")["choices"][0]["message"])
    assert openai.run_chat_tool_calls(tools, message)[0]["content"] == "5"


def test_responses_function_calls_answer_with_function_call_outputs(calc):
    _, _, tools = calc
    outputs = openai.run_responses_calls(tools, fixture("openai_responses_function_calls.json"))
    assert outputs == [
        {"type": "function_call_output", "call_id": "call_Jf2a8WkR3pLq9ZxV1mNc5TbY", "output": "42"},
        {"type": "function_call_output", "call_id": "call_Qw7eR4tY1uI0oP3aS6dF9gHj", "output": [
            {"type": "input_text", "text": "the logo:"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
        ]},
    ]


def test_the_output_list_alone_is_accepted_and_reasoning_items_are_skipped(calc):
    _, _, tools = calc
    output = fixture("openai_responses_function_calls.json")["output"]
    assert [o["call_id"] for o in openai.run_responses_calls(tools, output)] == [
        "call_Jf2a8WkR3pLq9ZxV1mNc5TbY", "call_Qw7eR4tY1uI0oP3aS6dF9gHj",
    ]


def test_a_group_is_a_tool_source_with_prefixed_names(calc):
    from mcpclient import ClientGroup
    from mcpclient.testing import FakeServer

    calc2 = FakeServer(name="calc")
    calc2.add_tool("files.read", result="x")
    other = FakeServer(name="other")
    other.add_tool("add", result="from other")
    with ClientGroup({"calc": calc2, "other": other}, timeout=5) as group:
        names = [d["function"]["name"] for d in openai.chat_tools(group)]
        assert names == ["calc__files_read", "other__add"]
        message = {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "other__add", "arguments": "{}"}}]}
        assert openai.run_chat_tool_calls(group.tools(), message)[0]["content"] == "from other"
