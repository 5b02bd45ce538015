"""Telemetry sees each attempt a ``Retry`` makes: one CLIENT span for the call, an ``mcp.retry``
event for each attempt after the first (its number, and what ended the attempt before it).

Against the official SDK's server (``tests/servers/sdk_retry_server.py``) behind the faulty
front, in both eras.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpclient import Plugins, Retry, connect
from tests.http.conftest import start_sdk_server
from tests.http.faulty_front import FaultyFront, Refuse

RETRY_SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_retry_server.py"
BUSY = -32050


@pytest.fixture(scope="module", params=["--stateless", "--legacy-only"], ids=["modern", "legacy"])
def server(request):
    started = start_sdk_server(request.param, script=RETRY_SERVER)
    yield started
    started.stop()


def test_each_attempt_is_an_event_of_the_calls_span(otel, server):
    seen: list[tuple[int, object]] = []

    def middleware(message, next_):
        if message.method == "tools/call":
            seen.append((message.options.attempt, message.options.retry))
        return next_(message)

    retry = Retry(backoff=0.01, backoff_max=0.01, codes={BUSY})
    with FaultyFront(server.url) as front, connect(
        front.url(), timeout=20, retry=retry, middleware=[middleware],
        plugins=Plugins(telemetry=otel.telemetry()),
    ) as client:
        client.list_tools()
        front.fault("tools/call", Refuse(503, "0"), tool="busy")
        result = client.call_tool("busy", {"key": "otel", "times": 1})  # 503, then busy, then ready

    assert result.content[0].text == "ready otel"
    assert front.seen("tools/call", "busy") == ["refused 503", "passed", "passed"]
    span = otel.span("tools/call busy")
    retries = [dict(event.attributes) for event in span.events if event.name == "mcp.retry"]
    assert [event["mcp.request.attempt"] for event in retries] == [2, 3]
    assert retries[0]["error.type"] == "HTTPStatusError" and "503" in retries[0]["exception.message"]
    assert retries[1]["error.type"] == str(BUSY)
    assert "error.type" not in span.attributes, "the call succeeded in the end"
    assert [attempt for attempt, _ in seen] == [1, 2, 3]
    assert all(policy == retry for _, policy in seen), "the middleware sees the call's policy"
