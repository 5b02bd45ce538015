"""Helpers for the fault suite: hostile servers, resource counts, waiting with a deadline."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
import pytest

from tests.conftest import child_pids
from tests.helpers import pid_alive  # noqa: F401 (others import it from here)

HERE = Path(__file__).resolve().parent
HOSTILE = [sys.executable, str(HERE / "hostile_stdio.py")]


class Lines:
    """A thread-safe stderr sink that keeps every line the server wrote."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            self._lines.append(line)

    def snapshot(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def starting(self, prefix: str) -> list[str]:
        return [line for line in self.snapshot() if line.startswith(prefix)]


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def mcp_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("mcpclient-") and t.is_alive()]


class Usage:
    """File descriptors, mcpclient threads and child processes at one moment."""

    def __init__(self) -> None:
        self.fds = open_fds()
        self.threads = len(mcp_threads())
        self.children = child_pids()

    def assert_released(self, timeout: float = 5.0) -> None:
        """Wait until usage is back to this snapshot; fail with the difference if it never is."""
        before = self
        end = time.monotonic() + timeout
        while True:
            now = Usage()
            if now.fds <= before.fds and now.threads <= before.threads and now.children <= before.children:
                return
            if time.monotonic() >= end:
                raise AssertionError(
                    f"resources not released: fds {before.fds} -> {now.fds}, mcpclient threads "
                    f"{before.threads} -> {now.threads} ({[t.name for t in mcp_threads()]}), "
                    f"children {sorted(before.children)} -> {sorted(now.children)}"
                )
            time.sleep(0.05)


@pytest.fixture(scope="session", autouse=True)
def stdio_watchdog_started() -> None:
    """Start the per-process stdio watchdog first, so that it counts in every baseline."""
    from mcpclient import StdioTransport

    StdioTransport([sys.executable, "-c", "pass"], stderr=None).close()


@pytest.fixture
def usage() -> Usage:
    """Resource usage before the test; ``usage.assert_released()`` checks it came back."""
    return Usage()


def echo_from_threads(client, threads: int, calls: int, timeout: float) -> list[str]:
    """``threads`` threads sharing ``client`` each make ``calls`` distinct ``echo`` calls;
    returns the replies that were not their own call's text (asserting every thread ended
    within ``timeout``)."""
    mismatches: list[str] = []

    def caller(n: int) -> None:
        for i in range(calls):
            text = f"{n}-{i}"
            got = client.call_tool("echo", {"text": text}).text
            if got != text:
                mismatches.append(f"{text} got {got}")

    workers = [threading.Thread(target=caller, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout)
    assert not any(worker.is_alive() for worker in workers)
    return mismatches
