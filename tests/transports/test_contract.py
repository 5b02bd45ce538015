"""The transport contract (transports/base.py): what the engine and the session ask of it."""

from __future__ import annotations

from typing import Any

import pytest

from mcpclient import Client
from mcpclient._core.exceptions import StreamInterrupted
from mcpclient.plugins.otel import network_attributes
from mcpclient.transports.base import (
    LEGACY,
    PLAIN,
    BatchedWrites,
    Capabilities,
    ConcurrentSends,
    Failure,
    Peer,
    SendOptions,
    SpinReads,
    capabilities,
)
from mcpclient.transports.http import StreamableHTTPTransport
from tests.doubles import QueueTransport, Reply, ScriptedServer


class ToldTransport(QueueTransport):
    """Records what the session tells it through the contract, and each message's options."""

    def __init__(self) -> None:
        super().__init__()
        self.protocols: list[tuple[str, str]] = []
        self.options: dict[str, SendOptions] = {}

    def set_protocol(self, era: str, version: str) -> None:
        # Told before notifications/initialized goes out, so that message carries the version.
        assert "notifications/initialized" not in self.methods_sent()
        self.protocols.append((era, version))

    def deliver(self, message: dict[str, Any], options: SendOptions, *, timeout: float | None = None) -> None:
        key = message.get("method", "<reply>")
        if key == "tools/call":
            key = f"tools/call {message['params']['name']}"
        self.options[key] = options
        super().deliver(message, options, timeout=timeout)


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
    assert network_attributes(QueueTransport().peer) == {}
    transport = StreamableHTTPTransport("https://example.test:8443/mcp")
    try:
        assert transport.peer == Peer(network="tcp", protocol="http", address="example.test", port=8443)
        assert network_attributes(transport.peer) == {
            "network.transport": "tcp", "network.protocol.name": "http",
            "server.address": "example.test", "server.port": 8443,
        }
        transport.session_id = "s-1"
        assert transport.peer.session_id == "s-1"
    finally:
        transport.close()


def test_the_contract_defaults_say_nothing():
    transport = QueueTransport()
    assert transport.server_key is None
    assert transport.peer == Peer()
    assert transport.reopen() is None
    transport.deliver({"jsonrpc": "2.0", "method": "x"}, SendOptions(headers={"A": "b"}, resendable=True))
    assert transport.sent == [{"jsonrpc": "2.0", "method": "x"}]  # the default sends it, options aside
    assert PLAIN == SendOptions()
    transport.set_protocol(LEGACY, "2025-11-25")  # ignored


class Reads(QueueTransport, SpinReads, BatchedWrites):
    """Declares what stdio can do, by the interfaces it inherits."""

    def receive_within(self, timeout: float, spin: float = 0.0) -> Any:
        return self.receive()

    def frame(self, message: dict[str, Any]) -> bytes | None:
        return None

    def write_frames(self, frames: list[bytes]) -> int:
        return 0


def test_what_a_transport_can_do_is_the_interfaces_it_inherits():
    class Concurrent(QueueTransport, ConcurrentSends):
        pass

    class WrapsSend(Reads):  # its send would be bypassed by batched writes: none then
        def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
            super().send(message, timeout=timeout)

    assert capabilities(QueueTransport) == Capabilities()
    assert capabilities(Concurrent) == Capabilities(concurrent_sends=True)
    assert capabilities(Reads) == Capabilities(inline_reads=True, spin_reads=True, batched_writes=True)
    assert capabilities(WrapsSend) == Capabilities(inline_reads=True, spin_reads=True)
    assert capabilities(StreamableHTTPTransport) == Capabilities(concurrent_sends=True)
    with pytest.raises(TypeError):  # an interface's methods must be there
        type("Half", (QueueTransport, BatchedWrites), {})()


def test_the_class_attributes_of_before_the_interfaces_still_declare_them():
    class Flags(QueueTransport):
        self_serializing = True
        batched_writes = True

        def frame(self, message: dict[str, Any]) -> bytes | None:
            return None

        def write_frames(self, frames: list[bytes]) -> int:
            return 0

    class NoBatches(Reads):
        batched_writes = False

    assert capabilities(Flags) == Capabilities(concurrent_sends=True, batched_writes=True)
    assert capabilities(NoBatches) == Capabilities(inline_reads=True, spin_reads=True)
    transport = Reads()
    transport.spin_reads = False  # on one transport, before its Client is made
    assert capabilities(transport) == Capabilities(inline_reads=True, batched_writes=True)
    assert capabilities(Reads()).spin_reads
