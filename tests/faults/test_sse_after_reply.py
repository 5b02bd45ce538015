"""A POST's SSE stream after its reply: the caller is freed at once, nothing after it is lost.

The caller's thread reads its POST's stream up to the reply. When all that is left is the
stream's end, received already (``stream_end_ready``), it reads that too and the connection goes
back to the pool with no other thread involved; otherwise a stream thread reads the rest. Real
sockets on 127.0.0.1: ``responses`` has no ``http.client`` underneath to look at.
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from typing import Any, Callable

import pytest
import requests

from mcpclient import Client, StreamableHTTPTransport
from mcpclient.transports import _threads, http
from mcpclient.transports._streams import stream_end_ready

from ..helpers import RELEASED_WITHIN, wait_for
from .ending_http import EndingServer


@pytest.fixture
def server(ending_servers):
    return ending_servers(reply="sse")


@pytest.fixture
def handed_off(monkeypatch) -> list[str]:
    """The names of the tasks given to a transport's stream threads."""
    names: list[str] = []
    original = _threads.ThreadPool.submit

    def recording(self, fn: Callable[..., None], *args: Any) -> bool:
        names.append(fn.__name__)
        return original(self, fn, *args)

    monkeypatch.setattr(_threads.ThreadPool, "submit", recording)
    return names


def connect(server: EndingServer) -> Client:
    client = Client(StreamableHTTPTransport(server.url), timeout=10, protocol="legacy")
    client.initialize()
    return client


def test_a_stream_that_ends_with_its_reply_is_read_whole_on_the_callers_thread(server, handed_off):
    with connect(server) as client:
        assert client.call_tool("work", {"mode": "after_reply", "after": "end"}).text == "done"
        accepted = server.accepted  # (the server closes the connection of the GET it refuses)
        for n in range(5):
            assert client.call_tool("work", {"mode": "after_reply", "after": "end", "text": f"r{n}"}).text == f"r{n}"
        assert server.accepted == accepted, "the connection was not reused"
    assert "_read_rest" not in handed_off
    assert "_drain" not in handed_off


def test_a_stream_kept_open_after_its_reply_frees_the_caller_and_loses_nothing(server, handed_off):
    logged = threading.Event()
    seen: list[Any] = []
    with connect(server) as client:
        client.set_log_handler(lambda level, data, logger: (seen.append(data), logged.set()))
        start = time.monotonic()
        # The event comes 6 s after the reply: a caller that waited for it is 3 s past the bound.
        out = client.call_tool("work", {"mode": "after_reply", "after": "late", "seconds": 6.0, "key": "late-1"})
        assert out.text == "done"
        assert time.monotonic() - start < 3.0, "the caller waited for the end of the stream"
        assert not logged.is_set()
        assert logged.wait(6 + RELEASED_WITHIN), "the event after the reply was lost"
        assert seen == ["late-1"]
        assert "_read_rest" in handed_off
        # The stream ended properly: its connection serves the next call.
        accepted = server.accepted
        time.sleep(0.1)
        assert client.call_tool("work", {"mode": "after_reply", "after": "end", "text": "next"}).text == "next"
        assert server.accepted == accepted


def test_a_stream_kept_open_after_its_reply_is_read_past_any_fixed_grace(server):
    # It used to be cut 5 s after the reply, although the server was still sending on it.
    logged = threading.Event()
    seen: list[Any] = []
    with connect(server) as client:
        client.set_log_handler(lambda level, data, logger: (seen.append(data), logged.set()))
        out = client.call_tool("work", {"mode": "after_reply", "after": "late", "seconds": 6.5, "key": "slow"})
        assert out.text == "done"
        assert logged.wait(12), "the event 6.5 s after the reply was lost"
        assert seen == ["slow"]


