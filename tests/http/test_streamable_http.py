"""StreamableHTTPTransport against a fake server: headers, replies, sessions, errors."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from mcpclient import (
    Client,
    ConnectionClosed,
    HTTPStatusError,
    ProtocolError,
    RPCError,
    StreamableHTTPTransport,
    TransportError,
)

from mcpclient.transports.base import ExchangeTransport

from ..helpers import RELEASED_WITHIN
from .conftest import BLOCK, INIT_RESULT, URL, StreamBody, result, sse, wait_for


def open_client(**options) -> Client:
    client = Client(StreamableHTTPTransport(URL, listen=False, **options), timeout=5, protocol="legacy")
    client.initialize()
    return client


def test_every_post_sends_json_content_type_and_accepts_json_and_sse(fake):
    with open_client() as client:
        client.call_tool("x")
    for request in fake.posts():
        assert request.headers["Content-Type"] == "application/json"
        assert request.headers["Accept"] == "application/json, text/event-stream"


def test_a_json_reply_is_the_result(fake):
    with open_client() as client:
        assert client.call_tool("x").content[0].text == "ok"


def test_an_sse_reply_delivers_notifications_before_the_result_in_order(fake):
    seen = []
    fake.handlers["tools/call"] = lambda m, r: (200, {"Content-Type": "text/event-stream"}, sse(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 2}},
        result(m["id"], {"content": [{"type": "text", "text": "streamed"}]}),
    ))
    client = Client(StreamableHTTPTransport(URL, listen=False), timeout=5, protocol="legacy")
    client.set_notification_handler(lambda method, params: seen.append(params["data"]))
    with client:
        assert client.call_tool("x").content[0].text == "streamed"
        wait_for(lambda: len(seen) == 2)
    assert seen == [1, 2]


def test_a_202_for_a_notification_is_success(fake, caplog):
    answered = []

    def accepted(message, request):
        answered.append(message["method"])
        return 202, {}, ""  # no body: the spec's answer to a notification

    fake.handlers["notifications/initialized"] = accepted
    with caplog.at_level("WARNING", logger="mcpclient"), open_client() as client:
        assert client.call_tool("x").content[0].text == "ok"  # the session goes on after it
    assert answered == ["notifications/initialized"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_the_session_id_is_echoed_on_later_requests_and_deleted_on_close(fake):
    client = open_client()
    client.call_tool("x")
    (init,) = fake.posts("initialize")
    assert "Mcp-Session-Id" not in init.headers
    for request in fake.posts("notifications/initialized") + fake.posts("tools/call"):
        assert request.headers["Mcp-Session-Id"] == "sess-1"
    client.close()
    (delete,) = fake.of("DELETE")
    assert delete.headers["Mcp-Session-Id"] == "sess-1"


def test_no_delete_is_sent_without_a_session(rsps):
    from .conftest import FakeMCP

    fake = FakeMCP(rsps, session_id=None)
    open_client().close()
    assert fake.of("DELETE") == []


def test_the_protocol_version_header_is_sent_after_initialize_only(fake):
    with open_client() as client:
        client.call_tool("x")
    (init,) = fake.posts("initialize")
    assert "MCP-Protocol-Version" not in init.headers
    for request in fake.posts("notifications/initialized") + fake.posts("tools/call"):
        assert request.headers["MCP-Protocol-Version"] == "2025-11-25"


def test_a_404_on_a_session_starts_a_new_session_and_resends_the_request(fake, caplog):
    calls = []

    def tools_call(message, request):
        calls.append(request.headers.get("Mcp-Session-Id"))
        if request.headers.get("Mcp-Session-Id") == "sess-1":
            return 404, {}, "session not found"
        return 200, {"Content-Type": "application/json"}, json.dumps(result(message["id"], {"content": []}))

    fake.handlers["tools/call"] = tools_call
    with open_client() as client:
        fake.session_id = "sess-2"
        with caplog.at_level("WARNING", logger="mcpclient"):
            assert client.call_tool("x").content == []
    assert calls == ["sess-1", "sess-2"]
    inits = fake.posts("initialize")
    assert len(inits) == 2 and "Mcp-Session-Id" not in inits[1].headers
    assert len(fake.posts("notifications/initialized")) == 2
    assert "starting a new session" in caplog.text


def test_a_second_404_after_renewal_is_an_error_not_a_loop(fake):
    fake.handlers["tools/call"] = lambda m, r: (404, {}, "gone")
    with open_client() as client:
        with pytest.raises(HTTPStatusError) as info:
            client.call_tool("x")
    assert info.value.status_code == 404
    assert len(fake.posts("initialize")) == 2


def test_a_404_without_a_session_is_an_http_status_error(rsps):
    from .conftest import FakeMCP

    fake = FakeMCP(rsps, session_id=None)
    fake.handlers["tools/call"] = lambda m, r: (404, {"Content-Type": "text/plain"}, "no such endpoint")
    with open_client() as client:
        with pytest.raises(HTTPStatusError, match="no such endpoint") as info:
            client.call_tool("x")
    assert info.value.status_code == 404
    assert len(fake.posts("initialize")) == 1


def test_an_http_error_with_a_jsonrpc_error_body_raises_rpc_error(fake):
    fake.handlers["tools/call"] = lambda m, r: (400, {"Content-Type": "application/json"}, json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "bad arguments"}}))
    with open_client() as client:
        with pytest.raises(RPCError) as info:
            client.call_tool("x")
    assert info.value.code == -32602 and info.value.message == "bad arguments"


def test_an_http_error_without_jsonrpc_body_carries_status_and_excerpt_but_never_the_token(fake):
    fake.handlers["tools/call"] = lambda m, r: (500, {"Content-Type": "text/html"},
                                                "<h1>Internal error</h1> token was s3cret-token " + "x" * 5000)
    with open_client(token_provider=lambda: "s3cret-token") as client:
        with pytest.raises(HTTPStatusError) as info:
            client.call_tool("x")
    error = info.value
    assert error.status_code == 500
    assert "Internal error" in str(error)
    assert "s3cret-token" not in str(error) and "s3cret-token" not in error.body
    assert len(str(error)) < 600
    assert isinstance(error, TransportError)


def test_garbage_json_fails_that_call_only(fake):
    count = []

    def tools_call(message, request):
        count.append(1)
        if len(count) == 1:
            return 200, {"Content-Type": "application/json"}, "{not json"
        return 200, {"Content-Type": "application/json"}, json.dumps(result(message["id"], {"content": []}))

    fake.handlers["tools/call"] = tools_call
    with open_client() as client:
        with pytest.raises(ProtocolError, match="not valid JSON"):
            client.call_tool("x")
        assert client.call_tool("x").content == []


def test_an_unknown_content_type_fails_that_call_only(fake):
    fake.handlers["tools/call"] = lambda m, r: (200, {"Content-Type": "text/html"}, "<html>hello</html>")
    with open_client() as client:
        with pytest.raises(ProtocolError, match="text/html"):
            client.call_tool("x")
        client.ping()


def test_a_garbage_sse_event_is_logged_and_skipped_and_the_reply_after_it_read(fake, caplog):
    # As a bad line over stdio: one event that is not JSON fails neither the stream nor the call.
    fake.handlers["tools/call"] = lambda m, r: (200, {"Content-Type": "text/event-stream"},
                                                b"event: message\ndata: {oops\n\n"
                                                + sse(result(m["id"], {"content": []})))
    with open_client() as client, caplog.at_level("WARNING", logger="mcpclient.transports.http"):
        assert client.call_tool("x").content == []
        client.ping()
    assert any("skipping a malformed message" in r.getMessage() for r in caplog.records)


def test_a_garbage_sse_event_alone_ends_as_a_stream_without_its_reply(fake):
    fake.handlers["tools/call"] = lambda m, r: (200, {"Content-Type": "text/event-stream"},
                                                b"event: message\ndata: {oops\n\n")
    with open_client() as client:
        with pytest.raises(TransportError, match="ended before the reply"):
            client.call_tool("x")
        client.ping()


def test_a_truncated_sse_stream_without_event_ids_fails_that_call(fake):
    fake.handlers["tools/call"] = lambda m, r: (200, {"Content-Type": "text/event-stream"},
                                                b"event: message\ndata: {\"jsonrpc\": \"2.0\", \"id\"")
    with open_client() as client:
        with pytest.raises(TransportError, match="ended before the reply"):
            client.call_tool("x")
        client.ping()


def test_a_202_to_a_request_is_a_clear_error(fake):
    fake.handlers["tools/call"] = lambda m, r: (202, {}, "")
    with open_client() as client:
        with pytest.raises(ProtocolError, match="no reply"):
            client.call_tool("x")


def test_a_stream_kept_open_after_the_reply_wedges_nothing(fake):
    bodies = []

    def tools_call(message, request):
        body = StreamBody(sse(result(message["id"], {"content": []})), BLOCK)
        bodies.append(body)
        return 200, {"Content-Type": "text/event-stream"}, body

    fake.handlers["tools/call"] = tools_call
    client = open_client()
    started = time.monotonic()
    for _ in range(3):
        assert client.call_tool("x").content == []
    assert time.monotonic() - started < RELEASED_WITHIN  # (waiting for the held streams: 3 x 5 s timeouts)
    client.close()
    wait_for(lambda: all(body.closed for body in bodies))


def test_concurrent_calls_do_not_wait_for_each_other(fake):
    gate = threading.Event()

    def tools_call(message, request):
        if json.loads(request.body)["params"]["name"] == "slow":
            gate.wait(60)
        return 200, {"Content-Type": "application/json"}, json.dumps(result(message["id"], {"content": []}))

    fake.handlers["tools/call"] = tools_call
    with open_client() as client:
        assert isinstance(client.transport, ExchangeTransport)  # its sends go out side by side
        slow = threading.Thread(target=client.call_tool, args=("slow",))
        slow.start()
        wait_for(lambda: fake.posts("tools/call"))  # the slow call is at the server, held 60 s
        started = time.monotonic()
        client.call_tool("fast")
        assert time.monotonic() - started < RELEASED_WITHIN
        gate.set()
        slow.join(5)


def test_a_large_sse_event_is_accepted(fake):
    big = "y" * (3 * 1024 * 1024)
    payload = sse(result(1, {}))  # placeholder replaced below

    def tools_call(message, request):
        data = sse(result(message["id"], {"content": [{"type": "text", "text": big}]}))
        chunks = [data[i:i + 65536] for i in range(0, len(data), 65536)]
        return 200, {"Content-Type": "text/event-stream"}, StreamBody(*chunks, None)

    fake.handlers["tools/call"] = tools_call
    assert payload
    with open_client() as client:
        assert client.call_tool("x").content[0].text == big


def test_close_unblocks_receive_and_is_idempotent():
    transport = StreamableHTTPTransport(URL)
    threading.Timer(0.1, transport.close).start()
    with pytest.raises(ConnectionClosed):
        transport.receive()
    transport.close()
    with pytest.raises(ConnectionClosed):
        transport.send({"jsonrpc": "2.0", "method": "ping", "id": 1})


def test_initialize_result_version_is_used_for_the_header(fake):
    fake.handlers["initialize"] = lambda m, r: (200, {"Content-Type": "text/event-stream", "Mcp-Session-Id": "s"},
                                                sse(result(m["id"], dict(INIT_RESULT, protocolVersion="2025-06-18"))))
    with open_client() as client:
        client.call_tool("x")
    assert fake.posts("tools/call")[0].headers["MCP-Protocol-Version"] == "2025-06-18"


def test_a_non_http_url_is_refused():
    with pytest.raises(ValueError):
        StreamableHTTPTransport("ftp://example/mcp")
