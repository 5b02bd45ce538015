"""A server's SSE ``retry:`` field is bounded: ``retry: 0`` makes no reconnect loop, and
``retry: 100000000000000000`` neither raises in the call nor kills the GET-stream listener.

A scripted stateless Streamable HTTP server on 127.0.0.1 (``scripted_http``) whose GET
stream sends ``retry:`` and one notification, then ends.
"""

from __future__ import annotations

import json
import time

import pytest

from mcpclient import Client, RequestTimeout, StreamableHTTPTransport
from mcpclient.transports import http
from tests.security.legacy_sse import INIT
from tests.security.scripted_http import Answer, ScriptedHTTP
from tests.helpers import RELEASED_WITHIN

pytestmark = pytest.mark.timeout(60)

NOTICE = b'data: {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}\n\n'


def _streamable(server: ScriptedHTTP, retry: str, call_stream: bytes | None = None) -> str:
    """A stateless legacy server whose GET stream sends ``retry:`` and a notification, then ends."""

    def mcp(path: str, headers: dict[str, str], body: bytes) -> Answer:
        if not body:  # the GET stream (or a DELETE)
            return Answer(body=f"retry: {retry}\n\n".encode() + NOTICE, headers={"Content-Type": "text/event-stream"})
        message = json.loads(body)
        if "id" not in message:
            return Answer(202)
        if message["method"] == "tools/call" and call_stream is not None:
            return Answer(body=call_stream, headers={"Content-Type": "text/event-stream"})
        result = INIT if message["method"] == "initialize" else {}
        return Answer(body=json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())

    server.routes["/mcp"] = mcp
    return server.origin + "/mcp"


def _gets(server: ScriptedHTTP) -> int:
    with server.lock:
        return sum(1 for path, headers in server.seen if path == "/mcp" and "mcp-protocol-version" in headers
                   and headers.get("accept") == "text/event-stream")


def test_retry_0_does_not_reconnect_in_a_tight_loop():
    with ScriptedHTTP() as server:
        with Client(StreamableHTTPTransport(_streamable(server, "0")), timeout=5, protocol="legacy") as client:
            client.initialize()
            time.sleep(2)
            opened = _gets(server)
    assert 1 <= opened <= 10, opened  # was about 1,000 a second


def test_a_huge_retry_neither_raises_nor_kills_the_listener(monkeypatch):
    monkeypatch.setattr(http, "MAX_RECONNECT_DELAY", 0.3, raising=False)  # so the reconnect shows soon
    huge = str(10**17)
    with ScriptedHTTP() as server:
        with Client(StreamableHTTPTransport(_streamable(server, huge)), timeout=5, protocol="legacy") as client:
            client.initialize()
            deadline = time.monotonic() + 30
            while _gets(server) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _gets(server) >= 3  # the listener reconnected: it did not die of OverflowError


def test_a_huge_retry_on_a_broken_reply_stream_ends_the_call_by_its_timeout():
    broken = f"id: 1\nretry: {10**17}\n\n".encode()  # then the stream ends without the reply
    with ScriptedHTTP() as server:
        url = _streamable(server, "1000", call_stream=broken)
        with Client(StreamableHTTPTransport(url, listen=False), timeout=60, protocol="legacy") as client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                client.call_tool("echo", {}, timeout=1)
            assert time.monotonic() - started < 1 + RELEASED_WITHIN
