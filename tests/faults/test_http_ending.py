"""Every HTTP call ends: by close(), its cancel, its timeout or the server's death, whatever
the server withholds or trickles; replies are capped by max_message_bytes.

Real sockets on 127.0.0.1 (tests/faults/ending_http.py). Each caller runs in a thread; the
server sets an Event once it has read the request, so the ending is applied to a call known
to be in flight. Release times are asserted loosely (under 2 s).
"""

from __future__ import annotations

import logging
import threading
import time
import tracemalloc
import uuid
from typing import Any, Callable

import pytest

from mcpclient import (
    CancelToken,
    Client,
    ClientClosedError,
    ConnectionClosed,
    MCPError,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    SSETransport,
    StreamableHTTPTransport,
)
from mcpclient.transports._sse_parser import SSEParser
from tests.faults.ending_http import EndingServer
from tests.helpers import RELEASED_WITHIN, BackgroundCall

pytestmark = pytest.mark.timeout(60)


STREAMABLE = {
    "json-stateful": dict(reply="json"),
    "sse-stateful": dict(reply="sse"),
    "json-stateless": dict(reply="json", stateless=True),
    "sse-stateless": dict(reply="sse", stateless=True),
    # The 2026-07-28 era (no session, so stateless; a cancel is the end of the request's stream).
    "json-modern": dict(reply="json", modern=True),
    "sse-modern": dict(reply="sse", modern=True),
}
ALL = [*STREAMABLE, "legacy-sse"]


def connect(server: EndingServer, **kwargs: Any) -> Client:
    if server.legacy_sse:
        transport: Any = SSETransport(server.url, **kwargs)
    else:
        transport = StreamableHTTPTransport(server.url, **kwargs)
    client = Client(transport, timeout=None, protocol="2026-07-28" if server.modern else "legacy")
    client.initialize()
    assert client.protocol_version == ("2026-07-28" if server.modern else "2025-11-25")
    return client


def server_for(ending_servers: Callable[..., EndingServer], kind: str) -> EndingServer:
    return ending_servers(legacy_sse=True) if kind == "legacy-sse" else ending_servers(**STREAMABLE[kind])


class Call(BackgroundCall):
    """``call_tool("work", args)`` on its own thread; ``key`` names it to the server."""

    def __init__(self, client: Client, args: dict[str, Any], **kwargs: Any) -> None:
        self.key = args.setdefault("key", uuid.uuid4().hex)
        super().__init__(client, "work", args, **kwargs)


# -- the matrix: transports x endings ----------------------------------------------------------


@pytest.mark.parametrize("kind", ALL)
def test_close_releases_every_pending_call_at_once(ending_servers, kind):
    server = server_for(ending_servers, kind)
    client = connect(server)
    calls = [Call(client, {"mode": "hold"}) for _ in range(3)]
    if kind == "legacy-sse":  # one call whose POST was accepted, its reply never sent
        calls.append(Call(client, {"mode": "noreply"}))
    for call in calls:
        assert server.arrived[call.key].wait(5)
    start = time.monotonic()
    closer = threading.Thread(target=client.close, daemon=True)
    closer.start()
    for call in calls:
        assert isinstance(call.released_within(start), (ClientClosedError, ConnectionClosed))
    closer.join(RELEASED_WITHIN)
    assert not closer.is_alive(), "close() itself blocked"
    for call in calls[:3]:
        assert server.gone[call.key].wait(RELEASED_WITHIN), "the held connection was not closed"


@pytest.mark.parametrize("cancel_kind", ["token", "event"])
@pytest.mark.parametrize("kind", ALL)
def test_a_cancel_ends_a_call_waiting_for_headers_and_closes_its_connection(ending_servers, kind, cancel_kind):
    """``cancel=`` takes a ``CancelToken`` or a plain ``threading.Event``, which has no
    callbacks: either way a call whose sending thread is blocked on the headers must end within
    a second of the cancel, and its connection be closed."""
    server = server_for(ending_servers, kind)
    with connect(server) as client:
        cancel = CancelToken() if cancel_kind == "token" else threading.Event()
        call = Call(client, {"mode": "hold"}, cancel=cancel)
        assert server.arrived[call.key].wait(5)
        start = time.monotonic()
        cancel.cancel() if isinstance(cancel, CancelToken) else cancel.set()
        assert isinstance(call.released_within(start), RequestCancelled)
        assert server.gone[call.key].wait(RELEASED_WITHIN), "the cancelled request's connection stayed open"
        assert client.call_tool("work", {"key": "after"}).text == "done"


