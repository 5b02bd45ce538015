"""Many threads on one client, and many clients one after another: nothing mixed up or left.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from mcpclient import Client, StdioTransport, StreamableHTTPTransport
from tests.conftest import FAST_SERVER
from tests.doubles import QueueTransport, ScriptedServer
from tests.faults.conftest import HERE, Usage

pytestmark = pytest.mark.timeout(180)


def hammer(client: Client, threads: int, calls: int) -> list[str]:
    """``threads`` threads x ``calls`` calls of echo; returns every mismatch (or failure)."""
    wrong: list[str] = []
    start = threading.Barrier(threads)

    def worker(n: int) -> None:
        start.wait(30)
        for i in range(calls):
            text = f"t{n}-c{i}"
            try:
                got = client.call_tool("echo", {"text": text, "key": text}).text
            except Exception as exc:  # noqa: BLE001 - a failure is a finding too
                wrong.append(f"{text}: {exc!r}")
                continue
            if got != text:
                wrong.append(f"{text} got {got}")

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(150)
    assert not any(thread.is_alive() for thread in workers), "a caller is stuck"
    return wrong


@pytest.mark.slow
def test_64_threads_x_500_calls_over_stdio_each_get_their_own_reply():
    with Client(StdioTransport(FAST_SERVER), timeout=60) as client:
        assert hammer(client, 64, 500) == []


@pytest.fixture
def http_server_process():
    """tests/faults/hostile_http.py in its own process (its own GIL), on 127.0.0.1."""
    proc = subprocess.Popen([sys.executable, str(HERE / "hostile_http.py")], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("LISTENING "), line
        yield line.split()[1]
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


@pytest.mark.above_pipes("HTTP")
@pytest.mark.slow
def test_64_threads_x_500_calls_over_http_each_get_their_own_reply(http_server_process):
    transport = StreamableHTTPTransport(http_server_process)
    with Client(transport, timeout=60, protocol="legacy") as client:
        assert hammer(client, 64, 500) == []


@pytest.mark.above_pipes("HTTP")
def test_8_threads_x_100_calls_over_http_each_get_their_own_reply(http_server_process):
    """The quick version of the one above, for every run."""
    transport = StreamableHTTPTransport(http_server_process)
    with Client(transport, timeout=30, protocol="legacy") as client:
        assert hammer(client, 8, 100) == []


# -- open and close, again and again -------------------------------------------------------


def cycle_stdio() -> None:
    client = Client(StdioTransport(FAST_SERVER, stderr=None), timeout=10)
    try:
        client.initialize()
        assert client.call_tool("echo", {"text": "x"}).text == "x"
    finally:
        client.close()


def cycle_in_memory() -> None:
    transport = QueueTransport()
    server = ScriptedServer(transport, {"tools/call": lambda params, message: {"content": []}})
    client = Client(transport, timeout=10)
    try:
        client.initialize()
        client.call_tool("echo", {"text": "x"})
    finally:
        client.close()
        server.stop()


def run_cycles(cycle, count):
    cycle()  # warm up: imports, the stdio watchdog, lazily created module state
    before = Usage()
    t0 = time.monotonic()
    for _ in range(count):
        cycle()
    elapsed = time.monotonic() - t0
    before.assert_released(timeout=10)
    assert elapsed < count * 0.5  # no cycle hides a timeout (a 2 s close grace, say)


def test_open_close_cycles_return_fds_threads_and_processes_to_their_start():
    """100 cycles: a leak of any kind shows after one, so more cycles (300 were run too) add
    nothing but time."""
    run_cycles(cycle_stdio, 100)


@pytest.mark.above_pipes("HTTP")
@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_open_close_cycles_over_http_return_sockets_and_threads_to_their_start(shared_sdk_server, protocol):
    """The official SDK's server over Streamable HTTP: each open takes sockets, a session (a GET
    stream and its reader thread in the legacy era) and each close a DELETE; none is left."""
    url = shared_sdk_server("--transport", "streamable-http").url

    def cycle_http() -> None:
        client = Client(StreamableHTTPTransport(url), timeout=10, protocol=protocol)
        try:
            client.initialize()
            assert client.call_tool("echo", {"text": "x"}).text == "x"
        finally:
            client.close()

    run_cycles(cycle_http, 100)


@pytest.mark.above_pipes("an in-memory server")
def test_open_close_cycles_in_memory_return_fds_and_threads_to_their_start():
    run_cycles(cycle_in_memory, 1000)