def test_streams_read_after_their_replies_are_bounded_in_number(server, monkeypatch, caplog):
    monkeypatch.setattr(http, "MAX_STREAMS_AFTER_REPLY", 1)
    with connect(server) as client, caplog.at_level("WARNING", logger="mcpclient.transports.http"):
        for key in ("kept", "cut"):
            out = client.call_tool("work", {"mode": "after_reply", "after": "late", "seconds": 30.0, "key": key})
            assert out.text == "done"
        assert server.gone["cut"].wait(RELEASED_WITHIN), "the stream past the bound was left open"
        assert not server.gone["kept"].is_set()
        assert any("already being read after their replies" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("after", ["split", "trailer"])
def test_an_end_that_is_not_plainly_here_does_not_hold_the_caller(server, handed_off, after):
    with connect(server) as client:
        start = time.monotonic()
        out = client.call_tool("work", {"mode": "after_reply", "after": after, "seconds": 6.0, "text": after})
        assert out.text == after
        assert time.monotonic() - start < 3.0  # not the 6 s until the rest of the end
        assert client.call_tool("work", {"mode": "after_reply", "after": "end", "text": "again"}).text == "again"
    assert "_read_rest" in handed_off


def test_close_ends_a_stream_read_after_its_reply(server):
    client = connect(server)
    out = client.call_tool("work", {"mode": "after_reply", "after": "late", "seconds": 30.0, "key": "held"})
    assert out.text == "done"
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < RELEASED_WITHIN
    assert server.gone["held"].wait(RELEASED_WITHIN), "the stream read after the reply was left open"


def test_ctrl_c_while_the_caller_reads_its_stream_closes_that_stream(server):
    """The caller's thread is in the stream's read (progress every 0.2 s, never a result)."""
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    with connect(server) as client:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            with pytest.raises(KeyboardInterrupt) as caught:
                client.call_tool("work", {"mode": "progress", "key": "interrupted"})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        assert server.arrived["interrupted"].is_set()
        assert server.gone["interrupted"].wait(RELEASED_WITHIN), "the interrupted stream was left open"
        assert caught.traceback  # (kept alive until here, as in the test below)
        assert client.call_tool("work", {"mode": "after_reply", "after": "end", "text": "after"}).text == "after"


def test_ctrl_c_landing_between_two_reads_of_the_stream_closes_it_too(server, monkeypatch):
    """urllib3 closes a connection whose read was interrupted; between reads it is ours to do."""
    original = StreamableHTTPTransport._deliver

    def interrupted(self, message, *args, **kwargs):
        if isinstance(message, dict) and message.get("method") == "notifications/progress":
            raise KeyboardInterrupt
        return original(self, message, *args, **kwargs)

    monkeypatch.setattr(StreamableHTTPTransport, "_deliver", interrupted)
    with connect(server) as client:
        with pytest.raises(KeyboardInterrupt) as caught:
            client.call_tool("work", {"mode": "progress", "key": "between"})
        # ``caught`` keeps the traceback's frames alive: the garbage collector closes nothing.
        assert server.gone["between"].wait(RELEASED_WITHIN), "the interrupted stream was left open"
        assert caught.traceback


def test_a_failure_reading_the_rest_of_a_stream_closes_it(server, monkeypatch, caplog):
    original = StreamableHTTPTransport._deliver

    def failing(self, message, *args, **kwargs):
        if isinstance(message, dict) and message.get("method") == "notifications/message":
            raise RuntimeError("a bug after the reply")
        return original(self, message, *args, **kwargs)

    monkeypatch.setattr(StreamableHTTPTransport, "_deliver", failing)
    with connect(server) as client:
        client.call_tool("work", {"mode": "after_reply", "after": "end"})  # (after the refused GET's close)
        ended = server.ended
        out = client.call_tool("work", {"mode": "after_reply", "after": "late", "seconds": 0.3, "key": "bug"})
        assert out.text == "done"
        deadline = time.monotonic() + RELEASED_WITHIN
        while server.ended == ended:  # closed by the client, not left to the garbage collector
            assert time.monotonic() < deadline, "the stream was left open after the failure"
            time.sleep(0.02)
        assert client.call_tool("work", {"mode": "after_reply", "after": "end", "text": "still"}).text == "still"
        # Logged by the stream thread, not lost (it logs once the stream is closed: wait for it).
        deadline = time.monotonic() + RELEASED_WITHIN
        while "a bug after the reply" not in caplog.text:
            assert time.monotonic() < deadline, "the failure was not logged"
            time.sleep(0.02)


# -- stream_end_ready on real responses ---------------------------------------------------------


class OneShot:
    """Answers one request with ``first``, then ``rest`` once ``release`` is set."""

    def __init__(self, first: bytes, rest: bytes = b"") -> None:
        self.first, self.rest = first, rest
        self.release = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self._listener.accept()
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            conn.sendall(self.first)
            if self.rest and self.release.wait(10):
                conn.sendall(self.rest)
            self.release.wait(10)
        self._listener.close()


CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
EVENT = b"data: x\n\n"
CHUNK = f"{len(EVENT):x}\r\n".encode() + EVENT + b"\r\n"


def first_event(server: OneShot) -> requests.Response:
    response = requests.get(server.url, stream=True, timeout=10)
    assert response.raw.read1(65536) == EVENT
    return response


def test_the_end_of_a_chunked_body_in_the_same_write_is_ready():
    server = OneShot(CHUNKED + CHUNK + b"0\r\n\r\n")
    response = first_event(server)
    wait_for(lambda: stream_end_ready(response), timeout=RELEASED_WITHIN)  # once every byte arrived
    assert response.raw.read1(65536) == b""  # it was the end indeed, read without blocking
    server.release.set()


def test_an_end_still_on_its_way_is_not_ready_and_then_is():
    server = OneShot(CHUNKED + CHUNK, b"0\r\n\r\n")
    response = first_event(server)
    assert not stream_end_ready(response)
    server.release.set()
    deadline = time.monotonic() + 5
    while not stream_end_ready(response):  # it came: the socket's bytes are looked at as well
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert response.raw.read1(65536) == b""


@pytest.mark.parametrize("rest", [b"5\r\nmore\n\r\n0\r\n\r\n", b"0\r\n"], ids=["another-chunk", "half-the-end"])
def test_anything_but_the_whole_end_is_not_ready(rest):
    server = OneShot(CHUNKED + CHUNK + rest)
    response = first_event(server)
    time.sleep(0.05)
    assert not stream_end_ready(response)
    server.release.set()
    response.close()


def test_a_close_delimited_body_is_never_ready():
    server = OneShot(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + EVENT)
    response = first_event(server)
    assert not stream_end_ready(response)
    server.release.set()
    response.close()


def test_a_body_read_to_its_content_length_is_ready():
    server = OneShot(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     + f"Content-Length: {len(EVENT)}\r\n\r\n".encode() + EVENT)
    response = first_event(server)
    assert stream_end_ready(response)
    server.release.set()
