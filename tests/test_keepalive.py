"""Keep-alive pings (issue #30): a built-in extension that finds a stopped legacy server.

Against the official SDK's Streamable HTTP server: pings go out every interval in the legacy
era and never in the stateless 2026-07-28 era; a server stopped with SIGSTOP leaves a ping
unanswered, which ends the connection, so a call pending on it and every later call fail with
``ConnectionClosed`` saying so; ``close()`` stops the pinging thread at once. Timings are loose.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Callable

import pytest

from mcpclient import Client, ConnectionClosed, KeepAlive, Plugins, StreamableHTTPTransport, connect
from tests.helpers import RELEASED_WITHIN, BackgroundCall, wait_for

pytestmark = pytest.mark.timeout(90)

INTERVAL = 0.4


class Pings:
    """A middleware that counts the pings the client sends."""

    def __init__(self) -> None:
        self.sent = 0

    def __call__(self, message: Any, next: Callable[[Any], Any]) -> Any:
        if message.direction == "send" and message.method == "ping":
            self.sent += 1
        return next(message)


def _keepalive_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "mcpclient-keepalive"]


def test_the_interval_must_be_a_positive_number():
    for bad in (0, -1, float("nan"), float("inf"), True, "30"):
        with pytest.raises(ValueError, match="keep-alive interval"):
            KeepAlive(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("args", [(), ("--json-response",)], ids=["sse", "json"])
def test_a_legacy_client_pings_and_close_stops_the_pings(shared_sdk_server, args):
    server = shared_sdk_server("--transport", "streamable-http", *args)
    pings = Pings()
    before = len(_keepalive_threads())
    client = Client(StreamableHTTPTransport(server.url), protocol="legacy",
                    plugins=Plugins(keepalive=INTERVAL), middleware=[pings])
    with client:
        wait_for(lambda: pings.sent >= 2, timeout=10)
        assert client.call_tool("echo", {"text": "still"}).text == "still"
    # Stopped by close() (a thread left pinging would never stop: 10 s is far from that).
    wait_for(lambda: len(_keepalive_threads()) == before, timeout=10)
    sent = pings.sent
    time.sleep(INTERVAL * 2.5)
    assert pings.sent == sent, "pings went on after close()"


def test_the_shorthand_reaches_clients_connect_opens(shared_sdk_server):
    server = shared_sdk_server("--transport", "streamable-http")
    pings = Pings()
    with connect(server.url, protocol="legacy", plugins=Plugins(keepalive=INTERVAL), middleware=[pings]):
        wait_for(lambda: pings.sent >= 2, timeout=10)


def test_a_modern_client_does_not_ping(shared_sdk_server):
    server = shared_sdk_server("--transport", "streamable-http")
    pings = Pings()
    with Client(StreamableHTTPTransport(server.url), protocol="2026-07-28",
                extensions=[KeepAlive(INTERVAL)], middleware=[pings]) as client:
        time.sleep(INTERVAL * 3)
        assert client.call_tool("echo", {"text": "up"}).text == "up"
    assert pings.sent == 0


@pytest.mark.parametrize("args", [(), ("--json-response",)], ids=["sse", "json"])
def test_a_ping_a_stopped_server_leaves_unanswered_ends_pending_and_later_calls(stoppable_sdk_server, long_delete, args):
    server = stoppable_sdk_server("--transport", "streamable-http", *args)
    client = Client(StreamableHTTPTransport(server.url), protocol="legacy", timeout=None,
                    plugins=Plugins(keepalive=INTERVAL))
    try:
        client.initialize()
        assert client.call_tool("echo", {"text": "up"}).text == "up"
        os.kill(server.proc.pid, signal.SIGSTOP)
        start = time.monotonic()
        pending = BackgroundCall(client, "echo", {"text": "stalled"})  # no timeout: only the ping ends it
        # The next ping goes out within INTERVAL and times out INTERVAL later.
        error = pending.released_within(start, 2 * INTERVAL + RELEASED_WITHIN)
        assert isinstance(error, ConnectionClosed), error
        assert "keep-alive ping failed" in str(error)
        with pytest.raises(ConnectionClosed, match="keep-alive ping failed"):
            client.call_tool("echo", {"text": "later"})
    finally:
        start = time.monotonic()
        client.close()
        closed_in = time.monotonic() - start
    assert closed_in < RELEASED_WITHIN, f"close() took {closed_in:.2f}s"


def test_a_client_dropped_without_close_is_collected_and_its_pings_stop(shared_sdk_server):
    import gc
    import warnings
    import weakref

    server = shared_sdk_server("--transport", "streamable-http")
    pings = Pings()
    before = len(_keepalive_threads())
    client = Client(StreamableHTTPTransport(server.url), protocol="legacy",
                    plugins=Plugins(keepalive=INTERVAL), middleware=[pings])
    client.initialize()
    wait_for(lambda: pings.sent >= 1, timeout=10)
    gone = weakref.ref(client)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        del client
        gc.collect()
    assert gone() is None, "the pinging thread keeps the Client alive"
    wait_for(lambda: len(_keepalive_threads()) == before, timeout=10)
