"""The wire rules: camelCase, _meta, base64, content blocks; lenient in, strict out."""

from __future__ import annotations

import pytest

from mcpclient import types as t
from mcpclient._wire.converter import structure, unstructure, wire_name


@pytest.mark.parametrize(
    ("name", "wire"),
    [("input_schema", "inputSchema"), ("meta", "_meta"), ("uri_template", "uriTemplate"),
     ("is_error", "isError"), ("name", "name"), ("website_url", "websiteUrl")],
)
def test_wire_names(name, wire):
    assert wire_name(name) == wire


def test_unknown_fields_are_ignored_and_known_ones_renamed():
    tool = structure({"name": "x", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
                      "_meta": {"k": 1}, "fromTheFuture": True}, t.ToolDef)
    assert tool.output_schema == {"type": "object"}
    assert tool.meta == {"k": 1}


def test_opaque_json_is_passed_through_not_copied():
    schema = {"type": "object", "$defs": {"a": {"$ref": "#/$defs/a"}}, "unevaluatedProperties": False}
    tool = structure({"name": "x", "inputSchema": schema}, t.ToolDef)
    assert tool.input_schema is schema


def test_outgoing_values_never_carry_none():
    assert unstructure(t.ElicitationResult(action="decline")) == {"action": "decline"}
    assert unstructure(t.Root(uri="file:///x")) == {"uri": "file:///x"}
    assert unstructure(t.CompletionRef.prompt("p")) == {"type": "ref/prompt", "name": "p"}
    result = unstructure(t.CreateMessageResult(content={"type": "text", "text": "x"}, model="m"))
    assert result == {"content": {"type": "text", "text": "x"}, "model": "m", "role": "assistant"}


def test_tool_result_content_parts():
    result = structure({"content": [
        {"type": "audio", "data": "AAE=", "mimeType": "audio/wav", "_meta": {"m": 1}},
        {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain"},
        {"type": "text", "text": "x", "annotations": {"audience": ["user"]}},
    ]}, t.ToolResult)
    audio, link, text = result.content
    assert audio.decoded() == b"\x00\x01" and audio.meta == {"m": 1}
    assert (link.uri, link.name, link.mime_type) == ("file:///a", "a", "text/plain")
    assert text.annotations == {"audience": ["user"]}


def test_unpadded_base64_is_accepted():
    contents = structure({"uri": "a://b", "blob": "AAE"}, t.ResourceContents)
    assert contents.blob == b"\x00\x01"


def test_prompt_message_with_a_list_of_parts():
    message = structure({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                        t.PromptMessage)
    assert [p.text for p in message.content] == ["a", "b"]


def test_a_content_part_without_type_is_a_protocol_error():
    from mcpclient import ProtocolError

    with pytest.raises(ProtocolError, match="without a type"):
        structure({"content": [{"text": "x"}]}, t.ToolResult)


def test_elicitation_request_in_url_mode():
    request = structure({"mode": "url", "message": "sign in", "url": "https://example.invalid/a",
                         "elicitationId": "e1"}, t.ElicitationRequest)
    assert (request.mode, request.url, request.elicitation_id) == ("url", "https://example.invalid/a", "e1")
