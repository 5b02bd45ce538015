"""The Client's legacy-era behaviour, against a scripted server on an in-memory transport."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from mcpclient import (
    CapabilityError,
    Client,
    ClientClosedError,
    CompletionRef,
    CreateMessageResult,
    ElicitationResult,
    MCPError,
    ProtocolError,
    RequestTimeout,
    ResourceNotFound,
    RPCError,
    Root,
)
from tests.doubles import LEGACY_INIT_RESULT, Reply, ScriptedServer, error
from tests.helpers import RELEASED_WITHIN, wait_for


def sent(server, method):
    return next(m for m in server.received if m.get("method") == method)


# -- initialize ------------------------------------------------------------------------------


def test_initialize_sends_the_newest_legacy_version_then_initialized(scripted):
    server, client = scripted
    client.initialize()
    discover, init = server.received[0], server.received[1]
    assert discover["method"] == "server/discover"  # the auto probe, refused by a legacy server
    assert init["method"] == "initialize"
    assert init["params"]["protocolVersion"] == "2025-11-25"
    assert init["params"]["clientInfo"]["name"] == "mcpclient"
    assert wait_for(lambda: server.notifications("notifications/initialized"))
    assert client.protocol_version == "2025-11-25"
    assert client.server_info.name == "scripted"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_initialize_accepts_every_supported_version(transport, version):
    server = ScriptedServer(transport, init_result={**LEGACY_INIT_RESULT, "protocolVersion": version})
    with Client(transport, timeout=5) as client:
        assert client.protocol_version == version
    server.stop()


def test_initialize_rejects_an_unknown_version(transport):
    server = ScriptedServer(transport, init_result={**LEGACY_INIT_RESULT, "protocolVersion": "1999-01-01"})
    client = Client(transport, timeout=5)
    with pytest.raises(ProtocolError, match="1999-01-01"):
        client.initialize()
    assert client.protocol_version == ""
    assert not server.notifications("notifications/initialized")
    client.close()
    server.stop()


def test_protocol_version_is_empty_before_initialize(scripted):
    _, client = scripted
    assert client.protocol_version == ""
    assert client.server_capabilities == {}


def test_calls_before_initialize_fail_with_advice(scripted):
    server, client = scripted
    with pytest.raises(MCPError, match="initialize"):
        client.list_tools()
    assert server.received == []


def test_no_capabilities_are_declared_without_handlers(scripted):
    server, client = scripted
    client.initialize()
    assert sent(server, "initialize")["params"]["capabilities"] == {}


def test_capabilities_follow_the_installed_handlers(scripted):
    server, client = scripted
    client.set_sampling_handler(lambda req: None)
    client.set_elicitation_handler(lambda req: None)
    client.set_roots([Root(uri="file:///tmp")])
    client.initialize()
    caps = sent(server, "initialize")["params"]["capabilities"]
    assert set(caps) == {"sampling", "elicitation", "roots"}
    assert caps["roots"] == {"listChanged": True}


def test_the_context_manager_initializes_and_closes(transport):
    server = ScriptedServer(transport)
    with Client(transport, timeout=5) as client:
        assert client.protocol_version
    assert transport.closed.is_set()
    with pytest.raises(ClientClosedError):
        client.list_tools()
    server.stop()


def test_a_failed_initialize_in_with_closes_the_client(transport):
    server = ScriptedServer(transport, {"initialize": lambda p, m: (_ for _ in ()).throw(error(m, -32000, "no"))})
    with pytest.raises(RPCError):
        with Client(transport, timeout=5):
            pass
    assert transport.closed.is_set()
    server.stop()


# -- capability gates ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "capability"),
    [
        (lambda c: c.list_tools(), "tools"),
        (lambda c: c.call_tool("x"), "tools"),
        (lambda c: c.list_resources(), "resources"),
        (lambda c: c.list_resource_templates(), "resources"),
        (lambda c: c.read_resource("a://b"), "resources"),
        (lambda c: c.list_prompts(), "prompts"),
        (lambda c: c.get_prompt("p"), "prompts"),
        (lambda c: c.complete(CompletionRef.prompt("p"), "a", "b"), "completions"),
    ],
)
def test_gated_methods_raise_before_sending(transport, call, capability):
    server = ScriptedServer(transport, init_result={**LEGACY_INIT_RESULT, "capabilities": {}})
    with Client(transport, timeout=5) as client:
        sent_before = len(transport.sent)
        with pytest.raises(CapabilityError) as info:
            call(client)
        assert info.value.capability == capability
        assert len(transport.sent) == sent_before
    server.stop()


# -- lists and pagination --------------------------------------------------------------------


def paged(items_key, pages):
    def handler(params, message):
        cursor = params.get("cursor")
        index = 0 if cursor is None else int(cursor)
        result = {items_key: pages[index]}
        if index + 1 < len(pages):
            result["nextCursor"] = str(index + 1)
        return result

    return handler


def test_list_tools_follows_next_cursor_to_the_end(transport):
    pages = [[{"name": "a", "inputSchema": {}}], [{"name": "b", "inputSchema": {}}], [{"name": "c"}]]
    server = ScriptedServer(transport, {"tools/list": paged("tools", pages)})
    with Client(transport, timeout=5) as client:
        assert [t.name for t in client.list_tools()] == ["a", "b", "c"]
    cursors = [m.get("params", {}).get("cursor") for m in server.received if m.get("method") == "tools/list"]
    assert cursors == [None, "1", "2"]
    server.stop()


@pytest.mark.parametrize(
    ("method", "key", "call"),
    [
        ("resources/list", "resources", lambda c: c.list_resources()),
        ("resources/templates/list", "resourceTemplates", lambda c: c.list_resource_templates()),
        ("prompts/list", "prompts", lambda c: c.list_prompts()),
    ],
)
def test_every_list_method_paginates(transport, method, key, call):
    item = {"resources": {"uri": "a://x", "name": "x"},
            "resourceTemplates": {"uriTemplate": "a://{x}", "name": "x"},
            "prompts": {"name": "x"}}[key]
    server = ScriptedServer(transport, {method: paged(key, [[item], [item]])})
    with Client(transport, timeout=5) as client:
        assert len(call(client)) == 2
    server.stop()


def test_a_repeated_cursor_stops_pagination(transport):
    server = ScriptedServer(transport, {"tools/list": lambda p, m: {"tools": [], "nextCursor": "same"}})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="repeated"):
            client.list_tools()
    assert sum(1 for m in server.received if m.get("method") == "tools/list") == 2
    server.stop()


def test_an_invalid_item_is_a_protocol_error(transport):
    server = ScriptedServer(transport, {"tools/list": lambda p, m: {"tools": [{"description": "no name"}]}})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="ToolDef"):
            client.list_tools()
    server.stop()


# -- tools -----------------------------------------------------------------------------------


def test_call_tool_sends_empty_arguments_for_none(transport):
    server = ScriptedServer(transport, {"tools/call": lambda p, m: {"content": []}})
    with Client(transport, timeout=5) as client:
        client.call_tool("t")
    call = next(m for m in server.received if m.get("method") == "tools/call")
    assert call["params"] == {"name": "t", "arguments": {}}
    server.stop()


def test_call_tool_keeps_every_part_in_order_and_joins_text(transport):
    parts = [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "AAEC", "mimeType": "image/png"},
        {"type": "future-type", "stuff": [1, 2]},
        {"type": "text", "text": "b"},
        {"type": "resource", "resource": {"uri": "x://y", "blob": "AQI=", "mimeType": "app/x"}},
    ]
    server = ScriptedServer(transport, {"tools/call": lambda p, m: {"content": parts, "isError": False,
                                                                     "structuredContent": {"n": 1}}})
    with Client(transport, timeout=5) as client:
        result = client.call_tool("t", {"x": 1})
    assert [c.type for c in result.content] == ["text", "image", "future-type", "text", "resource"]
    assert result.text == "ab"
    assert result.content[1].decoded() == b"\x00\x01\x02"
    assert result.content[2].raw == {"type": "future-type", "stuff": [1, 2]}
    assert result.content[4].resource.blob == b"\x01\x02"
    assert result.structured_content == {"n": 1}
    assert not result.is_error
    server.stop()


def test_call_tool_rejects_non_mapping_arguments(scripted):
    server, client = scripted
    client.initialize()
    with pytest.raises(TypeError):
        client.call_tool("t", ["not", "a", "dict"])


def test_an_error_reply_raises_rpc_error_with_context(transport):
    server = ScriptedServer(transport, {"tools/call": lambda p, m: (_ for _ in ()).throw(
        error(m, -32602, "unknown tool", {"name": "t"}))})
    with Client(transport, timeout=5) as client:
        with pytest.raises(RPCError) as info:
            client.call_tool("t")
    assert (info.value.code, info.value.message, info.value.data) == (-32602, "unknown tool", {"name": "t"})
    assert info.value.method == "tools/call"
    assert info.value.request_id is not None
    server.stop()


@pytest.mark.parametrize("call", [
    lambda client: client.call_tool("never"),
    lambda client: client.request("acme/never"),
    lambda client: client.list_tools(),
], ids=["call_tool", "request", "list_tools"])
def test_a_changed_client_timeout_bounds_the_next_call_that_gives_none(transport, call):
    """A call that gives no options of its own shares one made for the client's timeout:
    setting ``client.timeout`` must reach it (far from the old bound: 30 s against 0.3 s)."""

    def never(params, message):
        raise Reply()  # no answer at all

    server = ScriptedServer(transport, {"tools/call": never, "acme/never": never, "tools/list": never})
    server.handlers["initialize"] = lambda p, m: {**LEGACY_INIT_RESULT, "capabilities": {"tools": {}}}
    with Client(transport, timeout=30, protocol="legacy") as client:
        client.timeout = 0.3
        with pytest.raises(RequestTimeout) as info:
            call(client)
    assert info.value.timeout == pytest.approx(0.3, abs=0.1)  # (a listing names what was left of it)
    server.stop()


# -- resources, prompts, completions ---------------------------------------------------------


def test_read_resource_decodes_text_and_blob(transport):
    contents = [{"uri": "a://t", "text": "hi", "mimeType": "text/plain"}, {"uri": "a://b", "blob": "/wA="}]
    server = ScriptedServer(transport, {"resources/read": lambda p, m: {"contents": contents}})
    with Client(transport, timeout=5) as client:
        text, blob = client.read_resource("a://t")
    assert (text.text, text.blob) == ("hi", None)
    assert (blob.text, blob.blob) == (None, b"\xff\x00")
    server.stop()


def test_get_prompt_returns_description_and_flattened_parts(transport):
    messages = [
        {"role": "user", "content": {"type": "text", "text": "hello"}},
        {"role": "assistant", "content": {"type": "image", "data": "AQ==", "mimeType": "image/png"}},
        {"role": "user", "content": {"type": "resource", "resource": {"uri": "a://r", "text": "body"}}},
        {"role": "user", "content": {"type": "hologram", "x": 1}},
    ]
    server = ScriptedServer(transport, {"prompts/get": lambda p, m: {"description": "d", "messages": messages}})
    with Client(transport, timeout=5) as client:
        description, result = client.get_prompt("p", {"who": "me"})
    assert description == "d"
    assert [m.role for m in result] == ["user", "assistant", "user", "user"]
    assert result[0].content[0].text == "hello"
    assert result[1].content[0].data == b"\x01"
    assert result[2].content[0].resource.text == "body"
    assert result[3].content[0].type == "hologram"
    sent = next(m for m in server.received if m.get("method") == "prompts/get")
    assert sent["params"] == {"name": "p", "arguments": {"who": "me"}}
    server.stop()


def test_complete_sends_the_reference_and_argument(transport):
    server = ScriptedServer(transport, {"completion/complete": lambda p, m: {
        "completion": {"values": ["alice", "albert"], "total": 2, "hasMore": False}}})
    with Client(transport, timeout=5) as client:
        completion = client.complete(CompletionRef.resource("a://{x}"), "x", "al", context={"y": "1"})
    assert completion.values == ["alice", "albert"]
    assert completion.total == 2
    sent = next(m for m in server.received if m.get("method") == "completion/complete")
    assert sent["params"] == {"ref": {"type": "ref/resource", "uri": "a://{x}"},
                              "argument": {"name": "x", "value": "al"}, "context": {"arguments": {"y": "1"}}}
    server.stop()


# -- requests from the server ----------------------------------------------------------------


def ask(transport, request_id, method, params=None):
    """Push a server request and return the client's reply to it."""
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    transport.push(message)
    assert wait_for(lambda: any(m.get("id") == request_id and "method" not in m for m in transport.sent))
    return next(m for m in transport.sent if m.get("id") == request_id and "method" not in m)