@pytest.mark.parametrize("kind", ALL)
def test_the_timeout_holds_against_a_silent_server(ending_servers, kind):
    server = server_for(ending_servers, kind)
    with connect(server) as client:
        start = time.monotonic()
        call = Call(client, {"mode": "hold"}, timeout=1)
        assert isinstance(call.released_within(start, 1 + RELEASED_WITHIN), RequestTimeout)


@pytest.mark.parametrize("mode", ["trickle_headers", "trickle_body"])
@pytest.mark.parametrize("kind", list(STREAMABLE))
def test_the_timeout_holds_for_the_whole_reply_of_a_trickling_server(ending_servers, kind, mode):
    server = server_for(ending_servers, kind)
    with connect(server) as client:
        start = time.monotonic()
        call = Call(client, {"mode": mode}, timeout=1)
        assert isinstance(call.released_within(start, 1 + RELEASED_WITHIN), RequestTimeout)
        assert server.gone[call.key].wait(RELEASED_WITHIN), "the trickling exchange was not aborted"


@pytest.mark.parametrize("content_type", ["application/json", "text/event-stream"])
@pytest.mark.parametrize("kind", list(STREAMABLE))
def test_close_is_quick_while_a_close_delimited_reply_is_being_read(ending_servers, kind, content_type):
    server = server_for(ending_servers, kind)
    client = connect(server)
    call = Call(client, {"mode": "close_delimited", "content_type": content_type})
    assert server.arrived[call.key].wait(5)
    time.sleep(0.1)  # let the headers be read: the body read is what must be interrupted
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < RELEASED_WITHIN, "close() blocked"
    assert isinstance(call.released_within(start), (ClientClosedError, ConnectionClosed))
    assert server.gone[call.key].wait(RELEASED_WITHIN)


@pytest.mark.parametrize("kind", ALL)
def test_server_death_releases_a_pending_call(ending_servers, kind):
    server = server_for(ending_servers, kind)
    with connect(server) as client:
        call = Call(client, {"mode": "hold"})
        assert server.arrived[call.key].wait(5)
        start = time.monotonic()
        server.kill()
        assert isinstance(call.released_within(start), MCPError)


@pytest.mark.parametrize("kind", ["sse-stateless", "sse-modern"])
def test_a_call_kept_alive_by_progress_is_cancelled_by_ending_its_stream(ending_servers, kind):
    # A stateless server (legacy or 2026-07-28) has no session to send notifications/cancelled
    # to: the end of the request's own stream is the cancellation, and the server must see it.
    server = server_for(ending_servers, kind)
    with connect(server) as client:
        seen: list[float] = []
        start = time.monotonic()
        call = Call(client, {"mode": "progress"}, timeout=0.5, max_total=1.5,
                    on_progress=lambda progress, total, message: seen.append(progress))
        error = call.released_within(start, 1.5 + RELEASED_WITHIN)
        assert isinstance(error, RequestTimeout)
        assert len(seen) >= 5, "progress did not keep the stream alive past its idle timeout"
        assert server.gone[call.key].wait(RELEASED_WITHIN), "the request's stream stayed open after the timeout"
        assert "max_total=1.5s" in str(error) and "told to cancel" in str(error), str(error)


