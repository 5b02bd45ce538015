"""A token provider slower than the call's timeout: the deadline covers the token fetch.

A request whose token never came was never sent, so no ``notifications/cancelled`` follows it;
the cancel and ``close()`` end the wait for the token too; a ``TokenProvider`` is told what
is left of the timeout. Real sockets (tests/faults/ending_http.py); loose timings.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mcpclient import CancelToken, Client, RequestCancelled, RequestTimeout, SSETransport, StreamableHTTPTransport
from mcpclient.auth import TokenProvider
from tests.faults.ending_http import EndingServer
from tests.helpers import RELEASED_WITHIN, BackgroundCall

pytestmark = pytest.mark.timeout(60)

KINDS = {
    "json-stateful": dict(reply="json"),
    "sse-stateless": dict(reply="sse", stateless=True),
    "json-modern": dict(reply="json", modern=True),
    "legacy-sse": dict(legacy_sse=True),
}


class SlowProvider:
    """A plain callable: fast for the handshake, then ``seconds`` per token once ``slow`` is
    set (or until ``release()``: the test's end frees the helper thread it holds)."""

    def __init__(self, seconds: float = 30.0) -> None:
        self.seconds = seconds
        self.slow = threading.Event()
        self.asked = threading.Event()  # a slow fetch began
        self.released = threading.Event()

    def __call__(self) -> str:
        if self.slow.is_set():
            self.asked.set()
            self.released.wait(self.seconds)
        return "tok"

    def release(self) -> None:
        self.released.set()


def connect(server: EndingServer, provider: Any) -> Client:
    if server.legacy_sse:
        transport: Any = SSETransport(server.url, token_provider=provider)
    else:
        transport = StreamableHTTPTransport(server.url, token_provider=provider)
    client = Client(transport, timeout=None, protocol="2026-07-28" if server.modern else "legacy")
    client.initialize()
    return client


@pytest.mark.parametrize("kind", KINDS)
def test_a_slow_token_provider_ends_the_call_at_its_timeout_and_nothing_is_sent(ending_servers, kind):
    server = ending_servers(**KINDS[kind])
    provider = SlowProvider()  # 30 s a token: a call waiting for it is far past its timeout
    client = connect(server, provider)
    try:
        provider.slow.set()
        start = time.monotonic()
        call = BackgroundCall(client, "work", {"key": "k"}, timeout=1.0)
        error = call.released_within(start + 1.0)
        assert isinstance(error, RequestTimeout), error
        assert "nothing was sent" in str(error) or "could not be sent" in str(error)
        time.sleep(0.3)
        assert server.methods["tools/call"] == 0
        assert server.methods["notifications/cancelled"] == 0  # nothing to cancel
    finally:
        start = time.monotonic()
        client.close()
        assert time.monotonic() - start < RELEASED_WITHIN
        provider.release()


def test_a_cancel_ends_the_wait_for_a_token_and_sends_nothing(ending_servers):
    server = ending_servers(reply="json")
    provider = SlowProvider()
    client = connect(server, provider)
    try:
        provider.slow.set()
        token = CancelToken()
        call = BackgroundCall(client, "work", {"key": "k"}, cancel=token, timeout=30)
        assert provider.asked.wait(10)
        start = time.monotonic()
        token.cancel()
        assert isinstance(call.released_within(start), RequestCancelled)
        time.sleep(0.3)
        assert server.methods["tools/call"] == 0
        assert server.methods["notifications/cancelled"] == 0
    finally:
        client.close()
        provider.release()


def test_close_ends_the_wait_for_a_token_of_a_call_without_timeout(ending_servers):
    server = ending_servers(reply="json")
    provider = SlowProvider()
    client = connect(server, provider)
    provider.slow.set()
    call = BackgroundCall(client, "work", {"key": "k"}, timeout=None)
    assert provider.asked.wait(10)
    start = time.monotonic()
    try:
        client.close()
        assert time.monotonic() - start < RELEASED_WITHIN
        assert call.released_within(start) is not None
    finally:
        provider.release()


def test_a_token_provider_subclass_is_given_the_time_left(ending_servers):
    server = ending_servers(reply="json")
    given: list[float | None] = []

    class Bounded(TokenProvider):
        def token(self, timeout: float | None) -> str:
            given.append(timeout)
            return "tok"

    client = connect(server, Bounded())
    try:
        del given[:]
        client.call_tool("work", {"key": "k"}, timeout=2.0)
        assert len(given) == 1 and given[0] is not None and 0 < given[0] <= 2.0
        client.call_tool("work", {"key": "k2"}, timeout=None)
        assert given[1] is None
    finally:
        client.close()
