"""End to end: the official SDK server's own span has our client span as its parent.

The SDK (2.3) extracts trace context from ``params._meta`` and emits a SERVER span per
request (``mcp.server._otel.OpenTelemetryMiddleware``). The test server runs it with its own
tracer provider writing finished spans to a file (``SDK_SERVER_SPANS``); this process keeps
its spans in memory. Over stdio and Streamable HTTP, in both eras.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mcpclient import Client, Plugins, StdioTransport, StreamableHTTPTransport
from mcpclient.plugins.otel import session_label
from tests.conftest import SDK_SERVER
from tests.helpers import require_mcp_sdk
from tests.http.conftest import start_sdk_server

require_mcp_sdk()

pytestmark = pytest.mark.timeout(60)

ERAS = {"modern": ([], "2026-07-28"), "legacy": (["--legacy-only"], "2025-11-25")}
#: Each era asked for by name: this test is about trace parenting, not the era probe (which
#: has its own tests). Once in CI the modern server was taken for legacy: most likely its port
#: was the one the legacy case's server had just used, whose era the client remembered (the
#: suite now clears that cache before every test), or the probe's one-second grace ran out.
PROTOCOL = {"modern": "2026-07-28", "legacy": "legacy"}


def server_spans(path: Path, name: str, within: float = 2.0) -> list[dict]:
    """The server's finished spans called ``name`` (its exporter writes as each one ends)."""
    deadline = time.monotonic() + within
    while True:
        found = []
        if path.exists():
            found = [s for s in map(json.loads, path.read_text().splitlines()) if s["name"] == name]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def check_parenting(otel, client: Client, spans_file: Path, version: str) -> None:
    assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    client.read_resource("test://text")
    assert client.protocol_version == version
    for ours_name, theirs_name in (("tools/call echo", "tools/call echo"), ("resources/read", "resources/read")):
        ours = otel.span(ours_name)
        theirs = server_spans(spans_file, theirs_name)
        assert len(theirs) == 1, theirs
        assert theirs[0]["kind"] == "SERVER"
        assert theirs[0]["trace_id"] == f"{ours.context.trace_id:032x}"
        assert theirs[0]["parent_span_id"] == f"{ours.context.span_id:016x}"
        assert theirs[0]["attributes"]["jsonrpc.request.id"] == ours.attributes["jsonrpc.request.id"]


@pytest.mark.parametrize("era", sorted(ERAS))
def test_stdio(otel, era, tmp_path):
    args, version = ERAS[era]
    spans_file = tmp_path / "spans.jsonl"
    transport = StdioTransport(SDK_SERVER + args, env={"SDK_SERVER_SPANS": str(spans_file)})
    with Client(transport, plugins=Plugins(telemetry=otel.telemetry()), protocol=PROTOCOL[era]) as client:
        check_parenting(otel, client, spans_file, version)
    assert otel.span("tools/call echo").attributes["network.transport"] == "pipe"


@pytest.mark.parametrize("era", sorted(ERAS))
def test_streamable_http(otel, era, tmp_path):
    args, version = ERAS[era]
    spans_file = tmp_path / "spans.jsonl"
    server = start_sdk_server("--transport", "streamable-http", *args, env={"SDK_SERVER_SPANS": str(spans_file)})
    try:
        with Client(StreamableHTTPTransport(server.url),
                    plugins=Plugins(telemetry=otel.telemetry()), protocol=PROTOCOL[era]) as client:
            check_parenting(otel, client, spans_file, version)
            session = client.transport.session_id
    finally:
        server.stop()
    attrs = otel.span("tools/call echo").attributes
    assert attrs["network.transport"] == "tcp" and attrs["server.address"] == "127.0.0.1"
    assert attrs["server.port"] == int(server.url.split(":")[2].split("/")[0])
    if era == "legacy":  # a session exists only in the handshake era
        assert session and attrs["mcp.session.id"] == session_label(session)  # a digest: the id is a credential
    else:
        assert "mcp.session.id" not in attrs
