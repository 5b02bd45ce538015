"""Every public Client method against the official-SDK test server, over stdio.

The tests are written once in ``tests/interop/sdk_checks.py`` (their checks in
``tests/interop/suite.py``) and shared with Streamable HTTP; this module builds the clients
and adds what is specific to stdio (the child process is gone after ``close()``). Every test
runs against both server modes (``era``).

Starting the SDK server costs about a second, so clients are shared where that is safe:
``client`` (no handlers) for the checks that only call the server, and ``peer_client`` (all
handlers, one dispatch thread started up front) for sampling, elicitation, roots, logs and
progress.
Tests that need a pristine client use ``connect``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import mcpclient
from mcpclient import ClientClosedError, StdioTransport
from tests.conftest import FAST_SERVER, SDK_SERVER, child_pids

from .peer import Connections, Peer
from .sdk_checks import *  # noqa: F403 (the shared tests and their fixtures)
from .sdk_checks import Carries
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

#: The server's two modes: both protocol eras (mcpclient picks the newest), or the handshake
#: era only. Each mode runs every test, with the protocol version mcpclient must settle on.
ERAS = {
    "dual-era": ([], "2026-07-28"),
    "legacy-only": (["--legacy-only"], "2025-11-25"),
}


@pytest.fixture(scope="module", params=sorted(ERAS))
def era(request) -> tuple[list[str], str]:
    return ERAS[request.param]


@pytest.fixture(scope="module")
def events_file(era, tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sdk-events") / "events.jsonl"


def sdk_transport(era, events_file: Path) -> StdioTransport:
    argv, _ = era
    return StdioTransport(SDK_SERVER + argv, env={"SDK_SERVER_EVENTS": str(events_file)})


@pytest.fixture(scope="module")
def client(era, events_file):
    """A client with no handlers: the server never sends it anything unasked, so no test
    starts a dispatch thread (the thread-leak check would see it)."""
    connections = Connections(lambda: sdk_transport(era, events_file))
    yield connections.open()
    connections.close_all()


@pytest.fixture(scope="module")
def handled(era, events_file):
    """(client, peer) with every handler installed; its one dispatch thread is started here."""
    connections = Connections(lambda: sdk_transport(era, events_file))
    shared = Peer()
    client = connections.open(shared, max_dispatch=1)
    client.set_log_level("debug")
    client.call_tool("log", {"message": "warm-up"})
    shared.wait_for("notifications/message", lambda p: p.get("data") == "warm-up")
    yield client, shared
    connections.close_all()


@pytest.fixture
def peer_client(handled):
    return handled[0]


@pytest.fixture
def peer(handled) -> Peer:
    shared = handled[1]
    shared.reset()
    return shared


@pytest.fixture
def connect(era, events_file):
    """``connect(peer=None, **install)``: a new server process and an initialized client on it."""
    connections = Connections(lambda: sdk_transport(era, events_file))
    yield connections.open
    connections.close_all()


@pytest.fixture
def version(era) -> str:
    return era[1]


@pytest.fixture
def carries() -> Carries:
    return Carries()  # a stdio server asks, streams, pushes and cancels in both eras


# -- stdio specifics --------------------------------------------------------------------------


def test_close_leaves_no_child_process():
    client = mcpclient.Client(StdioTransport(SDK_SERVER), timeout=15)
    client.initialize()
    pid = client.transport.pid
    assert pid in child_pids()
    client.close()
    assert pid not in child_pids()
    assert client.transport.returncode is not None
    with pytest.raises(ClientClosedError):
        client.ping()


# -- bugs found by these tests (see the reasons) ------------------------------------------------


class SpyTransport(StdioTransport):
    """A StdioTransport that remembers every message it sent and every notification it read."""

    def __init__(self, *args, **kwargs) -> None:
        self.sent: list[dict] = []
        self.notifications_read: list[dict] = []
        super().__init__(*args, **kwargs)

    def send(self, message, *, timeout=None):
        self.sent.append(message)
        return super().send(message, timeout=timeout)

    def receive(self):
        return self._spy(super().receive())

    def receive_within(self, timeout, spin=0.0):  # a caller reading its own reply (the engine's inline reads)
        return self._spy(super().receive_within(timeout, spin))

    def _spy(self, message):
        if isinstance(message, dict) and "method" in message and "id" not in message:
            self.notifications_read.append(message)
        return message


def test_set_roots_after_initialize_does_not_notify_an_undeclared_capability():
    transport = SpyTransport(FAST_SERVER)  # a legacy server: only those are notified
    with mcpclient.Client(transport, timeout=15) as client:
        [init] = [m for m in transport.sent if m.get("method") == "initialize"]
        assert "roots" not in init["params"]["capabilities"]
        client.set_roots(["file:///late"])
        client.ping()
    assert "notifications/roots/list_changed" not in [m.get("method") for m in transport.sent]


def test_ai_tool_execute_with_timeout_none_means_no_limit():
    client = mcpclient.Client(StdioTransport(FAST_SERVER + ["--no-reply"]), timeout=0.3)
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(_run(echo.execute, {"text": "x"}, timeout=None)))
    try:
        client.initialize(timeout=15)
        [echo] = [tool for tool in mcpclient.tools(client, timeout=15) if tool.name == "echo"]
        thread.start()
        thread.join(1.0)  # well past the client's 0.3 s; the server never answers tools/call
        assert thread.is_alive(), f"execute(timeout=None) gave up: {outcome}"
    finally:
        client.close()  # ends the pending call with ClientClosedError
        if thread.is_alive():
            thread.join(5)


def _run(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        return exc


def test_notifications_reach_the_handler_in_wire_order():
    transport = SpyTransport(SDK_SERVER + ["--legacy-only"])  # logs need no opt-in there
    seen: list[str] = []
    done = threading.Event()

    def on_notification(method, params):
        if method != "notifications/message":
            return
        if params["data"] == "first":
            time.sleep(0.3)  # a handler that is slow once (a log sink flushing, say)
        seen.append(params["data"])
        if len(seen) == 2:
            done.set()

    client = mcpclient.Client(transport, timeout=15)
    client.set_notification_handler(on_notification)
    try:
        client.initialize()
        client.call_tool("log", {"message": "first"})
        client.call_tool("log", {"message": "second"})
        assert done.wait(5)
    finally:
        client.close()
    wire = [m["params"]["data"] for m in transport.notifications_read if m["method"] == "notifications/message"]
    assert wire == ["first", "second"]
    assert seen == wire