def test_ping_from_the_server_is_answered(scripted):
    _, client = scripted
    assert ask(client.transport, "s1", "ping")["result"] == {}


def test_sampling_without_a_handler_is_method_not_found(scripted):
    _, client = scripted
    reply = ask(client.transport, "s1", "sampling/createMessage", {"messages": [], "maxTokens": 5})
    assert reply["error"]["code"] == -32601


def test_elicitation_without_a_handler_is_declined(scripted):
    _, client = scripted
    reply = ask(client.transport, "s1", "elicitation/create", {"message": "name?", "requestedSchema": {}})
    assert reply["result"] == {"action": "decline"}


def test_roots_list_answers_the_roots_set(scripted):
    _, client = scripted
    client.set_roots([Root(uri="file:///a", name="A"), "file:///b"])
    reply = ask(client.transport, 7, "roots/list")
    assert reply["result"] == {"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}]}


def test_roots_must_be_file_uris():
    with pytest.raises(ValueError, match="file://"):
        Root(uri="https://example.invalid/")


def test_changing_roots_after_initialize_notifies_the_server(scripted):
    server, client = scripted
    client.set_roots(["file:///a"])
    client.initialize()
    client.set_roots(["file:///b"])
    assert wait_for(lambda: server.notifications("notifications/roots/list_changed"))


def test_an_unknown_server_method_is_method_not_found(scripted):
    _, client = scripted
    assert ask(client.transport, 1, "mystery/method")["error"]["code"] == -32601


def test_the_sampling_handler_gets_the_request_and_its_result_is_sent(scripted):
    _, client = scripted
    seen = []

    def handler(request, token):
        seen.append((request, token))
        return CreateMessageResult.from_text("hi there", model="test-model")

    client.set_sampling_handler(handler)
    reply = ask(client.transport, 1, "sampling/createMessage", {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
        "maxTokens": 10, "systemPrompt": "be nice", "modelPreferences": {"hints": [{"name": "x"}]}})
    request, token = seen[0]
    assert request.max_tokens == 10 and request.system_prompt == "be nice"
    assert request.messages[0].content == {"type": "text", "text": "hello"}
    assert request.model_preferences == {"hints": [{"name": "x"}]}
    assert not token.cancelled
    assert reply["result"] == {"role": "assistant", "content": {"type": "text", "text": "hi there"},
                               "model": "test-model", "stopReason": "endTurn"}


@pytest.mark.parametrize("extra", [{"tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
                                   {"toolChoice": {"mode": "auto"}}])
def test_sampling_with_tools_is_refused_unless_sampling_tools_was_declared(scripted, extra):
    """The spec: without sampling.tools declared, a request with tools or toolChoice MUST get an
    error. A compliant server never sends one (the official SDK's refuses first): a double
    stands for the one that does (issue #30)."""
    _, client = scripted
    seen = []
    client.set_sampling_handler(lambda request: seen.append(request) or CreateMessageResult.from_text("x", model="m"))
    params = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5, **extra}
    reply = ask(client.transport, 1, "sampling/createMessage", params)
    assert reply["error"]["code"] == -32602 and "sampling.tools" in reply["error"]["message"]
    assert seen == []  # the handler never saw it
    client.set_sampling_handler(lambda request: seen.append(request) or CreateMessageResult.from_text("x", model="m"),
                                tools=True)
    assert ask(client.transport, 2, "sampling/createMessage", params)["result"]["content"]["text"] == "x"
    assert len(seen) == 1


def test_a_one_argument_elicitation_handler_is_accepted(scripted):
    _, client = scripted
    client.set_elicitation_handler(lambda request: ElicitationResult(action="accept", content={"n": request.message}))
    reply = ask(client.transport, 1, "elicitation/create", {"message": "m", "requestedSchema": {"type": "object"}})
    assert reply["result"] == {"action": "accept", "content": {"n": "m"}}


def test_a_raising_handler_gets_an_error_reply_and_a_log_line(scripted, caplog):
    _, client = scripted

    def handler(request, token):
        raise KeyError("boom")

    client.set_sampling_handler(handler)
    with caplog.at_level(logging.ERROR):
        reply = ask(client.transport, 1, "sampling/createMessage", {"messages": [], "maxTokens": 1})
    assert reply["error"]["code"] == -32603
    assert "boom" in reply["error"]["message"]
    assert any("sampling/createMessage" in r.getMessage() for r in caplog.records)
    # The reader thread survived: a later ping is still answered.
    assert ask(client.transport, 2, "ping")["result"] == {}


def test_the_server_can_cancel_a_running_handler(scripted):
    _, client = scripted
    started, cancelled, returned = threading.Event(), threading.Event(), threading.Event()

    def handler(request, token):
        started.set()
        if token.wait(60):
            cancelled.set()
        returned.set()
        return CreateMessageResult.from_text("late", model="m")

    client.set_sampling_handler(handler)
    client.transport.push({"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage",
                           "params": {"messages": [], "maxTokens": 1}})
    assert started.wait(RELEASED_WITHIN)
    client.transport.push({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": 9, "reason": "changed my mind"}})
    assert cancelled.wait(RELEASED_WITHIN)
    assert returned.wait(RELEASED_WITHIN)
    time.sleep(0.2)  # a reply, were one sent, leaves right after the handler returns
    assert not any(m.get("id") == 9 for m in client.transport.sent), "no reply after a cancel"


def test_notifications_reach_the_handler(scripted):
    _, client = scripted
    got = []
    client.set_notification_handler(lambda method, params: got.append((method, params)))
    client.transport.push({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}})
    assert wait_for(lambda: got)
    assert got == [("notifications/message", {"level": "info"})]


def test_handlers_see_cancellation_when_the_client_closes(transport):
    server = ScriptedServer(transport)
    client = Client(transport, timeout=5)
    started, saw_cancel = threading.Event(), threading.Event()

    def handler(request, token):
        started.set()
        if token.wait(60):  # a close that waited for the handler: 60 s
            saw_cancel.set()
        return ElicitationResult(action="cancel")

    client.set_elicitation_handler(handler)
    transport.push({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
                    "params": {"message": "x", "requestedSchema": {}}})
    assert started.wait(5)
    t0 = time.monotonic()
    client.close()
    assert saw_cancel.is_set()
    assert time.monotonic() - t0 < RELEASED_WITHIN
    server.stop()


def test_close_returns_even_if_a_handler_ignores_cancellation(transport):
    server = ScriptedServer(transport)
    client = Client(transport, timeout=5)
    release, started = threading.Event(), threading.Event()

    def handler(request, token):
        started.set()
        release.wait(30)  # ignores the token on purpose
        return ElicitationResult(action="cancel")

    client.set_elicitation_handler(handler)
    transport.push({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
                    "params": {"message": "x", "requestedSchema": {}}})
    assert started.wait(5)
    t0 = time.monotonic()
    client.close()
    elapsed = time.monotonic() - t0
    release.set()
    assert elapsed < RELEASED_WITHIN  # (the handler holds out 30 s)
    server.stop()


def test_close_is_idempotent_and_later_calls_fail_at_once(scripted):
    _, client = scripted
    client.initialize()
    client.close()
    client.close()
    t0 = time.monotonic()
    with pytest.raises(ClientClosedError, match="client closed"):
        client.call_tool("x", timeout=60)
    assert time.monotonic() - t0 < RELEASED_WITHIN


def test_repr_names_the_state_and_version(scripted):
    _, client = scripted
    assert "unopened" in repr(client)
    client.initialize()
    assert "open" in repr(client) and "2025-11-25" in repr(client)


def test_an_accepted_elicitation_gets_the_schema_defaults_filled_in(scripted):
    _, client = scripted
    client.set_elicitation_handler(lambda request: ElicitationResult(action="accept", content={"name": "Ada"}))
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "default": "nobody"},
        "age": {"type": "integer", "default": 30},
        "colour": {"type": "string"},
    }}
    reply = ask(client.transport, 1, "elicitation/create", {"message": "who?", "requestedSchema": schema})
    assert reply["result"] == {"action": "accept", "content": {"name": "Ada", "age": 30}}


@pytest.mark.parametrize("code, message, data, found", [
    (-32002, "Resource not found", None, True),
    (-32602, "Unknown resource: demo://x", {"uri": "demo://x"}, True),
    (-32602, "MCP error -32602: Resource demo://x not found", None, True),
    (-32602, "Invalid URI demo://x: bad scheme", None, False),
    (-32602, "Resource demo://other not found", None, False),
    (-32603, "Resource demo://x not found", None, False),
])
def test_which_read_errors_mean_resource_not_found(code, message, data, found):
    from mcpclient._protocol.reads import resource_not_found as _not_found

    error = _not_found(RPCError(code, message, data, method="resources/read"), "demo://x")
    assert isinstance(error, ResourceNotFound) is found
