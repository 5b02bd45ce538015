"""Telemetry on with nothing installed to record: calls skip the observer, nothing is lost.

With ``opentelemetry-api`` installed and no provider configured (the API's proxies), a span
records nothing and the propagator has nothing to send unless the caller's context carries a
span or baggage: the observer then says it is idle and the session skips it. Any provider,
propagator, span context or baggage makes it observe again.
"""

from __future__ import annotations

from opentelemetry import baggage, context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from mcpclient import Client, Plugins
from mcpclient.plugins.otel import OTelObserver, _metrics_state
from mcpclient.plugins.telemetry import TelemetryExtension
from tests.doubles import QueueTransport, ScriptedServer

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7


def scripted_client(**options) -> tuple[Client, QueueTransport]:
    transport = QueueTransport()
    ScriptedServer(transport, {"tools/call": lambda params, msg: {"content": [{"type": "text", "text": "ok"}]}})
    return Client(transport, protocol="legacy", **options), transport


def observer_of(client: Client) -> OTelObserver | None:
    """The OpenTelemetry observer of ``client``'s telemetry extension (None: telemetry off)."""
    found = [e for e in client.extensions if isinstance(e, TelemetryExtension)]
    return found[0].observer if found else None


def remote_parent() -> NonRecordingSpan:
    return NonRecordingSpan(SpanContext(TRACE_ID, SPAN_ID, is_remote=True, trace_flags=TraceFlags(1)))


def test_an_unconfigured_api_is_idle_and_calls_skip_the_observer(monkeypatch):
    entered: list[str] = []
    original = OTelObserver.client_call

    def counting(self, method, params, version):
        entered.append(method)
        return original(self, method, params, version)

    monkeypatch.setattr(OTelObserver, "client_call", counting)
    client, transport = scripted_client(plugins=Plugins(telemetry=True))
    with client:
        assert observer_of(client) is not None and observer_of(client).idle()
        assert client.call_tool("x", {}).text == "ok"
        with trace.use_span(remote_parent()):  # a context to propagate: observed again
            assert client.call_tool("x", {}).text == "ok"
    assert entered.count("tools/call") == 1
    first, second = [m for m in transport.sent if m.get("method") == "tools/call"]
    assert "_meta" not in first["params"]
    # The caller's (remote, non-recording) parent still reaches the server, as before.
    assert second["params"]["_meta"]["traceparent"] == f"00-{TRACE_ID:032x}-{SPAN_ID:016x}-01"


def test_a_provider_propagator_span_or_baggage_is_never_idle(otel, monkeypatch):
    for telemetry in (otel.telemetry(), True):
        client, _ = scripted_client(plugins=Plugins(telemetry=telemetry))
        with client:
            if telemetry is not True:
                assert not observer_of(client).idle()  # providers given: they record
                continue
            observer = observer_of(client)
            assert observer.idle()
            with trace.use_span(remote_parent()):
                assert not observer.idle()
            token = context.attach(baggage.set_baggage("tenant", "a"))
            try:
                assert not observer.idle()
            finally:
                context.detach(token)
            assert observer.idle()
            # An application that installs its providers later is seen at its next call
            # (set_tracer_provider and set_meter_provider set these globals, once per process).
            with monkeypatch.context() as patch:
                patch.setattr(trace, "_TRACER_PROVIDER", otel.tracer_provider)
                assert not observer.idle()
            with monkeypatch.context() as patch:
                patch.setattr(_metrics_state, "_METER_PROVIDER", otel.meter_provider)
                assert not observer.idle()
            assert observer.idle()


def test_a_tracer_provider_installed_after_opening_records_the_next_call(otel, monkeypatch):
    client, _ = scripted_client(plugins=Plugins(telemetry=True))
    with client:
        client.call_tool("x", {})
        assert otel.spans() == []
        # The application installs its provider now (what set_tracer_provider sets): the
        # client's tracer, from the API's proxy, delegates to it from then on.
        monkeypatch.setattr(trace, "_TRACER_PROVIDER", otel.tracer_provider)
        client.call_tool("x", {})
    assert [s.name for s in otel.spans()] == ["tools/call x"]
