"""``protocol="auto"`` against real servers: the era is found, then remembered per server.

Legacy-only servers (server-everything, the SDK server with ``--legacy-only``) refuse
``server/discover`` and get ``initialize``; the SDK server in its default mode answers the probe
and is spoken to in 2026-07-28. Over stdio and Streamable HTTP alike, a second client for the
same server (the same command line, or the same URL) skips what the first one learned: a
legacy server gets ``initialize`` straight away.
"""

from __future__ import annotations

from typing import Callable, Iterator

import pytest

from mcpclient import Client, StdioTransport, StreamableHTTPTransport, Transport
from mcpclient._client.conversation import _era_cache
from tests import node_tools
from tests.conftest import SDK_SERVER
from tests.http.conftest import start_sdk_server

from .suite import spy_methods
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

pytestmark = pytest.mark.timeout(60)

MODERN, LEGACY = "2026-07-28", "2025-11-25"


def _everything_stdio() -> Iterator[Callable[[], Transport]]:
    _need_node()
    yield lambda: StdioTransport(node_tools.everything_server_cmd("stdio"), stderr=None)


def _everything_http() -> Iterator[Callable[[], Transport]]:
    _need_node()
    server = node_tools.start_everything_http("streamableHttp")
    try:
        yield lambda: StreamableHTTPTransport(server.url)
    finally:
        server.stop()


def _sdk_stdio(*args: str) -> Callable[[], Iterator[Callable[[], Transport]]]:
    def servers() -> Iterator[Callable[[], Transport]]:
        yield lambda: StdioTransport(SDK_SERVER + list(args), stderr=None)

    return servers


def _sdk_http(*args: str) -> Callable[[], Iterator[Callable[[], Transport]]]:
    def servers() -> Iterator[Callable[[], Transport]]:
        server = start_sdk_server("--transport", "streamable-http", *args)
        try:
            yield lambda: StreamableHTTPTransport(server.url)
        finally:
            server.stop()

    return servers


def _need_node() -> None:
    if node_tools.node22() is None or not node_tools.EVERYTHING_JS.is_file():
        pytest.skip("Node 22 or server-everything missing: run `npm ci` in tests/node")


SERVERS = {
    "everything-stdio": (_everything_stdio, LEGACY),
    "everything-http": (_everything_http, LEGACY),
    "sdk-legacy-only-stdio": (_sdk_stdio("--legacy-only"), LEGACY),
    "sdk-legacy-only-http": (_sdk_http("--legacy-only"), LEGACY),
    "sdk-stdio": (_sdk_stdio(), MODERN),
    "sdk-http": (_sdk_http(), MODERN),
}


@pytest.fixture(params=list(SERVERS))
def server(request) -> Iterator[tuple[Callable[[], Transport], str]]:
    start, version = SERVERS[request.param]
    yield from ((make, version) for make in start())


def open_client(make_transport: Callable[[], Transport], *, forget: bool = False) -> tuple[Client, list[str]]:
    """A client in auto mode, and the methods it sends (recorded from before the probe).

    ``forget`` drops what an earlier test learned about the same server first.
    """
    transport = make_transport()
    if forget:
        _era_cache.pop(transport.about.server_key, None)
    client = Client(transport, timeout=20)
    sent = spy_methods(client)
    client.initialize()
    return client, sent


def test_auto_finds_the_era_and_a_second_client_skips_the_probe(server):
    make_transport, version = server
    first, sent = open_client(make_transport, forget=True)
    with first:
        assert first.protocol_version == version
        assert sent[0] == "server/discover"
        # A modern server slower than PROBE_GRACE to answer (a Python server starting up) is
        # sent initialize as well, but its discover answer wins: no legacy handshake follows.
        assert ("notifications/initialized" in sent) == (version == LEGACY)
        assert version == MODERN or "initialize" in sent
        assert "echo" in {tool.name for tool in first.list_tools()}

    second, sent = open_client(make_transport)
    with second:
        assert second.protocol_version == version
        if version == LEGACY:
            assert "server/discover" not in sent
            assert sent[:2] == ["initialize", "notifications/initialized"]
        else:
            assert sent[0] == "server/discover" and "initialize" not in sent
        assert "echo" in {tool.name for tool in second.list_tools()}
