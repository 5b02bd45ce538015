"""An opening that fails part-way leaves nothing behind, a sparse one is taken as it is, and
a request the client cannot answer gets JSON-RPC's own words (issue #28, item 8)."""

from __future__ import annotations

import logging

import pytest

from mcpclient import CapabilityError, Client, MCPError, ProtocolError, RPCError, StdioTransport, StreamableHTTPTransport
from tests.conftest import SDK_SERVER
from tests.faults.conftest import HOSTILE
from tests.faults.hostile_http import HostileHTTP
from tests.helpers import require_mcp_sdk

pytestmark = pytest.mark.timeout(60)


def assert_not_open(client: Client) -> None:
    assert client.protocol_version == ""
    assert dict(client.server_capabilities) == {}
    assert client.server_info is None


@pytest.mark.above_pipes("HTTP")
def test_initialized_answered_500_leaves_no_version_or_capabilities():
    server = HostileHTTP().start()
    server.notification_status = 500
    client = Client(StreamableHTTPTransport(server.url), protocol="legacy", timeout=5)
    try:
        with pytest.raises(MCPError, match="notifications/initialized"):
            client.initialize()
        assert_not_open(client)
    finally:
        client.close()
        server.stop()


def test_a_server_that_closes_its_pipe_in_the_handshake_leaves_no_version_or_capabilities():
    client = Client(StdioTransport([*HOSTILE, "--close-stdin-at-initialize"]), protocol="legacy", timeout=5)
    try:
        with pytest.raises(MCPError):
            client.initialize()
        assert_not_open(client)
    finally:
        client.close()


@pytest.mark.above_pipes("HTTP")
def test_an_initialize_result_without_capabilities_declares_none_with_a_warning(caplog):
    server = HostileHTTP().start()
    server.init_result = {"protocolVersion": "2025-11-25", "serverInfo": {"name": "sparse", "version": "1"}}
    try:
        with caplog.at_level(logging.WARNING, logger="mcpclient"), \
                Client(StreamableHTTPTransport(server.url), protocol="legacy", timeout=5) as client:
            assert client.protocol_version == "2025-11-25"
            assert dict(client.server_capabilities) == {}
            client.ping()  # the session is open; what the server did not declare is refused
            with pytest.raises(CapabilityError):
                client.call_tool("echo", {"text": "x"})
        assert any("no capabilities object" in r.getMessage() for r in caplog.records)
    finally:
        server.stop()


@pytest.mark.above_pipes("the handlers")
def test_a_sampling_request_with_no_handler_gets_method_not_found():
    # The official SDK's tool passes the client's error reply on: its message is JSON-RPC's.
    require_mcp_sdk()
    with Client(StdioTransport(SDK_SERVER), protocol="legacy", timeout=10) as client:
        with pytest.raises(RPCError) as caught:
            client.call_tool("sample", {"prompt": "hi"})
    assert caught.value.code == RPCError.METHOD_NOT_FOUND
    assert caught.value.message == "Method not found"


@pytest.mark.above_pipes("the handlers")
def test_in_the_modern_era_the_reason_is_still_given():
    # Input rounds are answered on the caller's thread: the error names what is missing.
    require_mcp_sdk()
    with Client(StdioTransport(SDK_SERVER), timeout=10) as client:
        assert client.protocol_version == "2026-07-28"
        with pytest.raises(ProtocolError, match="does not support sampling"):
            client.call_tool("sample", {"prompt": "hi"})
