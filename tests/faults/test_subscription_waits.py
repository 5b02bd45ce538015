"""A 2026-07-28 subscription waits for the server's acknowledgement through the one wait
primitive: the server's death, ``close()`` and the caller's timeout end the wait.

The official SDK's server is stopped (SIGSTOP) so that it never acknowledges the listen stream,
then killed: ``subscribe_resource(timeout=None)`` raises ``SubscriptionError`` within a second
or two. Before, it waited for ever (the listen thread ended with the connection; nothing woke
the wait for its acknowledgement).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

import pytest

from mcpclient import Client, StdioTransport, SubscriptionError

from ..conftest import SDK_SERVER
from ..helpers import InBackground, require_mcp_sdk

require_mcp_sdk()

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")]



def subscribing(client: Client, timeout: float | None) -> InBackground:
    return InBackground(lambda: client.subscribe_resource("test://text", timeout=timeout))


def silent_server() -> Client:
    """A client of the SDK's server, which is then stopped: it will acknowledge nothing."""
    client = Client(StdioTransport(SDK_SERVER, stderr=None), timeout=30, protocol="2026-07-28")
    client.initialize()
    assert client.server_capabilities["resources"]["subscribe"] is True
    os.kill(client.transport.pid, signal.SIGSTOP)  # type: ignore[attr-defined]
    return client


def test_a_subscription_waiting_for_its_acknowledgement_ends_at_the_servers_death() -> None:
    client = silent_server()
    try:
        waiting = subscribing(client, None)
        time.sleep(0.5)
        killed = time.monotonic()
        os.kill(client.transport.pid, signal.SIGKILL)  # type: ignore[attr-defined]
        assert isinstance(waiting.released_within(killed), SubscriptionError)  # before: for ever
    finally:
        client.close()


def test_a_subscription_waiting_for_its_acknowledgement_ends_at_close_and_at_its_timeout() -> None:
    client = silent_server()
    try:
        started = time.monotonic()
        timed = subscribing(client, 1.0)
        assert isinstance(timed.released_within(started + 1.0), SubscriptionError)
        waiting = subscribing(client, None)
        time.sleep(0.5)
        closing = time.monotonic()
        client.close()
        assert isinstance(waiting.released_within(closing), SubscriptionError)
    finally:
        with contextlib.suppress(ProcessLookupError):  # (ended by close() already)
            os.kill(client.transport.pid, signal.SIGCONT)  # type: ignore[attr-defined]
        client.close()
