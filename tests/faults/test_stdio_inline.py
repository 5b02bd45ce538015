"""Stdio's inline reads: a caller reads its own reply from the pipe when nobody else reads.

The engine lends the pipe to callers after a reply leaves no call waiting (see
``mcpclient/_rpc/engine.py``). These tests pin what that must never change: replies still
pair with their calls under concurrency, a reply cut by a long pause still arrives (the
reader thread takes over when the caller's budget runs out), a notification sent while no
call waits still reaches its handler, and timeouts, cancels and the server's death still end
a call that is reading inline. Against a real process (tests/faults/hostile_stdio.py).
"""

from __future__ import annotations

import threading
import time

import pytest

from mcpclient import (
    CancelToken,
    Client,
    ClientClosedError,
    ConnectionClosed,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    RPCError,
    StdioTransport,
)
from mcpclient._rpc import engine as engine_module
from tests.faults.conftest import HOSTILE, Lines, echo_from_threads
from tests.helpers import RELEASED_WITHIN, wait_for

pytestmark = pytest.mark.timeout(60)


class WhoReads(StdioTransport):
    """Remembers, for every reply it read, which thread read it and through which method."""

    def __init__(self, *args, **kwargs) -> None:
        self.replies: list[tuple[str, str]] = []
        super().__init__(*args, **kwargs)

    def receive(self):
        return self._note(super().receive(), "receive")

    def receive_within(self, timeout, spin=0.0):
        return self._note(super().receive_within(timeout, spin), "receive_within")

    def _note(self, message, how):
        if isinstance(message, dict) and "method" not in message:
            self.replies.append((threading.current_thread().name, how))
        return message


def open_client(*args: str, timeout: float | None = 15) -> tuple[Client, WhoReads, Lines]:
    lines = Lines()
    transport = WhoReads(HOSTILE + list(args), stderr=lines)
    client = Client(transport, timeout=timeout, protocol="legacy")
    client.initialize()
    return client, transport, lines


def test_sequential_calls_read_their_own_replies_on_the_calling_thread():
    client, transport, _ = open_client()
    with client:
        del transport.replies[:]
        for i in range(50):
            assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
    me = threading.current_thread().name
    inline = [entry for entry in transport.replies if entry == (me, "receive_within")]
    # Each reply read by the reader thread lends the pipe out again: nearly all are inline.
    assert len(inline) >= 40, transport.replies
    assert all(how == "receive" for name, how in transport.replies if name != me)


def test_concurrent_callers_each_get_their_own_reply_with_notifications_flowing():
    client, transport, lines = open_client()
    notified = []
    client.set_notification_handler(lambda method, params: notified.append(method))
    with client:
        # Fewer than the dispatch queue holds, so none may be dropped.
        client.call_tool("flood", {"count": 1000, "method": "notifications/flood"})
        assert echo_from_threads(client, threads=8, calls=150, timeout=30) == []
        assert wait_for(lambda: lines.starting("FLOODED"))
        assert wait_for(lambda: notified.count("notifications/flood") == 1000, timeout=10)
    readers = {name for name, _ in transport.replies}
    assert "mcpclient-reader" in readers and len(readers) > 1, readers  # both ways were taken


def test_a_reply_cut_by_a_pause_longer_than_the_inline_budget_still_arrives():
    client, transport, _ = open_client()
    pause = engine_module.INLINE_READ_BUDGET * 10
    with client:
        del transport.replies[:]
        start = time.monotonic()
        assert client.call_tool("trickle", {"text": "whole", "pause": pause}).text == "whole"
        assert time.monotonic() - start >= pause
        # The caller gave up its read after its budget; the reader thread read the rest.
        assert transport.replies[-1] == ("mcpclient-reader", "receive")
        assert client.call_tool("echo", {"text": "next"}).text == "next"


