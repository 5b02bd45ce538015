"""SSE streams: the parser, resumption with Last-Event-ID, and the GET stream.

Resumption is shown on a fake server (``responses``) for its edge cases, and on the official
SDK's server with an event store, behind a relay that drops the link (tests/http/relay.py).
"""

from __future__ import annotations

import json
import re
import time
from urllib.parse import urlsplit

import pytest

from mcpclient import Client, StreamableHTTPTransport, TransportError, connect
from mcpclient.transports._sse_parser import SSEParser

from .conftest import BLOCK, URL, StreamBody, result, sse, wait_for
from ..helpers import RELEASED_WITHIN
from .relay import CuttingRelay, last_method


def parse(*chunks: bytes) -> tuple[list, SSEParser]:
    parser = SSEParser()
    events = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    return events, parser


def test_the_parser_joins_multi_line_data_and_skips_comments():
    events, _ = parse(b": keep-alive\nevent: message\ndata: a\ndata: b\n\n")
    assert [(e.event, e.data) for e in events] == [("message", b"a\nb")]


def test_the_parser_handles_crlf_split_across_chunks_and_bare_cr():
    events, _ = parse(b"data: 1\r", b"\n\r\n", b"data: 2\r\rdata: 3\n\n")
    assert [e.data for e in events] == [b"1", b"2", b"3"]


def test_the_parser_strips_a_bom_split_across_chunks():
    events, _ = parse(b"\xef\xbb", b"\xbfdata: x\n\n")
    assert [e.data for e in events] == [b"x"]


def test_the_parser_tracks_the_last_event_id_and_retry_even_for_priming_events():
    events, parser = parse(b"id: 42\nretry: 1500\ndata: \n\n")
    assert parser.last_id == "42" and parser.retry == 1500
    assert [e.data for e in events] == [b""]


def test_the_parser_ignores_an_unfinished_event_and_ids_with_nul():
    events, parser = parse(b"id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\ndata: partial")
    assert [e.data for e in events] == [b"a", b"b"]
    assert parser.last_id == "1"


def test_the_parser_assembles_a_huge_line_from_many_chunks_in_linear_time():
    # 32 MiB in 4 KiB chunks: about half a second when linear; joining the chunks again at each
    # one (quadratic) copies some 125 GB, minutes: 10 s is far from both.
    line = b"data: " + b"z" * (32 * 1024 * 1024)
    chunks = [line[i:i + 4096] for i in range(0, len(line), 4096)] + [b"\n\n"]
    started = time.monotonic()
    events, _ = parse(*chunks)
    assert len(events[0].data) == 32 * 1024 * 1024
    assert time.monotonic() - started < RELEASED_WITHIN


def open_client(listen: bool = False) -> Client:
    client = Client(StreamableHTTPTransport(URL, listen=listen), timeout=5, protocol="legacy")
    client.initialize()
    return client


def test_a_broken_stream_is_resumed_with_last_event_id_after_the_retry_delay(fake):
    calls = {}

    def tools_call(message, request):
        calls["id"] = message["id"]
        calls["closed"] = time.monotonic()
        body = StreamBody(b"id: ev-1\nretry: 300\ndata: \n\n", ConnectionResetError(104, "reset"))
        return 200, {"Content-Type": "text/event-stream"}, body

    def get(request):
        calls["resumed"] = time.monotonic()
        calls["last_event_id"] = request.headers.get("Last-Event-ID")
        data = b"id: ev-2\ndata: \n\n" + sse(result(calls["id"], {"content": [{"type": "text", "text": "late"}]}))
        return 200, {"Content-Type": "text/event-stream"}, data

    fake.handlers["tools/call"] = tools_call
    fake.get = get
    with open_client() as client:
        assert client.call_tool("x").content[0].text == "late"
    assert calls["last_event_id"] == "ev-1"
    assert calls["resumed"] - calls["closed"] >= 0.29
    (resume,) = fake.of("GET")
    assert resume.headers["Mcp-Session-Id"] == "sess-1"
    assert resume.headers["Accept"] == "text/event-stream"


def test_a_stream_closed_gracefully_before_the_reply_is_resumed_too(fake):
    fake.handlers["tools/call"] = lambda m, r: (200, {"Content-Type": "text/event-stream"},
                                                b"id: p1\nretry: 10\ndata: \n\n")
    ids = []

    def get(request):
        ids.append(request.headers.get("Last-Event-ID"))
        message = json.loads(fake.posts("tools/call")[-1].body)
        return 200, {"Content-Type": "text/event-stream"}, sse(result(message["id"], {"content": []}), event_id="p2")

    fake.get = get
    with open_client() as client:
        assert client.call_tool("x").content == []
    assert ids == ["p1"]


def test_a_failed_resumption_fails_that_call_with_a_clear_error(fake):
    fake.handlers["tools/call"] = lambda m, r: (200, {"Content-Type": "text/event-stream"},
                                                b"id: p1\nretry: 10\ndata: \n\n")
    fake.get = lambda r: (405, {}, "")
    with open_client() as client:
        with pytest.raises(TransportError, match="could not be resumed"):
            client.call_tool("x")
        client.ping()


