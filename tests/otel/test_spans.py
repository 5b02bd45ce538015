"""Client spans, server-request spans, trace context in ``_meta`` and the two metrics.

Every check reads what an in-memory exporter received from a client talking to a
``FakeServer`` (legacy era) or a scripted modern server, so names, kinds, attributes,
status and parenting are the ones a real backend would store.
"""

from __future__ import annotations

import threading

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from mcpclient import Client, ConnectionClosed, Plugins, RequestTimeout, RPCError
from mcpclient._core.options import CallOptions
from mcpclient.plugins.telemetry import TelemetryExtension
from mcpclient.testing import FakeServer
from tests.doubles import QueueTransport, Reply, ScriptedServer

SERVER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SERVER_SPAN = "00f067aa0ba902b7"


def fake_server() -> FakeServer:
    fake = FakeServer(strict=False)
    fake.add_tool("add", lambda a, b: a + b)
    fake.add_tool("broken", is_error=True, result="it broke")
    fake.add_tool("refused", error=RPCError(-32602, "bad arguments"))
    fake.add_resource("file:///notes.txt", "hello")
    fake.add_prompt("greet", lambda name: f"hi {name}")
    return fake


def traceparent_of(span) -> str:
    ctx = span.get_span_context()
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-01"


def test_tool_call_span_names_kind_attributes_and_injected_parent(otel):
    fake = fake_server()
    with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry())) as client:
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    span = otel.span("tools/call add")
    assert span.kind is SpanKind.CLIENT
    assert span.status.status_code is StatusCode.UNSET
    attrs = dict(span.attributes)
    assert attrs["mcp.method.name"] == "tools/call"
    assert attrs["gen_ai.tool.name"] == "add"
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["mcp.protocol.version"] == client.protocol_version
    sent = next(c for c in fake.calls if c.method == "tools/call")
    assert attrs["jsonrpc.request.id"].isdigit()
    # The server sees this span as the parent: trace context unprefixed in params._meta.
    assert sent.params["_meta"]["traceparent"].split("-")[1:3] == traceparent_of(span).split("-")[1:3]
    assert "gen_ai.tool.call.arguments" not in attrs and "gen_ai.tool.call.result" not in attrs


def test_spans_are_children_of_the_callers_span(otel):
    fake = fake_server()
    tracer = otel.tracer_provider.get_tracer("app")
    with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry())) as client:
        with tracer.start_as_current_span("django request") as outer:
            client.list_tools()
    listed = otel.span("tools/list")
    assert listed.parent is not None and listed.parent.span_id == outer.get_span_context().span_id
    assert listed.context.trace_id == outer.get_span_context().trace_id


def test_every_method_has_its_span_and_target_attributes(otel):
    fake = fake_server()
    with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry())) as client:
        client.read_resource("file:///notes.txt")
        client.get_prompt("greet", {"name": "Ann"})
        client.ping()
        client.list_prompts()
    assert dict(otel.span("resources/read").attributes)["mcp.resource.uri"] == "file:///notes.txt"
    assert "file:///" not in otel.span("resources/read").name  # a URI is too many names
    assert dict(otel.span("prompts/get greet").attributes)["gen_ai.prompt.name"] == "greet"
    assert "gen_ai.operation.name" not in otel.span("prompts/get greet").attributes
    names = {s.name for s in otel.spans()}
    assert {"initialize", "notifications/initialized", "ping", "prompts/list"} <= names
    initialized = otel.span("notifications/initialized")
    assert "jsonrpc.request.id" not in initialized.attributes  # a notification has no id
    assert all(s.kind is SpanKind.CLIENT for s in otel.spans())


def test_tool_error_result(otel):
    fake = fake_server()
    with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry())) as client:
        assert client.call_tool("broken", {}).is_error
    span = otel.span("tools/call broken")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "tool_error"
    assert "rpc.response.status_code" not in span.attributes


def test_rpc_error_code(otel):
    fake = fake_server()
    with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry())) as client, pytest.raises(RPCError):
        client.call_tool("refused", {})
    span = otel.span("tools/call refused")
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "bad arguments"
    assert span.attributes["error.type"] == "-32602"
    assert span.attributes["rpc.response.status_code"] == "-32602"


def test_timeout(otel):
    release = threading.Event()
    fake = fake_server()
    fake.add_tool("stuck", lambda: release.wait(5) and "late")
    try:
        with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry())) as client, pytest.raises(RequestTimeout):
            client.call_tool("stuck", {}, timeout=0.2)
    finally:
        release.set()
    span = otel.span("tools/call stuck")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "timeout"