def test_a_connection_dropped_on_the_era_probe_goes_straight_to_initialize(ending_servers, caplog):
    # An HTTP server that drops the probe's connection is taken for legacy, like a stdio
    # server the probe killed: the client initializes at once and remembers it.
    from mcpclient._client.conversation import _era_cache

    server = ending_servers(drop_discover=True)
    caplog.set_level(logging.DEBUG, logger="mcpclient")
    start = time.monotonic()
    with Client(StreamableHTTPTransport(server.url), timeout=60) as client:  # a probe left to time out: 60 s
        assert time.monotonic() - start < RELEASED_WITHIN
        assert client.protocol_version == "2025-11-25"
        assert client.call_tool("work", {"key": "k"}).text == "done"
        assert _era_cache[client.transport.about.server_key] == "legacy"
    assert server.arrived["server/discover"].is_set()
    assert any("server/discover" in r.getMessage() for r in caplog.records), "nothing said what happened"


# -- streams, backoff, ids, sizes -----------------------------------------------------------------


def test_close_is_quick_with_a_close_delimited_get_stream(ending_servers):
    server = ending_servers(get_stream="close_delimited")
    client = connect(server)
    assert server.stream_open.wait(5)
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < RELEASED_WITHIN
    assert server.stream_gone.wait(RELEASED_WITHIN)


def test_the_sse_transport_closes_at_once_on_a_silent_close_delimited_stream(ending_servers):
    server = ending_servers(legacy_sse=True)
    client = connect(server)
    assert server.stream_open.wait(5)
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < RELEASED_WITHIN
    assert server.stream_gone.wait(RELEASED_WITHIN)


@pytest.mark.parametrize("framing", ["chunked", "close_delimited"])
def test_a_normal_close_logs_no_error_about_the_get_stream(ending_servers, caplog, framing):
    server = ending_servers(get_stream=framing)
    client = connect(server)
    assert server.stream_open.wait(5)
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):
        client.close()
        time.sleep(0.2)  # the listening thread logs, if it does, as it wakes
    noisy = [r.getMessage() for r in caplog.records if "broke" in r.getMessage() or "Error" in r.getMessage()]
    assert not noisy


@pytest.mark.parametrize("ending", ["cancel", "close"])
def test_a_retry_after_backoff_ends_on_cancel_and_close_and_never_resends(ending_servers, ending):
    server = ending_servers(reply="json")
    transport = StreamableHTTPTransport(server.url, max_retries=2)
    client = Client(transport, timeout=None, protocol="legacy")
    client.initialize()
    token = CancelToken()
    call = Call(client, {"mode": "retry_after", "seconds": 30}, cancel=token)  # a wait for it: 30 s
    assert server.arrived[call.key].wait(5)
    time.sleep(0.1)  # the 503 is read and the backoff begun
    start = time.monotonic()
    if ending == "cancel":
        token.cancel()
        assert isinstance(call.released_within(start), RequestCancelled)
    else:
        client.close()
        assert isinstance(call.released_within(start), (ClientClosedError, ConnectionClosed))
    # The caller's own thread ran the backoff and has returned: no re-send can follow.
    assert server.posts[call.key] == 1
    assert server.executions[call.key] == 0
    client.close()


@pytest.mark.parametrize("stateless", [False, True])
def test_a_json_reply_with_another_id_fails_its_call_at_once(ending_servers, stateless):
    server = ending_servers(reply="json", stateless=stateless)
    with connect(server) as client:
        start = time.monotonic()
        with pytest.raises(ProtocolError, match="does not carry its id"):
            client.call_tool("work", {"mode": "wrong_id"}, timeout=30)
        assert time.monotonic() - start < RELEASED_WITHIN
        assert client.call_tool("work", {}).text == "done"


@pytest.mark.parametrize("reply", ["json", "sse"])
def test_a_gzip_bomb_stops_at_max_message_bytes_without_inflating(ending_servers, reply):
    server = ending_servers(reply=reply)
    with connect(server, max_message_bytes=1 << 20) as client:
        tracemalloc.start()
        try:
            with pytest.raises(ProtocolError, match="max_message_bytes") as info:
                client.call_tool("work", {"mode": "gzip", "size": 48 << 20}, timeout=30)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert "1048576" in str(info.value)
        assert peak < 24 << 20, f"peak {peak >> 20} MiB"
        assert client.call_tool("work", {"mode": "gzip", "size": 512 << 10}, timeout=30).text == "a" * (512 << 10)