def test_a_405_on_the_get_stream_is_not_an_error_and_not_retried(fake):
    with open_client(listen=True) as client:
        client.ping()
        time.sleep(0.3)
        client.ping()
    assert len(fake.of("GET")) == 1


def test_the_get_stream_opens_after_initialized_and_carries_server_requests(fake):
    body = StreamBody()

    def get(request):
        assert fake.posts("notifications/initialized"), "GET before notifications/initialized"
        body.put(b"id: g0\ndata: \n\n")
        body.put(sse({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}, event_id="g1"))
        body.put(BLOCK)
        return 200, {"Content-Type": "text/event-stream"}, body

    fake.get = get
    client = Client(StreamableHTTPTransport(URL), timeout=5, protocol="legacy")
    client.set_roots(["file:///srv"])
    with client:
        reply = wait_for(lambda: [json.loads(r.body) for r in fake.posts() if json.loads(r.body).get("id") == "srv-1"])
    assert reply[0]["result"]["roots"][0]["uri"] == "file:///srv"
    (get_request,) = fake.of("GET")
    assert get_request.headers["MCP-Protocol-Version"] == "2025-11-25"
    assert body.closed  # close() ended the GET stream


def test_the_get_stream_reconnects_with_last_event_id(fake):
    seen = []

    def get(request):
        seen.append(request.headers.get("Last-Event-ID"))
        if len(seen) == 1:
            return 200, {"Content-Type": "text/event-stream"}, b"retry: 20\nid: a1\ndata: \n\n"
        return 200, {"Content-Type": "text/event-stream"}, StreamBody(BLOCK)

    fake.get = get
    with open_client(listen=True):
        wait_for(lambda: len(seen) >= 2)
    assert seen[:2] == [None, "a1"]


# -- against the official SDK's server with an event store ------------------------------------


def test_a_calls_stream_cut_mid_way_is_resumed_and_the_sdk_replays_what_it_missed(shared_sdk_server):
    """The call's SSE stream is cut (a relay drops the link) right after its first progress
    event (at 2 s; one every 2 s) and the link stays down 3 s; the client resumes with a GET
    carrying that event's id, and the SDK's server replays the one it sent meanwhile and goes
    on: every progress step once, and the result. (The SDK leaves a short window between its
    replay and the stream's new home, where an event would be lost: none falls in it here.)
    (A legacy session's stream: the 2026-07-28 era has no GET to resume with, and a tool
    call whose stream broke there ends with ``StreamInterrupted``.)"""
    server = shared_sdk_server("--transport", "streamable-http", "--event-store")
    seen: list[float] = []
    with CuttingRelay(urlsplit(server.url).port, cut_after=b"notifications/progress", hold=3) as relay:
        with connect(relay.url(), protocol="legacy", timeout=60) as client:
            result = client.call_tool("slow", {"seconds": 8, "steps": 4},
                                      on_progress=lambda progress, total, message: seen.append(progress))
        cut = relay.cut_link
        assert cut is not None, "no stream carried progress: nothing was cut"
        last_id = re.findall(rb"(?m)^id: ?(\S+)", bytes(cut.received))[-1]
        resumed = [link for link in relay.links
                   if re.search(rb"(?im)^last-event-id: ?" + re.escape(last_id) + rb"\r$", bytes(link.sent))]
    assert result.text == "done after 4 steps"
    assert resumed, "no request resumed the stream from its last event id"
    assert seen == [1.0, 2.0, 3.0, 4.0]


def test_the_get_stream_cut_is_reopened_from_its_last_event_id_and_the_sdk_replays_what_it_missed(
        shared_sdk_server):
    """The legacy GET stream carries the server's list_changed notices (its toggle_tool): a
    relay drops it right after the first and keeps the link down 5 s, the second is sent while
    it is down, and the client comes back with the first one's id: the SDK's server replays
    the second, once."""
    server = shared_sdk_server("--transport", "streamable-http", "--event-store")
    changed: list[str] = []
    with CuttingRelay(urlsplit(server.url).port, cut_after=b"notifications/tools/list_changed", hold=5,
                      cut_methods=(b"GET",)) as relay:
        with connect(relay.url(), protocol="legacy", timeout=60) as client:
            client.set_list_changed_handler(changed.append)
            wait_for(lambda: [link for link in relay.links if last_method(link.sent) == b"GET"
                              and link.received.rfind(b" 200 ") > link.received.rfind(b"HTTP/1.1 202")],
                     timeout=30, what="the GET stream open")
            assert client.call_tool("toggle_tool").text == "added"
            wait_for(lambda: relay.cut_link is not None, timeout=30, what="the GET stream cut")
            assert client.call_tool("toggle_tool").text == "removed"  # while the stream is down
            wait_for(lambda: len(changed) >= 2, timeout=30, what=lambda: f"two list changes (saw {changed})")
        cut = relay.cut_link
        last_id = re.findall(rb"(?m)^id: ?(\S+)", bytes(cut.received))[-1]
        resumed = [link for link in relay.links
                   if re.search(rb"(?im)^last-event-id: ?" + re.escape(last_id) + rb"\r$", bytes(link.sent))]
    assert last_method(cut.sent) == b"GET", "the GET stream was not the one cut"
    assert resumed, "the GET stream was not reopened from its last event id"
    assert changed == ["tools", "tools"]