def test_exception_class(otel):
    transport = QueueTransport()
    ScriptedServer(transport, {"tools/call": lambda params, msg: transport.hang_up() or {}})
    with Client(transport,
                plugins=Plugins(telemetry=otel.telemetry()), protocol="legacy") as client, pytest.raises(ConnectionClosed):
        client.call_tool("anything", {})
    span = otel.span("tools/call anything")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "ConnectionClosed"
    sent = [m for m in transport.sent if m.get("method") == "tools/call"][0]
    assert span.attributes["jsonrpc.request.id"] == str(sent["id"])
    assert [e.name for e in span.events] == ["exception"]


def test_opt_in_records_arguments_and_results(otel):
    fake = fake_server()
    with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry(record_content=True))) as client:
        client.call_tool("add", {"a": 1, "b": 2})
    attrs = otel.span("tools/call add").attributes
    assert attrs["gen_ai.tool.call.arguments"] == '{"a":1,"b":2}'
    assert '"3"' in attrs["gen_ai.tool.call.result"]


def test_users_meta_keys_are_kept_and_nothing_added_without_a_recording_span():
    transport = QueueTransport()
    ScriptedServer(transport, {"tools/call": lambda params, msg: {"content": []}})
    # No tracer provider configured: the API's no-op tracer, so no trace context to send.
    with Client(transport, protocol="legacy", plugins=Plugins(telemetry=True)) as client:
        client.call_tool("x", {})
    sent = [m for m in transport.sent if m.get("method") == "tools/call"]
    assert "_meta" not in sent[0]["params"]


def test_users_meta_keys_kept_beside_the_trace_context(otel):
    transport = QueueTransport()
    ScriptedServer(transport, {"tools/call": lambda params, msg: {"content": []}})
    with Client(transport, protocol="legacy", plugins=Plugins(telemetry=otel.telemetry())) as client:
        client._conversation.call("tools/call", {"name": "x", "_meta": {"mine": 1}}, CallOptions(5))
    meta = [m for m in transport.sent if m.get("method") == "tools/call"][0]["params"]["_meta"]
    assert meta["mine"] == 1 and meta["traceparent"].startswith("00-")


def test_server_request_span_has_the_servers_context_as_parent(otel):
    fake = fake_server()

    def ask(ctx):
        result = ctx.sample("hello", _meta={"traceparent": f"00-{SERVER_TRACE}-{SERVER_SPAN}-01"})
        return result["content"]["text"]

    fake.add_tool("ask", ask)
    with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry())) as client:
        client.set_sampling_handler(lambda request: {"role": "assistant", "content": {"type": "text", "text": "yo"},
                                                     "model": "m"})
        assert client.call_tool("ask", {}).text == "yo"
    span = otel.span("sampling/createMessage")
    assert span.kind is SpanKind.SERVER
    assert span.parent is not None and span.parent.is_remote
    assert f"{span.parent.span_id:016x}" == SERVER_SPAN
    assert f"{span.context.trace_id:032x}" == SERVER_TRACE
    assert span.attributes["mcp.method.name"] == "sampling/createMessage"


def test_server_request_error_is_recorded(otel):
    fake = fake_server()
    fake.add_tool("roots", lambda ctx: ctx.connection.request("roots/list") and "x")
    with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry())) as client, pytest.raises(RPCError):
        client.call_tool("roots", {})  # this client exposes no roots: -32601 to the server
    span = otel.span("roots/list")
    assert span.kind is SpanKind.SERVER and span.parent is None
    assert span.attributes["error.type"] == "-32601"
    assert span.status.status_code is StatusCode.ERROR


def modern_server(transport: QueueTransport, tools_call) -> ScriptedServer:
    discover = {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "modern", "version": "1"},
    }
    return ScriptedServer(transport, {"server/discover": lambda p, m: discover, "tools/call": tools_call})


