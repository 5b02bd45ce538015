"""The open seam over Streamable HTTP: middleware around real exchanges, and a re-send."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from mcpclient import Client, StreamableHTTPTransport
from mcpclient.extensions import Message
from tests.helpers import require_mcp_sdk
from tests.http.conftest import URL, StreamBody, result, wait_for

V = "2026-07-28"


def recorder(seen: list[tuple[str, str, str]]) -> Any:
    def mw(message: Message, next_: Any) -> Any:
        seen.append((message.direction, message.method, threading.current_thread().name))
        return next_(message)

    return mw


@pytest.mark.parametrize("protocol", ["legacy", V])
def test_middleware_wraps_a_real_servers_exchanges_over_streamable_http(sdk_server, protocol):
    require_mcp_sdk()
    server = sdk_server("--transport", "streamable-http")
    seen: list[tuple[str, str, str]] = []
    logs: list[Any] = []
    with Client(StreamableHTTPTransport(server.url), protocol=protocol, timeout=15, middleware=[recorder(seen)]) as client:
        client.set_log_handler(lambda level, data, logger: logs.append(data))
        client.set_log_level("debug")
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        assert client.call_tool("log", {"message": "hello"}).text == "logged"
        wait_for(lambda: "hello" in logs)
    me = threading.current_thread().name
    assert ("send", "tools/call", me) in seen
    received = [thread for direction, method, thread in seen if (direction, method) == ("receive", "notifications/message")]
    assert received and all(thread.startswith("mcpclient-dispatch") for thread in received)


def test_a_resend_after_a_broken_stream_is_a_message_of_its_own(fake):
    """A reply stream that ends without its reply (no real server does it on purpose)."""
    discover = {"resultType": "complete", "supportedVersions": [V], "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-fake", "version": "1"}}}
    posts = {"tools/list": 0}

    def reply(message: dict[str, Any], value: dict[str, Any]) -> Any:
        return 200, {"Content-Type": "application/json"}, json.dumps(result(message["id"], value))

    def tools_list(message: dict[str, Any], request: Any) -> Any:
        posts["tools/list"] += 1
        if posts["tools/list"] == 1:
            return 200, {"Content-Type": "text/event-stream"}, StreamBody(b": hello\n\n", None)
        return reply(message, {"resultType": "complete", "tools": []})

    fake.handlers["server/discover"] = lambda m, r: reply(m, discover)
    fake.handlers["tools/list"] = tools_list
    seen: list[tuple[str, str, str]] = []
    with Client(StreamableHTTPTransport(URL), timeout=5, middleware=[recorder(seen)]) as client:
        assert client.list_tools() == []
    assert [method for _, method, _ in seen].count("tools/list") == 2
    assert posts["tools/list"] == 2


@pytest.mark.parametrize("protocol", ["legacy", V])
def test_a_middlewares_headers_go_with_that_one_post_to_a_real_server(protocol):
    """``Message.with_headers`` reaches the transport (``SendOptions.headers``): the real SDK
    server answers ``user://me`` with the ``X-User`` header of that very request."""
    require_mcp_sdk()
    from tests.cache_fixtures import CacheServer

    def as_user(message: Message, next_: Any) -> Any:
        if message.direction == "send" and message.method == "resources/read":
            return next_(message.with_headers({"X-User": "ada"}))
        return next_(message)

    with CacheServer() as server:
        with Client(StreamableHTTPTransport(server.url), protocol=protocol, timeout=15, middleware=[as_user]) as client:
            assert client.read_resource("user://me")[0].text == "the profile of ada"
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"  # no header: none sent
        with Client(StreamableHTTPTransport(server.url), protocol=protocol, timeout=15) as client:
            assert client.read_resource("user://me")[0].text == "the profile of nobody"


def test_the_header_mirroring_is_a_plugin_of_http_clients_only():
    from mcpclient.plugins.headers import HeaderMirroring
    from tests.doubles import QueueTransport

    for transport, expected in [(StreamableHTTPTransport(URL), 1), (QueueTransport(), 0)]:
        client = Client(transport)
        try:
            assert [type(e) for e in client.extensions].count(HeaderMirroring) == expected
        finally:
            client.close()


@pytest.mark.parametrize("protocol", ["legacy", V])
def test_the_header_mirroring_is_idle_over_a_legacy_session_only(sdk_server, protocol):
    """Idle (``Extension.idle``): a legacy call over HTTP builds no chain for it."""
    require_mcp_sdk()
    from mcpclient.plugins.headers import HeaderMirroring

    server = sdk_server("--transport", "streamable-http")
    with Client(StreamableHTTPTransport(server.url), protocol=protocol, timeout=15) as client:
        [mirroring] = [e for e in client.extensions if isinstance(e, HeaderMirroring)]
        assert mirroring.idle() is (protocol == "legacy")
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
