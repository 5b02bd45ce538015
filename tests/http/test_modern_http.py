"""Streamable HTTP in the modern era (2026-07-28): headers, no sessions, no GET, no resumption."""

from __future__ import annotations

import json

import pytest

import mcpclient
from mcpclient import (
    Client,
    CompletionRef,
    CreateMessageResult,
    ElicitationResult,
    Root,
    StreamableHTTPTransport,
    StreamInterrupted,
)
from tests.http.conftest import URL, StreamBody, result, sse, wait_for

V = "2026-07-28"
DISCOVER = {"resultType": "complete", "supportedVersions": [V],
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-fake", "version": "1"}}}
TOOLS = [
    {"name": "sql", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}, "query": {"type": "string"}}}},
    {"name": "broken", "inputSchema": {"type": "object", "properties": {
        "n": {"type": "number", "x-mcp-header": "N"}}}},
]


def json_reply(message, value):
    return 200, {"Content-Type": "application/json", "Mcp-Session-Id": "should-be-ignored"}, json.dumps(
        result(message["id"], {"resultType": "complete", **value}))


@pytest.fixture
def modern(fake):
    fake.handlers["server/discover"] = lambda m, r: json_reply(m, DISCOVER)
    fake.handlers["tools/list"] = lambda m, r: json_reply(m, {"tools": TOOLS, "ttlMs": 0, "cacheScope": "public"})
    fake.handlers["tools/call"] = lambda m, r: json_reply(m, {"content": [{"type": "text", "text": "ok"}]})
    return fake


def test_modern_requests_mirror_the_body_in_headers(modern):
    with Client(StreamableHTTPTransport(URL), timeout=5) as client:
        assert client.protocol_version == V
        client.list_tools()
        client.call_tool("sql", {"region": "us-west1", "query": "select 1"})
    call = modern.posts("tools/call")[0]
    assert call.headers["MCP-Protocol-Version"] == V
    assert call.headers["Mcp-Method"] == "tools/call"
    assert call.headers["Mcp-Name"] == "sql"
    assert call.headers["Mcp-Param-Region"] == "us-west1"
    discover = modern.posts("server/discover")[0]
    assert discover.headers["Mcp-Method"] == "server/discover"
    assert "Mcp-Name" not in discover.headers


def test_modern_http_keeps_no_session_and_opens_no_get_stream(modern):
    with Client(StreamableHTTPTransport(URL), timeout=5) as client:
        client.list_tools()
        client.call_tool("sql", {"region": "eu"})
    assert all("Mcp-Session-Id" not in r.headers for r in modern.requests)
    assert modern.of("GET") == [] and modern.of("DELETE") == []


def test_tools_with_invalid_header_annotations_are_dropped(modern):
    with Client(StreamableHTTPTransport(URL), timeout=5) as client:
        assert [t.name for t in client.list_tools()] == ["sql"]


def test_a_modern_cancel_closes_the_stream_instead_of_posting(modern):
    body = StreamBody(b": waiting\n\n")  # a stream that never carries the reply
    modern.handlers["tools/call"] = lambda m, r: (200, {"Content-Type": "text/event-stream"}, body)
    with Client(StreamableHTTPTransport(URL), timeout=5) as client:
        with pytest.raises(mcpclient.RequestTimeout):
            client.call_tool("sql", {"region": "x"}, timeout=0.5)
        wait_for(lambda: body._closed_event.is_set() or body.closed)
    assert modern.posts("notifications/cancelled") == []


def test_a_broken_stream_is_resent_only_for_requests_that_change_nothing(modern):
    calls = {"tools/list": 0, "tools/call": 0}

    def broken(method, value):
        def handler(m, r):
            calls[method] += 1
            if calls[method] == 1:
                return 200, {"Content-Type": "text/event-stream"}, StreamBody(b": hello\n\n", None)
            return json_reply(m, value)
        return handler

    modern.handlers["tools/list"] = broken("tools/list", {"tools": [], "ttlMs": 0, "cacheScope": "public"})
    modern.handlers["tools/call"] = broken("tools/call", {"content": []})
    with Client(StreamableHTTPTransport(URL), timeout=5) as client:
        assert client.list_tools() == []
        with pytest.raises(StreamInterrupted):
            client.call_tool("sql", {"region": "x"})
    assert calls == {"tools/list": 2, "tools/call": 1}


