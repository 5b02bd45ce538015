"""Stdio endings the pipes alone do not show, against real processes (tests/faults/hostile_stdio.py).

* The server exits while a helper process it started (which inherited its stdout) lives on:
  the end of output never comes, yet the server's exit is the end of the connection. Pending
  and later calls fail within about a second, what the server wrote before it exited still
  arrives, and ``close()`` is quick and leaves nothing behind, even when the helper sits in a
  session of its own (where closing the server's process group cannot reach it).
* A server that stops reading its stdin, sent a message larger than a pipe holds: the call
  ends at its deadline, with an error that says why the connection cannot go on (half a
  message is on the pipe), also when the server ignores SIGTERM.
* A line of many megabytes that cannot be JSON-RPC costs no memory while it is skipped
  (measured in a process of its own).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from mcpclient import Client, ConnectionClosed, RequestTimeout, StdioTransport
from mcpclient.transports import _stdio_posix
from mcpclient.transports._stdio_pipes import choose
from tests.faults.conftest import HOSTILE, Lines, pid_alive
from tests.helpers import RELEASED_WITHIN, BackgroundCall, wait_for

pytestmark = pytest.mark.timeout(60)

ERAS = {"legacy": (), "2026-07-28": ("--modern",)}
HELPERS = {"same-session": False, "own-session": True}


def open_client(era: str, *args: str) -> tuple[Client, Lines]:
    lines = Lines()
    client = Client(StdioTransport(HOSTILE + list(ERAS[era]) + list(args), stderr=lines), timeout=None,
                    protocol=era)
    client.initialize()
    return client, lines


def closed_within(client: Client, seconds: float = RELEASED_WITHIN) -> None:
    start = time.monotonic()
    client.close()
    took = time.monotonic() - start
    assert took < seconds, f"close() took {took:.1f}s"


#: Why a helper in a session of its own is not used with the portable pipes on POSIX.
OWN_SESSION = (
    "the portable pipes' reader thread, blocked on a pipe a process outside the server's tree holds, "
    "ends only when that process does (on Windows the Job Object ends it with the server)"
)


def client_pipes() -> str:
    """The kind of pipes the clients of this test get (see ``StdioTransport``)."""
    return choose(None)


def own_session() -> bool:
    """Whether the helper may sit in a session of its own: not with the portable pipes."""
    return client_pipes() == "posix"


def kill(pid: int | None) -> None:
    if pid is not None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# -- the server exits while a process it started holds its stdout ---------------------------


@pytest.fixture(params=["pidfd", "polling"])
def watch(request, monkeypatch, stdio_pipes):
    """How the server's process is watched: its pidfd, or (where there is none, and on the
    portable pipes) a look at it every EXIT_POLL_INTERVAL."""
    if stdio_pipes == "portable" and request.param == "pidfd":
        pytest.skip("the portable pipes have no pidfd: they look at the process")
    if request.param == "polling":
        monkeypatch.setattr(_stdio_posix, "open_pidfd", lambda pid: -1)
    elif not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd here")
    return request.param


@pytest.mark.parametrize("helper", HELPERS)
@pytest.mark.parametrize("era", ERAS)
def test_the_server_s_death_ends_the_connection_while_its_helper_holds_stdout(era, helper, watch, usage):
    if HELPERS[helper] and not own_session():
        pytest.skip(OWN_SESSION)
    client, lines = open_client(era)
    if client.transport.pipes == "posix":
        assert (client.transport._pipes.pidfd >= 0) == (watch == "pidfd")
    helper_pid = None
    try:
        helper_pid = int(client.call_tool("helper", {"session": HELPERS[helper]}).text)
        calls = [BackgroundCall(client, "hang") for _ in range(3)]  # timeout=None: only the death ends them
        assert wait_for(lambda: len(lines.starting("PENDING")) >= 3), "the calls never reached the server"
        start = time.monotonic()
        os.kill(client.transport.pid, signal.SIGKILL)
        for call in calls:
            error = call.released_within(start)
            assert isinstance(error, ConnectionClosed) and "SIGKILL" in str(error), error
        start = time.monotonic()
        with pytest.raises(ConnectionClosed, match="SIGKILL"):
            client.call_tool("echo", {"text": "later"})
        assert time.monotonic() - start < RELEASED_WITHIN
        assert pid_alive(helper_pid), "the helper died: the test would not show what it claims"
        closed_within(client)
        usage.assert_released()  # the reader and stderr threads, and their pipes, are gone
    finally:
        client.close()
        kill(helper_pid)


@pytest.mark.parametrize("era", ERAS)
def test_what_the_server_wrote_before_it_exited_arrives_and_then_its_exit_ends_the_rest(era, watch, usage):
    client, lines = open_client(era)
    helper_pid = None
    try:
        helper_pid = int(client.call_tool("helper", {"session": own_session()}).text)
        waiting = BackgroundCall(client, "hang")
        assert wait_for(lambda: lines.starting("PENDING")), "the call never reached the server"
        start = time.monotonic()
        # Its answer and then its exit: the answer is read first, the waiting call fails after.
        assert client.call_tool("die", {"code": 3, "answer": True}).text == "last words"
        error = waiting.released_within(start)
        assert isinstance(error, ConnectionClosed) and "code 3" in str(error), error
        assert pid_alive(helper_pid)
        closed_within(client)
        usage.assert_released()
    finally:
        client.close()
        kill(helper_pid)


def test_a_write_waiting_on_a_full_pipe_ends_when_the_server_dies_and_its_helper_holds_stdin(watch, usage):
    client, lines = open_client("legacy")
    helper_pid = None
    try:
        helper_pid = int(client.call_tool("helper", {"session": own_session()}).text)
        client.call_tool("stop_reading")
        writing = BackgroundCall(client, "echo", {"text": "x" * 1_000_000})  # timeout=None
        time.sleep(0.3)  # (had the server died before the write began, it would fail all the same)
        start = time.monotonic()
        os.kill(client.transport.pid, signal.SIGKILL)
        error = writing.released_within(start)
        assert isinstance(error, ConnectionClosed) and "SIGKILL" in str(error), error
        assert pid_alive(helper_pid)
        closed_within(client)
        usage.assert_released()
    finally:
        client.close()
        kill(helper_pid)


# -- a server that stopped reading its stdin, sent more than a pipe holds --------------------


@pytest.mark.parametrize("sigterm", ["obeyed", "ignored"])
@pytest.mark.parametrize("era", ERAS)
def test_a_large_call_to_a_server_that_stopped_reading_ends_at_its_deadline_and_says_why(era, sigterm, usage):
    client, _ = open_client(era, *(["--ignore-sigterm"] if sigterm == "ignored" else []))
    try:
        pid = client.transport.pid
        client.call_tool("stop_reading")
        start = time.monotonic()
        with pytest.raises((RequestTimeout, ConnectionClosed), match="part of it written") as info:
            client.call_tool("echo", {"text": "x" * 1_000_000}, timeout=2)
        took = time.monotonic() - start
        assert took < 2 + RELEASED_WITHIN, f"the call ended {took - 2:.1f}s after its deadline"
        assert "new client" in str(info.value)
        # Every later call says why, at once.
        start = time.monotonic()
        with pytest.raises(ConnectionClosed, match="part of it written"):
            client.call_tool("echo", {"text": "later"})
        assert time.monotonic() - start < RELEASED_WITHIN
        closed_within(client)
        assert not pid_alive(pid)
        usage.assert_released()
    finally:
        client.close()


# -- a huge line, skipped ---------------------------------------------------------------------

MEASURE = """
import logging, resource, sys
from mcpclient import Client, StdioTransport
logging.disable(logging.CRITICAL)
size, start = int(sys.argv[2]), sys.argv[3]
with Client(StdioTransport([sys.executable, sys.argv[1]], stderr=None), timeout=60, protocol="legacy") as client:
    client.call_tool("echo", {"text": "warm"})
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert client.call_tool("huge", {"size": size, "start": start}).text == "after huge"
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024 / size)
"""


def peak_growth(size: int, start: str) -> float:
    """How much the peak memory of a process of its own grew, in multiples of ``size``, while
    its client was sent a line of ``size`` bytes that begins with ``start``, then a reply."""
    done = subprocess.run([sys.executable, "-c", MEASURE, HOSTILE[1], str(size), start], capture_output=True,
                          text=True, timeout=60, cwd=os.path.dirname(os.path.dirname(os.path.dirname(HOSTILE[1]))))
    assert done.returncode == 0, done.stderr
    return float(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in kilobytes (Linux)")
def test_a_huge_line_that_cannot_be_json_rpc_is_skipped_without_being_held():
    # It does not begin with '{' or '[': skipped as it arrives (it used to be held, copied and
    # decoded before it was refused: about 3x its size).
    growth = peak_growth(64_000_000, "x")
    assert growth < 0.5, f"a 64 MB line made the peak grow by {growth:.2f}x its size"
