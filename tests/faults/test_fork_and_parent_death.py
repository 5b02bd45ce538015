"""Processes: a client inherited through fork(), and a parent that dies without closing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from mcpclient import Client, StdioTransport, TransportError
from tests.conftest import FAST_SERVER
from tests.faults.conftest import HOSTILE, pid_alive
from tests.helpers import wait_for
from tests.faults.forking import in_child

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()"),
    # Forking a multi-threaded process is what this file is about.
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]


def use_in_child(client: Client) -> str:
    t0 = time.monotonic()
    try:
        client.call_tool("echo", {"text": "from the child"}, timeout=2)
        return "no error"
    except TransportError as exc:
        took = time.monotonic() - t0
        return "clear error" if "fork" in str(exc) and took < 1 else f"{took:.2f}s: {exc}"


def test_a_stdio_client_used_in_a_forked_child_fails_at_once_with_a_clear_error():
    with Client(StdioTransport(FAST_SERVER), timeout=10) as client:
        assert in_child(lambda: use_in_child(client)) == "clear error"
        assert client.call_tool("echo", {"text": "parent"}).text == "parent"


def test_closing_an_inherited_stdio_client_in_the_child_leaves_the_parents_server_alone():
    with Client(StdioTransport(FAST_SERVER), timeout=10) as client:
        pid = client.transport.pid

        def close_in_child() -> str:
            client.close()
            return "closed"

        assert in_child(close_in_child) == "closed"
        time.sleep(0.2)
        assert pid_alive(pid)
        assert client.call_tool("echo", {"text": "parent"}).text == "parent"


def test_a_child_forked_while_another_thread_holds_the_engine_lock_does_not_hang():
    with Client(StdioTransport(FAST_SERVER), timeout=10) as client:
        engine = client._engine
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with engine._lock:  # as a caller registering its request does, for a moment
                held.set()
                release.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait(5)
        try:
            outcome = in_child(lambda: use_in_child(client) + " / " + (client.close() or "closed"), timeout=10)
        finally:
            release.set()
            holder.join(5)
        assert outcome == "clear error / closed"
        assert client.call_tool("echo", {"text": "parent"}).text == "parent"


def test_forking_while_64_threads_call_never_hangs_the_child_or_the_parent():
    with Client(StdioTransport(FAST_SERVER), timeout=20) as client:
        stop = threading.Event()
        failures: list[str] = []

        def caller(n: int) -> None:
            i = 0
            while not stop.is_set() and i < 100_000:
                text = f"{n}-{i}"
                got = client.call_tool("echo", {"text": text}).text
                if got != text:
                    failures.append(got)
                i += 1

        callers = [threading.Thread(target=caller, args=(n,)) for n in range(64)]
        for thread in callers:
            thread.start()
        try:
            outcomes = [in_child(lambda: use_in_child(client), timeout=10) for _ in range(10)]
        finally:
            stop.set()
            for thread in callers:
                thread.join(20)
        assert outcomes == ["clear error"] * 10
        assert failures == []


# -- a parent that dies without closing ----------------------------------------------------

PARENT = """
import sys, time
from mcpclient import Client, StdioTransport
client = Client(StdioTransport(sys.argv[1:], stderr=None), timeout=10)
client.initialize()  # the server is up (and ignoring SIGTERM, if it does)
print(client.transport.pid, flush=True)
time.sleep(60)
"""


@pytest.mark.above_pipes("the watchdog, the same for both")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process semantics")
@pytest.mark.parametrize("server", ["ignores-eof-and-sigterm", "fast-server"])
def test_the_server_does_not_outlive_a_parent_killed_with_sigkill(server):
    cmd = HOSTILE + ["--ignore-eof"] if server == "ignores-eof-and-sigterm" else FAST_SERVER
    parent = subprocess.Popen([sys.executable, "-c", PARENT, *cmd], stdout=subprocess.PIPE, text=True)
    server_pid = None
    try:
        server_pid = int(parent.stdout.readline())
        assert pid_alive(server_pid)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(5)
        wait_for(lambda: not pid_alive(server_pid), timeout=10)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(5)
        parent.stdout.close()
        if server_pid is not None and pid_alive(server_pid):
            os.killpg(server_pid, signal.SIGKILL)  # do not leave it behind when the test fails


def test_closing_an_inherited_stdio_transport_in_the_child_neither_hangs_nor_kills_the_server():
    with Client(StdioTransport(FAST_SERVER), timeout=10) as client:
        pid = client.transport.pid

        def close_transport() -> str:
            client.transport.close()
            return "closed"

        assert in_child(close_transport) == "closed"
        time.sleep(0.2)
        assert pid_alive(pid)
        assert client.call_tool("echo", {"text": "parent"}).text == "parent"


# -- a parent that exits normally ------------------------------------------------------------

EXITS = """
import sys
from mcpclient import Client, StdioTransport
from mcpclient.transports import _watchdog
client = Client(StdioTransport(sys.argv[2:], stderr=None), timeout=10)
client.initialize()
print(client.transport.pid, _watchdog.pid(), flush=True)
if sys.argv[1] == "close":
    client.close()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process semantics")
def test_a_clean_exit_reaps_the_watchdog_and_warns_about_nothing():
    done = subprocess.run([sys.executable, "-W", "default", "-c", EXITS, "close", *FAST_SERVER],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    server_pid, watchdog_pid = map(int, done.stdout.split())
    assert "ResourceWarning" not in done.stderr, done.stderr  # no "subprocess ... is still running"
    assert not pid_alive(watchdog_pid) and not pid_alive(server_pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux process semantics")
def test_an_exit_with_a_client_never_closed_still_ends_a_server_that_ignores_eof():
    done = subprocess.run([sys.executable, "-c", EXITS, "leave", *HOSTILE, "--ignore-eof"],
                          capture_output=True, text=True, timeout=30)
    server_pid, watchdog_pid = map(int, done.stdout.split())
    try:
        wait_for(lambda: not pid_alive(server_pid), timeout=10)  # the watchdog did it
        wait_for(lambda: not pid_alive(watchdog_pid), timeout=10)
    finally:
        if pid_alive(server_pid):
            os.killpg(server_pid, signal.SIGKILL)
