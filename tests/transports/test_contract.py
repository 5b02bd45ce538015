"""The transport contract (transports/base.py): what the engine and the session ask of it."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mcpclient import Client
from mcpclient._core.exceptions import StreamInterrupted
from mcpclient.plugins.otel import network_attributes
from mcpclient.transports.base import (
    LEGACY,
    PLAIN,
    ExchangeTransport,
    Failure,
    Peer,
    PipeTransport,
    SendOptions,
    Transport,
    reads_inline,
    writes_batched,
)
from mcpclient.transports.http import StreamableHTTPTransport
from tests.doubles import QueueTransport, Reply, ScriptedServer


class ToldTransport(QueueTransport, ExchangeTransport):
    """Records what the session tells an exchange transport, and each message's options."""

    def __init__(self) -> None:
        super().__init__()
        self.protocols: list[tuple[str, str]] = []
        self.options: dict[str, SendOptions] = {}

    def set_protocol(self, era: str, version: str) -> None:
        # Told before notifications/initialized goes out, so that message carries the version.
        assert "notifications/initialized" not in self.methods_sent()
        self.protocols.append((era, version))

    def send(self, message: dict[str, Any], *, timeout: float | None = None, options: SendOptions = PLAIN) -> None:
        key = message.get("method", "<reply>")
        if key == "tools/call":
            key = f"tools/call {message['params']['name']}"
        if options != PLAIN:
            self.options[key] = options
        super().send(message, timeout=timeout)


def test_the_session_tells_the_transport_the_era_and_version():
    transport = ToldTransport()
    server = ScriptedServer(transport)
    try:
        with Client(transport, timeout=5, protocol="legacy"):
            assert transport.protocols == [(LEGACY, "2025-11-25")]
    finally:
        server.stop()


def test_what_changes_nothing_travels_as_resendable_and_the_rest_plainly():
    """The one rule (``_methods``): the change-nothing methods and the calls of tools annotated
    ``readOnlyHint``/``idempotentHint`` go down as ``resendable``; the rest through ``send``."""
    transport = ToldTransport()
    tools = [{"name": "look", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
             {"name": "again", "inputSchema": {"type": "object"}, "annotations": {"idempotentHint": True}},
             {"name": "write", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}}]
    server = ScriptedServer(transport, {"tools/list": lambda p, m: {"tools": tools},
                                        "tools/call": lambda p, m: {"content": []}})
    try:
        with Client(transport, timeout=5, protocol="legacy") as client:
            client.list_tools()
            for tool in tools:
                client.call_tool(tool["name"])
            client.ping()
    finally:
        server.stop()
    resendable = SendOptions(resendable=True)
    assert transport.options == {"tools/list": resendable, "tools/call look": resendable,
                                 "tools/call again": resendable, "ping": resendable}


def test_a_failure_item_fails_only_its_own_call():
    transport = QueueTransport()

    def slow(params: dict[str, Any], message: dict[str, Any]) -> Any:
        raise Reply(Failure(message["id"], StreamInterrupted("the stream broke before the reply")))

    server = ScriptedServer(transport, {"tools/call": slow})
    try:
        with Client(transport, timeout=5, protocol="legacy") as client:
            with pytest.raises(StreamInterrupted, match="broke before the reply"):
                client.call_tool("x")
            client.ping()  # the connection lives on
    finally:
        server.stop()


def test_telemetry_reads_the_peer_not_the_class():
    assert network_attributes(QueueTransport().about.peer) == {}
    transport = StreamableHTTPTransport("https://example.test:8443/mcp")
    try:
        assert transport.about.peer == Peer(network="tcp", protocol="http", address="example.test", port=8443)
        assert network_attributes(transport.about.peer) == {
            "network.transport": "tcp", "network.protocol.name": "http",
            "server.address": "example.test", "server.port": 8443,
        }
        transport.session_id = "s-1"
        assert transport.about.peer.session_id == "s-1"
        assert transport.about.server_key == ("http", "https://example.test:8443/mcp")
    finally:
        transport.close()


