"""The transport contract (transports/base.py): what the engine and the session ask of it."""

from __future__ import annotations

from typing import Any

import pytest

from mcpclient import Client
from mcpclient._exceptions import StreamInterrupted
from mcpclient.plugins.otel import network_attributes
from mcpclient.transports.base import LEGACY, Failure, Peer
from mcpclient.transports.http import StreamableHTTPTransport
from tests.doubles import QueueTransport, Reply, ScriptedServer


class ToldTransport(QueueTransport):
    """Records what the session tells it through the contract."""

    def __init__(self) -> None:
        super().__init__()
        self.protocols: list[tuple[str, str]] = []
        self.noted: list[list[Any]] = []

    def set_protocol(self, era: str, version: str) -> None:
        # Told before notifications/initialized goes out, so that message carries the version.
        assert "notifications/initialized" not in self.methods_sent()
        self.protocols.append((era, version))

    def note_tools(self, tools: list[Any]) -> list[Any]:
        self.noted.append(tools)
        return tools[:1]  # a transport may drop tools it cannot call


def test_the_session_tells_the_transport_the_era_and_version_and_the_tools():
    transport = ToldTransport()
    server = ScriptedServer(transport, {"tools/list": lambda p, m: {"tools": [
        {"name": "a", "inputSchema": {"type": "object"}}, {"name": "b", "inputSchema": {"type": "object"}}]}})
    try:
        with Client(transport, timeout=5, protocol="legacy") as client:
            assert transport.protocols == [(LEGACY, "2025-11-25")]
            assert [tool.name for tool in client.list_tools()] == ["a"]
        assert [tool.name for tool in transport.noted[0]] == ["a", "b"]
    finally:
        server.stop()


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
    assert transport.note_tools([]) == []
    transport.set_protocol(LEGACY, "2025-11-25")  # ignored
