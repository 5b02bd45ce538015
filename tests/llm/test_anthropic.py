"""Anthropic Messages API formats: tool definitions and tool_use blocks, on recorded payloads."""

from __future__ import annotations

from mcpclient.llm import anthropic

from .conftest import PNG, fixture


def test_tools_have_name_description_and_input_schema(calc):
    _, _, tools = calc
    definitions = anthropic.tools(tools)
    assert definitions[0] == {
        "name": "add",
        "description": "Add two numbers.",
        "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                         "required": ["a", "b"]},
    }
    assert definitions[1]["name"] == "files_read"


def test_tool_use_blocks_answer_with_tool_result_blocks(calc):
    fake, _, tools = calc
    results = anthropic.run_tool_uses(tools, fixture("anthropic_message_tool_use.json"))
    assert results == [
        {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
         "content": [{"type": "text", "text": "5"}], "is_error": False},
        {"type": "tool_result", "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
         "content": [{"type": "text", "text": "the logo:"},
                     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}],
         "is_error": False},
        {"type": "tool_result", "tool_use_id": "toolu_01Ne5Ksv6s2SJ1PNSanDqsBw",
         "content": [{"type": "text", "text": "the disk is full"}], "is_error": True},
    ]
    assert fake.tool_calls == [("add", {"a": 2, "b": 3}), ("logo", {}), ("fail", {})]


def test_a_message_without_tool_use_runs_nothing(calc):
    fake, _, tools = calc
    assert anthropic.run_tool_uses(tools, fixture("anthropic_message_text_only.json")) == []
    assert fake.tool_calls == []


def test_a_content_list_is_accepted_and_an_unknown_tool_is_an_error_result(calc):
    _, _, tools = calc
    (result,) = anthropic.run_tool_uses(tools, [{"type": "tool_use", "id": "toolu_x", "name": "nope", "input": {}}])
    assert result["is_error"] is True
    assert "there is no tool named 'nope'" in result["content"][0]["text"]
