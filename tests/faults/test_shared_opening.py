"""SharedClient's opening, against a server that never answers its handshake (issue #45, case 4).

The server is tests/faults/hostile_stdio.py with ``--no-read``: it starts, and never reads the
``initialize`` it is sent, so the open runs until the shared client's own handshake timeout.
Each call that waits for it ends by its own bounds (its deadline, its cancel, ``close()``),
never the open's; an open that fails fails every call that waited for it, once, and the next
call after it opens again. The open itself cannot be cut short: it ends by its own handshake
timeout (30 s, far from the 10 s a caller is allowed), on its thread; each test ends it sooner
by killing the silent server, then waits for the thread.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

import mcpclient
from mcpclient import ClientClosedError, RequestCancelled, RequestTimeout, SharedClient, Stdio
from tests.faults.conftest import HOSTILE
from tests.helpers import RELEASED_WITHIN, proc_children, wait_for

pytestmark = pytest.mark.timeout(120)

SILENT = [*HOSTILE, "--no-read"]
#: The shared client's handshake timeout: before the fix the first caller ended after it, the
#: others after twice it.
OPEN_TIMEOUT = 30.0


def opening() -> bool:
    return any(t.name == "mcpclient-open" and t.is_alive() for t in threading.enumerate())


def kill_silent_servers() -> None:
    for pid in proc_children(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as command:
                silent = b"hostile_stdio.py\x00--no-read" in command.read()
        except OSError:
            continue
        if silent:
            os.kill(pid, signal.SIGKILL)


def opens_ended() -> None:
    """End an open abandoned by its callers: its silent server is killed (and the one the era
    probe starts again after that), which fails the handshake at once where its own timeout
    would take OPEN_TIMEOUT; wait for its thread."""
    wait_for(lambda: kill_silent_servers() or not opening(), timeout=OPEN_TIMEOUT + 10, interval=0.1)


class Callers:
    """``count`` threads each making ``call(shared)`` at once: what each raised, and when."""

    def __init__(self, shared: SharedClient, count: int, call) -> None:
        self.ended: list[tuple[float, BaseException | None]] = []
        self._lock = threading.Lock()
        self.started = time.monotonic()
        self._threads = [threading.Thread(target=self._run, args=(shared, call), daemon=True) for _ in range(count)]
        for thread in self._threads:
            thread.start()

    def _run(self, shared: SharedClient, call) -> None:
        error: BaseException | None = None
        try:
            call(shared)
        except BaseException as exc:  # recorded for the test
            error = exc
        with self._lock:
            self.ended.append((time.monotonic() - self.started, error))

    def join(self, within: float) -> list[tuple[float, BaseException | None]]:
        for thread in self._threads:
            thread.join(max(0.0, self.started + within - time.monotonic()))
        with self._lock:
            return sorted(self.ended, key=lambda item: item[0])


def test_each_caller_ends_at_its_own_deadline_while_the_open_hangs():
    shared = SharedClient(SILENT, timeout=OPEN_TIMEOUT, stdio=Stdio(stderr=None))
    try:
        callers = Callers(shared, 3, lambda mcp: mcp.ping(timeout=2))
        ended = callers.join(within=2 + RELEASED_WITHIN + 1)
        assert len(ended) == 3, f"callers still waiting: only {ended}"
        for took, error in ended:
            assert isinstance(error, RequestTimeout), error
            assert took < 2 + RELEASED_WITHIN, f"a caller with timeout=2 ended after {took:.1f}s"
        # A later caller joins the open still in progress: it starts no second server.
        with pytest.raises(RequestTimeout):
            shared.call_tool("echo", {"text": "x"}, timeout=0.5)
    finally:
        shared.close()
        opens_ended()


def test_a_failed_open_fails_every_caller_that_waited_for_it_and_the_next_call_opens_again():
    opens: list[float] = []
    failed: list[float] = []

    def open_silent() -> mcpclient.Client:
        opens.append(time.monotonic())
        try:
            return mcpclient.connect(SILENT, timeout=3, stdio=mcpclient.Stdio(stderr=None))
        finally:
            failed.append(time.monotonic())

    shared = SharedClient(open_silent)
    try:
        callers = Callers(shared, 3, lambda mcp: mcp.ping(timeout=60))
        ended = callers.join(within=30)
        assert len(ended) == 3, f"callers still waiting: only {ended}"
        open_failed = failed[0] - callers.started
        for took, error in ended:
            assert isinstance(error, RequestTimeout) and "initialize" in str(error), error
            assert took - open_failed < RELEASED_WITHIN, f"a caller ended {took - open_failed:.1f}s after the open failed"
        assert len(opens) == 1, f"{len(opens)} opens for the callers of one (each waiter opened again)"
        with pytest.raises(RequestTimeout):
            shared.ping(timeout=30)  # after the failure: a new open (which fails the same way)
        assert len(opens) == 2
    finally:
        shared.close()


def test_a_cancel_and_close_end_a_wait_for_the_open():
    shared = SharedClient(SILENT, timeout=OPEN_TIMEOUT, stdio=Stdio(stderr=None))
    try:
        cancel = threading.Event()
        cancelled = Callers(shared, 1, lambda mcp: mcp.call_tool("echo", {"text": "x"}, timeout=None, cancel=cancel))
        closed = Callers(shared, 2, lambda mcp: mcp.ping(timeout=None))
        wait_for(opening)  # the callers wait for the open (a cancel before it works too)
        cancel.set()
        at = time.monotonic() - cancelled.started
        [(took, error)] = cancelled.join(within=at + RELEASED_WITHIN + 1)
        assert isinstance(error, RequestCancelled), error
        assert took - at < RELEASED_WITHIN
        time.sleep(0.2)
        at = time.monotonic() - closed.started
        shared.close()
        ended = closed.join(within=at + RELEASED_WITHIN + 1)
        assert len(ended) == 2, f"callers still waiting after close(): only {ended}"
        for took, error in ended:
            assert isinstance(error, ClientClosedError), error
            assert took - at < RELEASED_WITHIN
    finally:
        shared.close()
        opens_ended()
