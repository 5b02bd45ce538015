"""Hostile stdio servers: dying, silent, garbage-writing, flooding and never reading.

Each test runs a real server process (tests/faults/hostile_stdio.py) and checks the promise:
no call hangs, the reader thread survives anything it reads, only the call concerned fails,
and nothing (thread, process, file descriptor) is left behind.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

import pytest

from mcpclient import (
    Client,
    ConnectionClosed,
    ProtocolError,
    RequestTimeout,
    StdioTransport,
)
from mcpclient._core.options import CallOptions
from mcpclient._rpc import engine as engine_module
from tests.faults.conftest import HOSTILE, Lines, mcp_threads, pid_alive
from tests.helpers import RELEASED_WITHIN, wait_for

pytestmark = pytest.mark.timeout(60)


def open_client(*args: str, timeout: float = 10, **kwargs) -> tuple[Client, Lines]:
    lines = Lines()
    client = Client(StdioTransport(HOSTILE + list(args), stderr=lines), timeout=timeout, **kwargs)
    client.initialize()
    return client, lines


def reader_alive(client: Client) -> bool:
    return client._engine._reader.is_alive()


# -- a server that dies --------------------------------------------------------------------


@pytest.mark.parametrize("how", ["exit", "sigkill", "killed-by-someone-else"])
def test_a_server_dying_with_50_calls_pending_fails_them_all_within_a_second(how, usage):
    args = ["--die-at-pending", "50", "--die-how", how] if how != "killed-by-someone-else" else []
    client, lines = open_client(*args, timeout=30)
    pid = client.transport.pid
    errors: list[BaseException] = []
    failed_at: list[float] = []

    def call() -> None:
        try:
            client.call_tool("hang")
        except Exception as exc:  # noqa: BLE001 - every outcome is checked below
            errors.append(exc)
        failed_at.append(time.monotonic())

    threads = [threading.Thread(target=call) for _ in range(50)]
    for thread in threads:
        thread.start()
    wait_for(lambda: lines.starting("PENDING 50") or not pid_alive(pid), timeout=10)
    if how == "killed-by-someone-else":
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not pid_alive(pid), timeout=5)
    died = time.monotonic()
    for thread in threads:  # a call the death did not end would end by its 30 s timeout
        thread.join(max(0.0, died + RELEASED_WITHIN - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads)
    assert len(errors) == 50
    assert max(failed_at) - died < RELEASED_WITHIN
    assert all(isinstance(e, ConnectionClosed) for e in errors), {type(e) for e in errors}
    expected = "exited with code 3" if how == "exit" else "killed by signal SIGKILL"
    assert all(expected in str(e) for e in errors), str(errors[0])
    assert errors[0].exit_code == (3 if how == "exit" else -signal.SIGKILL)
    t0 = time.monotonic()
    with pytest.raises(ConnectionClosed):
        client.ping()  # later calls fail at once too (not by the 30 s timeout)
    assert time.monotonic() - t0 < RELEASED_WITHIN
    client.close()
    usage.assert_released()


# -- a server that never answers -----------------------------------------------------------


@pytest.mark.above_pipes("the engine's timeout")
def test_an_unanswered_call_times_out_the_server_sees_the_cancellation_and_the_client_goes_on():
    client, lines = open_client(timeout=60)  # a call that ignored its own timeout: 60 s
    try:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("hang", timeout=0.3)
        assert time.monotonic() - t0 < 0.3 + RELEASED_WITHIN
        (call,) = [line for line in lines.snapshot() if line.startswith("GOT tools/call")]
        call_id = call.split()[2]
        cancel = wait_for(lambda: lines.starting("GOT notifications/cancelled"))[0]
        assert f'"requestId": {call_id}' in cancel
        assert client.call_tool("echo", {"text": "still usable"}).text == "still usable"
        assert reader_alive(client)
    finally:
        client.close()


# -- a server that writes garbage ----------------------------------------------------------

SKIPPED_GARBAGE = [
    "not_json",
    "not_jsonrpc",
    "binary",
    "invalid_utf8",
    "invalid_utf8_in_json",
    "deep_arrays",
    "deep_objects",
    "deep_params",
    "bad_ids",
    "bad_requests",
    "blank_lines",
    pytest.param("huge_line", marks=pytest.mark.slow),
]


@pytest.mark.above_pipes("the framing and the engine")
@pytest.mark.parametrize("kind", SKIPPED_GARBAGE)
def test_garbage_is_logged_and_skipped_and_the_reader_survives(kind, caplog):
    client, lines = open_client()
    try:
        with caplog.at_level(logging.DEBUG, logger="mcpclient"):
            assert client.call_tool("garbage", {"kind": kind}).text == "after garbage"
            for i in range(3):
                assert client.call_tool("echo", {"text": f"next {i}"}).text == f"next {i}"
        assert reader_alive(client)
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [
            r.getMessage()[:200] for r in caplog.records if r.levelno >= logging.ERROR
        ]
    finally:
        client.close()


@pytest.mark.above_pipes("the engine")
def test_a_duplicate_reply_is_dropped_and_never_reaches_the_next_call():
    client, _ = open_client()
    try:
        assert client.call_tool("garbage", {"kind": "duplicate_reply"}).text == "first"
        for i in range(20):
            assert client.call_tool("echo", {"text": str(i)}).text == str(i)
    finally:
        client.close()


@pytest.mark.above_pipes("the engine")
@pytest.mark.parametrize("kind", ["result_and_error", "error_not_object", "result_not_object"])
def test_a_malformed_reply_fails_only_the_call_concerned(kind):
    client, _ = open_client()
    try:
        with pytest.raises(ProtocolError):
            client.call_tool("garbage", {"kind": kind})
        assert client.call_tool("echo", {"text": "fine"}).text == "fine"
        assert reader_alive(client)
    finally:
        client.close()


@pytest.mark.above_pipes("the engine")
def test_a_reply_to_an_unknown_id_leaves_the_real_call_to_time_out_alone():
    client, _ = open_client()
    try:
        with pytest.raises(RequestTimeout):
            client.call_tool("garbage", {"kind": "unknown_id_only"}, timeout=0.3)
        assert client.call_tool("echo", {"text": "fine"}).text == "fine"
    finally:
        client.close()


@pytest.mark.above_pipes("the handlers")
def test_server_requests_with_bad_shapes_get_error_replies_and_the_client_goes_on():
    client, lines = open_client()
    try:
        assert client.call_tool("garbage", {"kind": "bad_requests"}).text == "after garbage"
        wait_for(lambda: len(lines.starting("GOT <reply>")) >= 3)
        replies = " ".join(lines.starting("GOT <reply>"))
        assert '"s1"' in replies and '"s2"' in replies
        assert client.call_tool("echo", {"text": "fine"}).text == "fine"
    finally:
        client.close()


# -- a server that floods ------------------------------------------------------------------


@pytest.mark.above_pipes("the dispatch pool")
def test_100k_notifications_with_a_handler_stuck_forever_do_not_stop_replies_or_close(caplog):
    client, lines = open_client(timeout=30)
    release = threading.Event()
    handled = []

    def stuck(method, params):
        handled.append(method)
        release.wait(60)  # "forever": released only after close() has returned

    client.set_notification_handler(stuck)
    mismatches: list[str] = []

    def caller(n: int) -> None:
        for i in range(200):
            text = f"{n}-{i}"
            got = client.call_tool("echo", {"text": text}).text
            if got != text:
                mismatches.append(f"{text} != {got}")

    try:
        with caplog.at_level(logging.WARNING, logger="mcpclient"):
            assert client.call_tool("flood", {"count": 100_000}).text == "flooding"
            callers = [threading.Thread(target=caller, args=(n,)) for n in range(4)]
            for thread in callers:
                thread.start()
            for thread in callers:
                thread.join(30)
            assert not any(thread.is_alive() for thread in callers)
            wait_for(lambda: lines.starting("FLOODED"), timeout=30)
            client.ping()  # the last notifications have been read
        assert mismatches == []
        engine = client._engine
        assert engine._dispatch.dropped > 0
        assert len(handled) <= 16  # only the workers ever got one; the rest queued or dropped
        assert any("dispatch pool full" in r.getMessage() for r in caplog.records)
        assert sum("dispatch pool full" in r.getMessage() for r in caplog.records) < 200  # rate-limited
    finally:
        t0 = time.monotonic()
        client.close()
        closing = time.monotonic() - t0
        release.set()
    assert closing < engine_module.DISPATCH_GRACE + 3


@pytest.mark.above_pipes("the dispatch pool")
def test_a_flood_of_server_requests_is_answered_or_refused_never_hangs():
    client, lines = open_client(timeout=30)
    try:
        assert client.call_tool("ask", {"count": 2000}).text == "asked"
        wait_for(lambda: len(lines.starting("GOT <reply>")) >= 2000, timeout=20)
        assert client.call_tool("echo", {"text": "fine"}).text == "fine"
    finally:
        client.close()


# -- a server that floods stderr and never reads stdin -------------------------------------


def test_a_server_flooding_stderr_and_never_reading_stdin_cannot_deadlock_the_client(usage):
    lines = Lines()
    # The client's timeout (60 s) is what a call that ignored its own would wait.
    client = Client(StdioTransport(HOSTILE + ["--no-read", "--stderr-flood"], stderr=lines), timeout=60)
    try:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.initialize(timeout=0.5)
        assert time.monotonic() - t0 < 0.5 + RELEASED_WITHIN
        # A request too big for the pipe: the write gives up instead of blocking forever.
        t0 = time.monotonic()
        with pytest.raises((RequestTimeout, ConnectionClosed)):
            client._engine.request("tools/call", {"pad": "x" * 2_000_000}, CallOptions(0.5))
        assert time.monotonic() - t0 < 0.5 + RELEASED_WITHIN
        wait_for(lambda: len(lines.snapshot()) > 10_000, timeout=10)  # stderr is drained all along
    finally:
        t0 = time.monotonic()
        client.close()  # its grace and SIGTERM's (4 s), then SIGKILL; a close that hung would not end
        assert time.monotonic() - t0 < 4 + RELEASED_WITHIN
    assert not mcp_threads() or wait_for(lambda: not mcp_threads())
    usage.assert_released()
