"""The MCP session id is a credential, so telemetry exports a digest of it, never the id.

``SessionState`` says it: whoever holds the ``Mcp-Session-Id`` speaks in that session. Against
the official SDK's stateful Streamable HTTP server, a second client given the id resumes the
first one's session and calls a tool in it (the suspect proven: the id is worth stealing).
Spans go to collectors many people read; what they say of the session (``mcp.session.id``)
must still name one session in every span of it, and must not let anyone in.
"""

from __future__ import annotations

import pytest

from mcpclient import Client, Plugins, SessionLost, StreamableHTTPTransport, Telemetry, connect
from tests.helpers import require_mcp_sdk
from tests.http.conftest import start_sdk_server

require_mcp_sdk()
pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def server():
    started = start_sdk_server("--transport", "streamable-http")  # stateful: sessions
    yield started
    started.stop()


def test_spans_name_the_session_without_its_id_and_what_they_say_opens_nothing(server):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with Client(StreamableHTTPTransport(server.url), protocol="legacy",
                plugins=Plugins(telemetry=Telemetry(tracer_provider=provider)),
                timeout=20) as client:
        client.call_tool("echo", {"text": "one"})
        client.list_tools()
        state = client.session_state
        assert state is not None and state.session_id
        # The id is a credential: a client that has it speaks in the session.
        with connect(server.url, resume=state.as_dict(), timeout=20) as intruder:
            assert intruder.call_tool("echo", {"text": "in your session"}).text == "in your session"
        spans = [span for span in exporter.get_finished_spans() if span.attributes.get("mcp.method.name")]
        labels = {span.attributes.get("mcp.session.id") for span in spans
                  if span.attributes.get("mcp.method.name") in ("tools/call", "tools/list")}
        assert len(labels) == 1 and None not in labels  # one session, named the same in every span
        shown = [str(value) for span in spans for value in span.attributes.values()]
        assert not [value for value in shown if state.session_id in value]
        # What the spans say cannot be used as the id.
        exported = labels.pop()
        with pytest.raises(SessionLost):
            with connect(server.url, resume={**state.as_dict(), "session_id": exported}, timeout=20) as reader:
                reader.call_tool("echo", {"text": "let me in"})
        assert client.call_tool("echo", {"text": "still mine"}).text == "still mine"