def test_a_transport_is_three_methods_and_what_it_says_of_itself():
    """The contract a user implements, and all the base class has: the rest is an interface."""
    assert Transport.__abstractmethods__ == {"send", "receive", "close"}
    public = {name for name in vars(Transport) if not name.startswith("_")}
    assert public == {"send", "receive", "close", "about"}
    assert PipeTransport.__abstractmethods__ == {"send", "receive", "close", "receive_within", "frame", "write_frames"}
    assert ExchangeTransport.__abstractmethods__ == {"send", "receive", "close"}


def test_what_a_transport_says_of_itself_by_default_is_nothing():
    about = QueueTransport().about
    assert about.server_key is None and about.peer == Peer() and about.directory is None
    assert about.extensions == {} and about.side_output is None
    assert about.credentials.identity is None  # unknown: nothing of a legacy server is kept as shared
    assert PLAIN == SendOptions()


class SlowSends(QueueTransport):
    """Each ``tools/call`` send takes a while, and counts the sends in flight at once."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.now = self.most = 0

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        if message.get("method") == "tools/call":
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
            self.taking_a_while()
            with self.lock:
                self.now -= 1
        super().send(message, timeout=timeout)

    def taking_a_while(self) -> None:
        time.sleep(0.05)


class MeetingExchanges(SlowSends, ExchangeTransport):
    """An exchange transport whose ``tools/call`` sends return only once two are in flight."""

    def __init__(self) -> None:
        super().__init__()
        self.meeting = threading.Barrier(2, timeout=30)

    def send(self, message: dict[str, Any], *, timeout: float | None = None, options: SendOptions = PLAIN) -> None:
        super().send(message, timeout=timeout)

    def taking_a_while(self) -> None:
        self.meeting.wait()  # broken (an error) unless a second send comes while this one waits


def calls_at_once(transport: QueueTransport, count: int) -> None:
    server = ScriptedServer(transport, {"tools/call": lambda p, m: {"content": []}})
    try:
        with Client(transport, timeout=60, protocol="legacy") as client:
            barrier = threading.Barrier(count)

            def call() -> None:
                barrier.wait(30)
                client.call_tool("x")

            threads = [threading.Thread(target=call) for _ in range(count)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
    finally:
        server.stop()


def test_the_engine_sends_to_a_plain_transport_from_one_thread_at_a_time():
    transport = SlowSends()
    calls_at_once(transport, 4)
    assert transport.most == 1 and len(transport.methods_sent()) >= 4


def test_an_exchange_transport_is_sent_to_side_by_side():
    transport = MeetingExchanges()
    calls_at_once(transport, 2)
    assert transport.most == 2 and not transport.meeting.broken


class Reads(QueueTransport, PipeTransport):
    """Declares what stdio can do, by the interface it inherits."""

    def receive_within(self, timeout: float, spin: float = 0.0) -> Any:
        return self.receive()

    def frame(self, message: dict[str, Any]) -> bytes | None:
        return None

    def write_frames(self, frames: list[bytes]) -> int:
        return 0


def test_a_pipe_subclass_that_wraps_send_or_receive_alone_is_not_bypassed():
    class WrapsSend(Reads):  # its send would be gone around by batched writes: none then
        def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
            super().send(message, timeout=timeout)

    class WrapsReceive(Reads):  # and its receive by inline reads
        def receive(self) -> Any:
            return super().receive()

    assert (reads_inline(Reads), writes_batched(Reads)) == (True, True)
    assert (reads_inline(WrapsSend), writes_batched(WrapsSend)) == (True, False)
    assert (reads_inline(WrapsReceive), writes_batched(WrapsReceive)) == (False, True)
    with pytest.raises(TypeError):  # an interface's methods must be there
        type("Half", (QueueTransport, PipeTransport), {})()