def test_a_notification_sent_while_no_call_waits_reaches_its_handler():
    client, _, _ = open_client()
    arrived = threading.Event()
    client.set_notification_handler(
        lambda method, params: arrived.set() if method == "notifications/later" else None
    )
    with client:
        client.call_tool("later", {"delay": 0.3})
        # Nobody calls again: the reader thread takes the pipe back and reads it.
        assert arrived.wait(RELEASED_WITHIN)


def test_a_timeout_shorter_than_the_inline_budget_ends_the_call_and_tells_the_server():
    client, _, lines = open_client()
    with client:
        client.call_tool("echo", {"text": "warm"})  # the pipe is lent out now
        start = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("hang", timeout=engine_module.INLINE_READ_BUDGET / 4)
        assert time.monotonic() - start < RELEASED_WITHIN
        assert wait_for(lambda: lines.starting("GOT notifications/cancelled"))
        assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_a_cancel_ends_a_call_that_reads_inline():
    client, _, lines = open_client(timeout=None)
    with client:
        client.call_tool("echo", {"text": "warm"})
        token = CancelToken()
        threading.Timer(engine_module.INLINE_READ_BUDGET / 4, token.cancel).start()
        start = time.monotonic()
        with pytest.raises(RequestCancelled):
            client.call_tool("hang", cancel=token)
        assert time.monotonic() - start < RELEASED_WITHIN
        assert wait_for(lambda: lines.starting("GOT notifications/cancelled"))


def test_the_server_dying_under_a_call_that_reads_inline_ends_it_at_once():
    client, _, _ = open_client("--die-at-pending", "1", timeout=None)
    with client:
        client.call_tool("echo", {"text": "warm"})
        start = time.monotonic()
        with pytest.raises(ConnectionClosed) as info:
            client.call_tool("hang")
        assert time.monotonic() - start < RELEASED_WITHIN
        assert info.value.exit_code == 3
        with pytest.raises(ConnectionClosed):
            client.call_tool("echo", {"text": "dead"})


def test_close_from_another_thread_ends_a_call_that_reads_inline():
    client, _, _ = open_client(timeout=None)
    client.call_tool("echo", {"text": "warm"})
    threading.Timer(engine_module.INLINE_READ_BUDGET / 4, client.close).start()
    start = time.monotonic()
    with pytest.raises((ClientClosedError, ConnectionClosed)):
        client.call_tool("hang")
    assert time.monotonic() - start < RELEASED_WITHIN


def test_a_late_set_on_the_reused_event_does_not_end_a_call_reading_inline(monkeypatch):
    # The thread's Event is handed from call to call (engine._ThreadEvents); a set() meant
    # for the call before ends this call's inline read early, and the call waits on.
    monkeypatch.setattr(engine_module, "INLINE_READ_BUDGET", 5.0)  # the set comes mid-read
    client, transport, _ = open_client()
    with client:
        assert client.call_tool("echo", {"text": "first"}).text == "first"
        event = engine_module._events.free
        timer = threading.Timer(0.1, event.set)
        timer.start()
        start = time.monotonic()
        assert client.call_tool("trickle", {"text": "late", "pause": 0.4}).text == "late"
        took = time.monotonic() - start
        timer.join()
        assert took >= 0.35, took
        assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_replies_read_inline_keep_their_meaning():
    # A caller reading inline takes its own reply without the reader's routing: an error
    # reply still raises with its code, a reply with both result and error still fails, and
    # the replies of calls that went before still reach them.
    client, transport, _ = open_client()
    me = threading.current_thread().name
    with client:
        del transport.replies[:]
        with pytest.raises(RPCError) as caught:
            client.call_tool("no-such-tool", {})
        assert caught.value.code == -32602
        with pytest.raises(ProtocolError):
            client.call_tool("garbage", {"kind": "result_and_error"})
        assert client.call_tool("echo", {"text": "still"}).text == "still"
        assert (me, "receive_within") in transport.replies  # (they were read inline)
