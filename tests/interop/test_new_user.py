"""What a new user tripped on, against real servers: how they say "no such resource", and a
legacy-only server asked for the modern era."""

from __future__ import annotations

import pytest

from mcpclient import ProtocolError, ResourceNotFound, RPCError, Stdio, connect
from tests.conftest import SDK_SERVER
from tests.node_tools import NODE_DIR, everything_server_cmd

try:
    EVERYTHING = everything_server_cmd("stdio")
except FileNotFoundError as exc:  # CI installs them; locally: `npm ci` in tests/node
    pytest.skip(f"server-everything needs Node 22 and {NODE_DIR}/node_modules: {exc}", allow_module_level=True)

pytestmark = pytest.mark.timeout(60)

SERVERS = {
    "everything": EVERYTHING,  # -32602 "Resource demo://nope/1 not found", no data
    "sdk": SDK_SERVER,  # -32602 "Unknown resource: ...", data.uri
    "sdk-legacy-only": SDK_SERVER + ["--legacy-only"],
}


@pytest.mark.parametrize("name", list(SERVERS))
def test_an_unknown_resource_is_resource_not_found(name):
    with connect(SERVERS[name], stdio=Stdio(stderr=None), timeout=20) as client:
        with pytest.raises(ResourceNotFound) as caught:
            client.read_resource("demo://nope/1")
    assert caught.value.code in (RPCError.INVALID_PARAMS, RPCError.RESOURCE_NOT_FOUND)


def test_a_legacy_server_asked_for_the_modern_era_says_what_to_use():
    with pytest.raises(ProtocolError) as caught:
        connect(EVERYTHING, stdio=Stdio(stderr=None), timeout=20, protocol="2026-07-28")
    message = str(caught.value)
    assert "does not speak protocol 2026-07-28" in message and "'auto'" in message and "'legacy'" in message
    assert isinstance(caught.value.__cause__, RPCError) and caught.value.__cause__.code == RPCError.METHOD_NOT_FOUND
