"""A stalled HTTP server ends every call at its timeout or cancel, and close() stays prompt.

Two kinds of stall, over every HTTP transport and both eras: the official SDK's server stopped
with SIGSTOP after the handshake (its kernel still accepts connections and takes the bytes, its
process answers nothing), and a TCP peer that reads every request and never answers
(``EndingServer.stall``, tests/faults/ending_http.py). Telling the server (the
``notifications/cancelled`` POST, the DELETE of the session) is best effort and must hold
neither the caller nor ``close()``. Assertions are loose: released within ``RELEASED_WITHIN``
(10 s), with every stall far longer: the calls' own timeouts are 60 s, and the DELETE that
``close()`` leaves to the background after 1 s would give up only after 60 s.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest

from mcpclient import CancelToken, Client, RequestCancelled, RequestTimeout, SSETransport, StreamableHTTPTransport
from tests.faults.ending_http import EndingServer
from tests.helpers import RELEASED_WITHIN, BackgroundCall, wait_for

pytestmark = pytest.mark.timeout(90)

TIMEOUT = 1.0
CANCEL_AFTER = 0.3


def _endings_are_prompt(client: Client, tool: str, args: dict[str, Any]) -> None:
    """A call with ``timeout=TIMEOUT`` and a cancelled call each end within RELEASED_WITHIN,
    then ``close()`` does too."""
    try:
        start = time.monotonic()
        timed = BackgroundCall(client, tool, dict(args), timeout=TIMEOUT)
        assert isinstance(timed.released_within(start + TIMEOUT), RequestTimeout)

        token = CancelToken()
        cancelled = BackgroundCall(client, tool, dict(args), cancel=token, timeout=60)
        time.sleep(CANCEL_AFTER)  # (the cancel may come before or after the request goes out)
        start = time.monotonic()
        token.cancel()
        assert isinstance(cancelled.released_within(start), RequestCancelled)
    finally:
        start = time.monotonic()
        client.close()
        closed_in = time.monotonic() - start
    assert closed_in < RELEASED_WITHIN, f"close() took {closed_in:.2f}s"


# -- the official SDK's server, stopped ------------------------------------------------------

SDK = {
    # name: (sdk_server arguments, protocol)
    "sse-stateful": (("--transport", "streamable-http"), "legacy"),
    "json-stateful": (("--transport", "streamable-http", "--json-response"), "legacy"),
    "sse-stateless": (("--transport", "streamable-http", "--stateless"), "legacy"),
    "json-stateless": (("--transport", "streamable-http", "--stateless", "--json-response"), "legacy"),
    "legacy-sse": (("--transport", "sse"), "legacy"),
    "sse-modern": (("--transport", "streamable-http"), "2026-07-28"),
    "json-modern": (("--transport", "streamable-http", "--json-response"), "2026-07-28"),
}


@pytest.mark.parametrize("kind", SDK)
def test_a_stopped_sdk_server_ends_calls_at_their_timeout_or_cancel(stoppable_sdk_server, long_delete, kind):
    args, protocol = SDK[kind]
    server = stoppable_sdk_server(*args)
    transport: Any = SSETransport(server.url) if kind == "legacy-sse" else StreamableHTTPTransport(server.url)
    client = Client(transport, timeout=None, protocol=protocol)
    client.initialize()
    assert client.call_tool("echo", {"text": "up"}).text == "up"
    os.kill(server.proc.pid, signal.SIGSTOP)
    _endings_are_prompt(client, "echo", {"text": "stalled"})


# -- a TCP peer that accepts and never answers -----------------------------------------------

STALLED = {
    "json-stateful": dict(reply="json"),
    "sse-stateful": dict(reply="sse"),
    "json-stateless": dict(reply="json", stateless=True),
    "sse-stateless": dict(reply="sse", stateless=True),
    "json-modern": dict(reply="json", modern=True),
    "sse-modern": dict(reply="sse", modern=True),
    "legacy-sse": dict(legacy_sse=True),
}


@pytest.mark.parametrize("kind", STALLED)
def test_a_peer_that_never_answers_ends_calls_at_their_timeout_or_cancel(ending_servers, long_delete, kind):
    server: EndingServer = ending_servers(**STALLED[kind])
    transport: Any = SSETransport(server.url) if server.legacy_sse else StreamableHTTPTransport(server.url)
    client = Client(transport, timeout=None, protocol="2026-07-28" if server.modern else "legacy")
    client.initialize()
    server.stall()
    _endings_are_prompt(client, "work", {"key": kind})
    if not server.modern:  # a legacy server is told (best effort, from another thread)
        wait_for(lambda: server.held["notifications/cancelled"] >= 1, timeout=5)


def test_a_notice_still_unanswered_does_not_keep_threads_past_close(ending_servers):
    """The cancel notices and the DELETE that a stalled server holds end with close() (or
    their own short limits), leaving no thread behind."""
    server: EndingServer = ending_servers(reply="json")
    client = Client(StreamableHTTPTransport(server.url), timeout=None, protocol="legacy")
    client.initialize()
    before = {t for t in threading.enumerate()}
    server.stall()
    with pytest.raises(RequestTimeout):
        client.call_tool("work", {"key": "k"}, timeout=0.5)
    wait_for(lambda: server.held["notifications/cancelled"] >= 1, timeout=5)
    client.close()

    def leftover() -> list[str]:
        return [t.name for t in threading.enumerate() if t not in before and t.is_alive()
                and t.name.startswith("mcpclient-") and t.name != "mcpclient-http-stream"]

    wait_for(lambda: not leftover(), timeout=8)