def test_the_default_cap_refuses_a_reply_past_64_mib(ending_servers):
    server = ending_servers(reply="json")
    with connect(server) as client:
        assert client.transport.max_message_bytes == 64 << 20
        with pytest.raises(ProtocolError, match="max_message_bytes"):
            client.call_tool("work", {"mode": "gzip", "size": 66 << 20}, timeout=30)


def test_an_oversize_event_drops_the_sse_transport_stream(ending_servers):
    server = ending_servers(legacy_sse=True)
    client = connect(server, max_message_bytes=1 << 20)
    with pytest.raises(ConnectionClosed, match="max_message_bytes"):
        client.call_tool("work", {"mode": "big_event", "size": 2 << 20}, timeout=10)
    client.close()


def test_the_sse_parser_caps_lines_and_events():
    parser = SSEParser(max_bytes=100)
    assert [e.data for e in parser.feed(b"data: " + b"x" * 90 + b"\n\n")] == [b"x" * 90]
    with pytest.raises(ProtocolError, match="max_message_bytes"):
        parser.feed(b"data: " + b"x" * 200)  # one unterminated line
    parser = SSEParser(max_bytes=100)
    with pytest.raises(ProtocolError, match="max_message_bytes"):
        for _ in range(5):
            parser.feed(b"data: " + b"x" * 30 + b"\n")  # one event of many lines


@pytest.mark.parametrize("ending", ["close", "cancel"])
def test_with_a_user_session_callers_are_released_all_the_same(ending_servers, ending):
    import requests

    server = ending_servers(reply="sse", stateless=True)
    client = connect(server, session=requests.Session())
    token = CancelToken()
    call = Call(client, {"mode": "hold"}, cancel=token)
    assert server.arrived[call.key].wait(5)
    start = time.monotonic()
    if ending == "close":
        client.close()
        assert isinstance(call.released_within(start), (ClientClosedError, ConnectionClosed))
    else:
        token.cancel()
        assert isinstance(call.released_within(start), RequestCancelled)
        client.close()


def test_a_cancel_that_beats_its_exchange_still_ends_it():
    from mcpclient.transports._exchange import CANCELLED, Exchanges

    exchanges = Exchanges("test")
    assert not exchanges.abort(7, CANCELLED)  # the cancel comes first...
    exchange = exchanges.open("'tools/call'", None, 7)  # ...then the send opens the exchange
    with pytest.raises(RequestCancelled):
        exchange.check()
    assert exchanges.open("'tools/call'", None, 8).reason is None
    exchanges.stop()


@pytest.mark.parametrize("reply", ["json", "sse"])
def test_a_plain_reply_over_max_message_bytes_fails_its_call(ending_servers, reply):
    server = ending_servers(reply=reply)
    with connect(server, max_message_bytes=10_000) as client:
        with pytest.raises(ProtocolError, match="max_message_bytes"):
            client.call_tool("work", {"text": "x" * 20_000}, timeout=10)
        assert client.call_tool("work", {"text": "y" * 5_000}, timeout=10).text == "y" * 5_000


def test_the_deadline_watchdog_comes_back_after_idling_out():
    from mcpclient.transports import _exchange

    exchanges = _exchange.Exchanges("test")
    first = exchanges.open("first", time.monotonic() + 0.2)
    assert first.wait(RELEASED_WITHIN) and first.reason == _exchange.TIMEOUT
    exchanges.end(first)
    deadline = time.monotonic() + _exchange.IDLE_EXIT + 2
    while exchanges._thread is not None and time.monotonic() < deadline:  # it idles out...
        time.sleep(0.05)
    assert exchanges._thread is None
    second = exchanges.open("second", time.monotonic() + 0.2)  # ...and the next deadline restarts it
    assert second.wait(RELEASED_WITHIN) and second.reason == _exchange.TIMEOUT
    exchanges.stop()