def test_modern_era_input_rounds_and_progress_are_span_events(otel):
    transport = QueueTransport()
    rounds = []

    def tools_call(params, message):
        if not rounds:
            rounds.append(params)
            token = params["_meta"]["progressToken"]
            progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": 1, "total": 2, "message": "half"}}
            need = {"resultType": "input_required", "requestState": "s1",
                    "inputRequests": {"r": {"method": "roots/list", "params": {}}}}
            raise Reply(progress, {"jsonrpc": "2.0", "id": message["id"], "result": need})
        rounds.append(params)
        return {"content": [{"type": "text", "text": "ok"}]}

    modern_server(transport, tools_call)
    seen = []
    with Client(transport, plugins=Plugins(telemetry=otel.telemetry())) as client:
        client.set_roots(["file:///r"])
        client.call_tool("t", {}, on_progress=lambda p, t, m: seen.append(p))
    assert client.protocol_version == "2026-07-28"
    span = otel.span("tools/call t")
    events = {e.name: dict(e.attributes) for e in span.events}
    assert events["mcp.input_required"] == {"mcp.input_required.methods": ("roots/list",)}
    assert events["mcp.progress"]["mcp.progress"] == 1.0 and events["mcp.progress"]["mcp.progress.message"] == "half"
    # Both rounds carry the era's _meta and our trace context.
    for params in rounds:
        assert params["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert params["_meta"]["traceparent"].split("-")[2] == f"{span.context.span_id:016x}"
    assert span.attributes["mcp.protocol.version"] == "2026-07-28"
    assert otel.span("server/discover").status.status_code is StatusCode.UNSET


def test_operation_and_session_duration_metrics(otel):
    fake = fake_server()
    with fake, Client(fake, plugins=Plugins(telemetry=otel.telemetry())) as client:
        client.call_tool("add", {"a": 1, "b": 2})
        client.call_tool("broken", {})
    points = otel.metric_points("mcp.client.operation.duration")
    tools = {p.attributes.get("gen_ai.tool.name"): p for p in points if p.attributes["mcp.method.name"] == "tools/call"}
    assert tools["add"].count == 1 and "error.type" not in tools["add"].attributes
    assert tools["broken"].attributes["error.type"] == "tool_error"
    assert list(tools["add"].explicit_bounds)[:3] == [0.01, 0.02, 0.05]
    sessions = otel.metric_points("mcp.client.session.duration")
    assert len(sessions) == 1 and sessions[0].count == 1
    assert sessions[0].attributes["mcp.protocol.version"] == client.protocol_version


def test_telemetry_off_sends_no_context_and_makes_no_spans(otel):
    fake = fake_server()
    with fake, Client(fake, plugins=Plugins(telemetry=False)) as client:
        client.call_tool("add", {"a": 1, "b": 2})
    sent = next(c for c in fake.calls if c.method == "tools/call")
    assert "_meta" not in sent.params
    assert otel.spans() == []
    assert not any(isinstance(e, TelemetryExtension) for e in client.extensions)


def test_the_global_provider_is_used_by_default(otel, monkeypatch):
    # A stand-in for an application that called trace.set_tracer_provider(...).
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: otel.tracer_provider)
    fake = fake_server()
    with fake, Client(fake) as client:
        client.list_tools()
    assert otel.span("tools/list").kind is SpanKind.CLIENT


def test_telemetry_is_the_first_extension_of_the_client(otel):
    transport = QueueTransport()
    ScriptedServer(transport)
    client = Client(transport, protocol="legacy", plugins=Plugins(telemetry=otel.telemetry(), cache=True))
    try:
        assert isinstance(client.extensions[0], TelemetryExtension)
        assert sum(isinstance(e, TelemetryExtension) for e in client.extensions) == 1
    finally:
        client.close()


def test_a_session_the_server_ended_records_its_error_type(otel):
    transport = QueueTransport()
    ScriptedServer(transport, {"tools/call": lambda params, msg: transport.hang_up() or {}})
    with Client(transport,
                plugins=Plugins(telemetry=otel.telemetry()), protocol="legacy") as client, pytest.raises(ConnectionClosed):
        client.call_tool("anything", {})
    [session] = otel.metric_points("mcp.client.session.duration")
    assert session.attributes["error.type"] == "ConnectionClosed"


def test_an_input_rounds_server_request_is_a_server_span_inside_the_call(otel):
    transport = QueueTransport()

    def tools_call(params, message):
        if "inputResponses" not in params:
            return {"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list", "params": {}}}}
        return {"content": [{"type": "text", "text": "ok"}]}

    modern_server(transport, tools_call)
    with Client(transport, plugins=Plugins(telemetry=otel.telemetry())) as client:
        client.set_roots(["file:///r"])
        client.call_tool("t", {})
    call, roots = otel.span("tools/call t"), otel.span("roots/list")
    assert roots.kind is SpanKind.SERVER
    assert roots.parent is not None and roots.parent.span_id == call.context.span_id
