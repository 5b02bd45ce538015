"""Every public Client method against the official-SDK test server, over Streamable HTTP.

The same tests as ``test_sdk_stdio.py`` (written once in ``tests/interop/sdk_checks.py``), run against
one server process per mode: the server's default mode (mcpclient detects 2026-07-28 by
itself) and ``--legacy-only`` (it falls back to the handshake), each with SSE reply streams and
with ``--json-response`` bodies. A mode runs only the checks it can carry:

* the server asks the client (sampling, elicitation, roots) in the modern era with
  input-required results, whatever the body; in the legacy era only with a reply stream;
* progress and log notifications need a reply stream;
* ``touch`` notifies a legacy subscriber on the reply stream, a modern one on its
  ``subscriptions/listen`` stream; ``toggle_tool`` notifies legacy clients on the GET stream.

The server is shared by a mode's tests and clients are cheap, so every test opens its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from mcpclient import StreamableHTTPTransport
from tests.http.conftest import start_sdk_server

from .peer import Connections, Peer
from .sdk_checks import *  # noqa: F403 (the shared tests and their fixtures)
from .sdk_checks import Carries
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

pytestmark = pytest.mark.timeout(120)

MODERN, LEGACY = "2026-07-28", "2025-11-25"


class Mode(NamedTuple):
    args: tuple[str, ...]
    version: str
    carries: Carries


MODES = {
    "modern-sse": Mode((), MODERN, Carries()),
    # The SDK's 2026 JSON-body path never notices a closed connection, the era's cancellation.
    "modern-json": Mode(("--json-response",), MODERN, Carries(streams=False, cancels=False)),
    "legacy-sse": Mode(("--legacy-only",), LEGACY, Carries()),
    "legacy-json": Mode(("--legacy-only", "--json-response"), LEGACY, Carries(asks=False, streams=False, pushes=False)),
}


@pytest.fixture(scope="module", params=list(MODES))
def mode(request) -> Mode:
    return MODES[request.param]


@pytest.fixture(scope="module")
def events_file(mode, tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sdk-http-events") / "events.jsonl"


@pytest.fixture(scope="module")
def server(mode, events_file):
    started = start_sdk_server(
        "--transport", "streamable-http", *mode.args, env={"SDK_SERVER_EVENTS": str(events_file)}
    )
    yield started
    started.stop()


@pytest.fixture
def connect(server):
    """``connect(peer=None, **install)``: an initialized client of its own on the shared server."""
    connections = Connections(lambda: StreamableHTTPTransport(server.url))
    yield connections.open
    connections.close_all()


@pytest.fixture
def client(connect):
    return connect()


@pytest.fixture
def peer() -> Peer:
    return Peer()


@pytest.fixture
def peer_client(connect, peer):
    return connect(peer)


@pytest.fixture
def version(mode) -> str:
    return mode.version


@pytest.fixture
def carries(mode) -> Carries:
    return mode.carries
