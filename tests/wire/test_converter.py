"""The wire rules: camelCase, _meta, base64, content blocks; lenient in, strict out."""

from __future__ import annotations

import pytest

from mcpclient import types as t
from mcpclient._protocol.wire.converter import structure, unstructure, wire_name


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


@pytest.mark.parametrize(
    ("value", "cls"),
    [({"uri": "file:///a", "name": None}, t.Resource),  # cattrs' own str() read it as "None"
     ({"uri": 7, "name": "a"}, t.Resource),
     ({"uri": float("nan")}, t.ResourceContents),
     ({"uri": "file:///a", "text": ["x"]}, t.ResourceContents),
     ({"name": "p", "description": 3}, t.Prompt)],
)
def test_a_text_field_that_is_not_a_string_is_a_protocol_error(value, cls):
    from mcpclient import ProtocolError

    with pytest.raises(ProtocolError, match="expected a string"):
        structure(value, cls)


def test_elicitation_request_in_url_mode():
    request = structure({"mode": "url", "message": "sign in", "url": "https://example.invalid/a",
                         "elicitationId": "e1"}, t.ElicitationRequest)
    assert (request.mode, request.url, request.elicitation_id) == ("url", "https://example.invalid/a", "e1")


_PARTS = [
    {"type": "text", "text": "plain"},
    {"type": "text", "text": "x", "annotations": {"audience": ["user"]}, "_meta": {"m": 1}, "mimeType": "text/x"},
    {"type": "text", "text": 7},  # a broken text is read as ""
    {"type": "text"},
    {"type": "image", "data": "AAE=", "mimeType": "image/png"},
    {"type": "resource", "resource": {"uri": "a://b", "text": "t"}},
    {"type": "from-the-future", "x": 1},
]


def test_the_server_of_a_request_to_the_person_is_never_read_from_the_request():
    """``server`` (who asks, shown in the prompts) comes from the session's serverInfo only."""
    forged = {"name": "Your bank", "version": "1"}
    elicit = structure({"message": "m", "server": forged}, t.ElicitationRequest)
    sample = structure({"messages": [], "maxTokens": 5, "server": forged}, t.CreateMessageRequest)
    assert (elicit.server, sample.server) == (None, None)


@pytest.mark.parametrize("part", _PARTS, ids=lambda p: f"{p['type']}-{len(p)}")
def test_tool_results_built_in_one_step_match_the_attrs_constructors(part):
    """The converter fills a ToolContent's and a ToolResult's ``__dict__`` at once rather than
    calling their ``__init__``: the objects must be the same, every field of them."""
    import attrs

    result = structure({"content": [part], "isError": True, "structuredContent": {"a": 1}, "_meta": {"k": 2}},
                       t.ToolResult)
    (content,) = result.content
    for obj in (content, result):
        names = [a.name for a in attrs.fields(type(obj))]
        assert sorted(vars(obj)) == sorted(names)  # every field set, nothing else
        rebuilt = type(obj)(**{name: getattr(obj, name) for name in names})
        assert attrs.asdict(rebuilt, recurse=False) == attrs.asdict(obj, recurse=False)
        assert rebuilt == obj and repr(rebuilt) == repr(obj)
    assert content.raw is part
    assert result == t.ToolResult(content=[content], is_error=True, structured_content={"a": 1}, meta={"k": 2})
    if part.get("type") == "text":
        assert content.text == (part["text"] if isinstance(part.get("text"), str) else "")
        assert (content.mime_type, content.annotations, content.meta) == (
            part.get("mimeType"), part.get("annotations"), part.get("_meta"))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        content.text = "changed"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        result.is_error = False  # type: ignore[misc]


def test_a_tool_results_text_joins_its_text_parts_in_order():
    def text_of(*parts):
        return structure({"content": list(parts)}, t.ToolResult).text

    assert text_of({"type": "text", "text": "a"}) == "a"
    assert text_of({"type": "image", "data": "", "mimeType": "image/png"}) == ""
    assert text_of({"type": "text", "text": "a"}, {"type": "image", "data": ""}, {"type": "text", "text": "b"}) == "ab"
    assert text_of() == ""
