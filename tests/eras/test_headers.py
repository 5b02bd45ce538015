"""Modern Streamable HTTP request headers (mcpclient.plugins.headers): x-mcp-header rules, value encoding."""

from __future__ import annotations

import logging

import pytest

from mcpclient.plugins.headers import (
    InvalidToolHeaders,
    ToolHeaders,
    encode_value,
    request_headers,
    tool_header_paths,
)

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        (42, "42"),
        (-7, "-7"),
        (True, "true"),
        (False, "false"),
        ("a b", "a b"),
        ("", "=?base64??="),
    ],
)
def test_values_are_encoded_as_the_spec_shows(value, encoded):
    assert encode_value(value) == encoded


def schema(**properties):
    return {"type": "object", "properties": properties}


def test_header_paths_follow_properties_only():
    paths = tool_header_paths(schema(
        region={"type": "string", "x-mcp-header": "Region"},
        nested={"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}}},
        query={"type": "string"},
    ))
    assert paths == [("Region", ("region",)), ("Id", ("nested", "id"))]


@pytest.mark.parametrize(
    "bad",
    [
        schema(a={"type": "string", "x-mcp-header": ""}),
        schema(a={"type": "string", "x-mcp-header": "Bad Name"}),
        schema(a={"type": "string", "x-mcp-header": "New\nLine"}),
        schema(a={"type": "number", "x-mcp-header": "Num"}),
        schema(a={"type": "object", "x-mcp-header": "Obj"}),
        schema(a={"type": "string", "x-mcp-header": "Dup"}, b={"type": "string", "x-mcp-header": "dup"}),
        schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}),
        {"type": "object", "anyOf": [schema(a={"type": "string", "x-mcp-header": "A"})]},
        {"type": "object", "$defs": {"x": schema(a={"type": "string", "x-mcp-header": "A"})}},
        {"type": "string", "x-mcp-header": "Root"},
    ],
)
def test_invalid_annotations_are_refused(bad):
    with pytest.raises(InvalidToolHeaders):
        tool_header_paths(bad)


def test_invalid_tools_are_dropped_with_a_warning_and_others_kept(caplog):
    headers = ToolHeaders()
    tools = [
        {"name": "good", "inputSchema": schema(r={"type": "string", "x-mcp-header": "Region"})},
        {"name": "bad", "inputSchema": schema(n={"type": "number", "x-mcp-header": "N"})},
        {"name": "plain", "inputSchema": schema(q={"type": "string"})},
    ]
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        kept = headers.learn(tools)
    assert [t["name"] for t in kept] == ["good", "plain"]
    assert any("'bad'" in r.getMessage() for r in caplog.records)


def test_request_headers_for_a_tool_call_with_parameters():
    headers = ToolHeaders()
    headers.learn([{"name": "sql", "inputSchema": schema(
        region={"type": "string", "x-mcp-header": "Region"},
        dry={"type": "boolean", "x-mcp-header": "Dry"},
        missing={"type": "string", "x-mcp-header": "Missing"},
        empty={"type": "string", "x-mcp-header": "Empty"},
    )}])
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "_meta": META, "name": "sql", "arguments": {"region": "us-west1", "dry": False, "empty": None}}}
    assert request_headers(message, headers) == {
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "sql",
        "Mcp-Param-Region": "us-west1", "Mcp-Param-Dry": "false"}


def test_request_headers_name_the_resource_uri_and_encode_it():
    message = {"method": "resources/read", "params": {"_meta": META, "uri": "file:///ä.txt"}}
    assert request_headers(message)["Mcp-Name"].startswith("=?base64?")


def test_legacy_messages_get_no_modern_headers():
    assert request_headers({"method": "tools/call", "params": {"name": "x"}}) == {}


def test_a_later_page_updates_the_tools_it_names_and_a_new_listing_starts_afresh():
    headers = ToolHeaders()
    region = schema(r={"type": "string", "x-mcp-header": "Region"})
    headers.learn([{"name": "a", "inputSchema": region}])
    headers.learn([{"name": "b", "inputSchema": region}], first=False)
    assert headers.for_call("a", {"r": "x"}) == headers.for_call("b", {"r": "x"}) == {"Mcp-Param-Region": "x"}
    headers.learn([{"name": "a", "inputSchema": schema(r={"type": "string"})}], first=False)
    assert headers.for_call("a", {"r": "x"}) == {}  # the page says a has no header now
    headers.learn([{"name": "c", "inputSchema": region}])
    assert headers.for_call("b", {"r": "x"}) == {}  # a new listing: b is gone