def test_a_broken_stream_of_a_read_only_tools_call_is_resent(modern):
    """The one rule for what changes nothing (``_methods``) holds for a broken reply stream too:
    a tool annotated ``readOnlyHint`` in the listing is called again."""
    calls = {"tools/call": 0}

    def call(m, r):
        calls["tools/call"] += 1
        if calls["tools/call"] == 1:
            return 200, {"Content-Type": "text/event-stream"}, StreamBody(b": hello\n\n", None)
        return json_reply(m, {"content": [{"type": "text", "text": "read"}]})

    tools = [{**TOOLS[0], "annotations": {"readOnlyHint": True}}]
    modern.handlers["tools/list"] = lambda m, r: json_reply(m, {"tools": tools, "ttlMs": 0, "cacheScope": "public"})
    modern.handlers["tools/call"] = call
    with Client(StreamableHTTPTransport(URL), timeout=5) as client:
        client.list_tools()
        assert client.call_tool("sql", {"region": "x"}).text == "read"
    assert calls == {"tools/call": 2}
    assert all(post.headers["Mcp-Param-Region"] == "x" for post in modern.posts("tools/call"))


def test_progress_arrives_on_the_request_stream(modern):
    def call(m, r):
        token = m["params"]["_meta"]["progressToken"]
        progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 2}}
        done = result(m["id"], {"resultType": "complete", "content": []})
        return 200, {"Content-Type": "text/event-stream"}, StreamBody(sse(progress, done), None)

    modern.handlers["tools/call"] = call
    seen = []
    with Client(StreamableHTTPTransport(URL), timeout=5) as client:
        client.call_tool("sql", {}, on_progress=lambda *a: seen.append(a))
        wait_for(lambda: seen)
    assert seen == [(1.0, 2.0, None)]


# -- the official SDK server in its 2026-07-28 mode ------------------------------------------


@pytest.mark.parametrize("mode", [("--transport", "streamable-http"),
                                  ("--transport", "streamable-http", "--json-response")])
def test_sdk_server_in_modern_mode_over_http(sdk_server, mode):
    server = sdk_server(*mode)
    transport = StreamableHTTPTransport(server.url)
    client = Client(transport, timeout=30)
    client.set_sampling_handler(lambda request: CreateMessageResult.from_text("Paris", model="m"))
    client.set_elicitation_handler(lambda request: ElicitationResult(action="accept", content={"name": "Ada", "age": 7}))
    client.set_roots([Root(uri="file:///srv/project")])
    with client:
        assert client.protocol_version == V
        assert client.server_info.name
        assert "echo" in {t.name for t in client.list_tools()}
        assert client.call_tool("echo", {"text": "héllo"}).text == "héllo"
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"result": 5}
        assert "Paris" in client.call_tool("sample", {"prompt": "capital of France?"}).text
        assert "Ada" in client.call_tool("elicit", {"message": "who?"}).text
        assert "file:///srv/project" in client.call_tool("roots", {}).text
        (text,) = client.read_resource("test://text")
        assert text.text == "hello world"
        assert client.read_resource("test://blob")[0].blob == bytes(range(256))
        _, messages = client.get_prompt("greet", {"name": "Bo"})
        assert "Bo" in messages[0].content[0].text
        assert client.complete(CompletionRef.prompt("greet"), "name", "al").values == ["alice", "albert"]
        steps = []
        client.call_tool("slow", {"seconds": 0.2, "steps": 2}, on_progress=lambda *a: steps.append(a))
        if "--json-response" not in mode:  # a JSON reply has nowhere to carry progress
            assert wait_for(lambda: len(steps) == 2)
        with pytest.raises(mcpclient.ResourceNotFound):
            client.read_resource("test://missing")
