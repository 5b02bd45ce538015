"""Era selection and the modern (2026-07-28) request path, against scripted servers."""

from __future__ import annotations

import threading
import time

import pytest

from mcpclient import (
    Client,
    CreateMessageResult,
    ElicitationResult,
    Plugins,
    ProtocolError,
    RequestTimeout,
    ResourceNotFound,
    RPCError,
    Root,
)
from mcpclient._client.conversation import _era_cache
from mcpclient.transports.base import About
from tests.doubles import LEGACY_INIT_RESULT, QueueTransport, Reply, ScriptedServer, error
from tests.helpers import RELEASED_WITHIN, wait_for

V = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
CAPS = {"tools": {"listChanged": True}, "resources": {"subscribe": True}, "prompts": {}}
DISCOVER = {"resultType": "complete", "supportedVersions": [V], "capabilities": CAPS,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}},
            "instructions": "be modern", "ttlMs": 1000, "cacheScope": "public"}


def modern_server(transport, handlers=None):
    table = {"server/discover": lambda p, m: dict(DISCOVER),
             "initialize": lambda p, m: (_ for _ in ()).throw(error(m, -32601, "no initialize here"))}
    table.update(handlers or {})
    return ScriptedServer(transport, table)


def methods(server):
    return [m.get("method") for m in server.received]


# -- choosing the era ------------------------------------------------------------------------


def test_auto_uses_discover_with_a_modern_server(transport):
    server = modern_server(transport)
    with Client(transport, timeout=5) as client:
        assert client.protocol_version == V
        assert client.server_info.name == "modern"
        assert client.instructions == "be modern"
        assert client.server_capabilities == CAPS
    assert "initialize" not in methods(server)
    server.stop()


@pytest.mark.parametrize("code", [-32601, -32602, -32600, -32000, 1234])
def test_auto_falls_back_to_initialize_on_any_non_modern_error(transport, code):
    server = ScriptedServer(transport, {"server/discover": lambda p, m: (_ for _ in ()).throw(error(m, code, "?"))})
    with Client(transport, timeout=5) as client:
        assert client.protocol_version == "2025-11-25"
    assert methods(server)[:2] == ["server/discover", "initialize"]
    server.stop()


def test_auto_falls_back_when_the_probe_gets_no_answer(transport, monkeypatch):
    monkeypatch.setattr("mcpclient._client.conversation.PROBE_TIMEOUT", 0.2)
    server = ScriptedServer(transport, {"server/discover": lambda p, m: (_ for _ in ()).throw(Reply())})
    with Client(transport, timeout=5) as client:
        assert client.protocol_version == "2025-11-25"
    assert not server.notifications("notifications/cancelled"), "the probe is not cancelled"
    server.stop()


def test_unsupported_version_error_with_a_modern_version_stays_modern(transport):
    calls = []

    def discover(params, message):
        calls.append(params["_meta"][META_VERSION])
        if len(calls) == 1:
            raise error(message, -32022, "Unsupported protocol version", {"supported": [V, "2025-11-25"], "requested": V})
        return dict(DISCOVER)

    server = modern_server(transport, {"server/discover": discover})
    with Client(transport, timeout=5) as client:
        assert client.protocol_version == V
    assert "initialize" not in methods(server)
    server.stop()


def test_unsupported_version_error_listing_only_legacy_versions_falls_back(transport):
    server = ScriptedServer(transport, {"server/discover": lambda p, m: (_ for _ in ()).throw(
        error(m, -32022, "Unsupported", {"supported": ["2025-06-18"]}))},
        init_result={**LEGACY_INIT_RESULT, "protocolVersion": "2025-06-18"})
    with Client(transport, timeout=5) as client:
        assert client.protocol_version == "2025-06-18"
    server.stop()


def test_a_server_speaking_only_unknown_versions_is_refused(transport):
    server = ScriptedServer(transport, {"server/discover": lambda p, m: (_ for _ in ()).throw(
        error(m, -32022, "Unsupported", {"supported": ["2099-01-01"]}))})
    client = Client(transport, timeout=5)
    with pytest.raises(ProtocolError, match="2099-01-01"):
        client.initialize()
    client.close()
    server.stop()


def test_protocol_legacy_skips_the_probe(transport):
    server = ScriptedServer(transport)
    with Client(transport, timeout=5, protocol="legacy") as client:
        assert client.protocol_version == "2025-11-25"
    assert methods(server)[0] == "initialize"
    server.stop()


def test_protocol_modern_never_falls_back(transport):
    server = ScriptedServer(transport)  # legacy only: discover is "method not found"
    client = Client(transport, timeout=5, protocol=V)
    with pytest.raises(ProtocolError, match="does not speak protocol") as caught:
        client.initialize()
    assert isinstance(caught.value.__cause__, RPCError)
    assert "initialize" not in methods(server)
    client.close()
    server.stop()


def test_an_unknown_protocol_choice_is_refused(transport):
    with pytest.raises(ValueError, match="protocol"):
        Client(transport, protocol="2030-01-01")


def test_the_era_is_remembered_per_server(monkeypatch):
    monkeypatch.setattr(QueueTransport, "about", About(server_key=("test", "remembered")))
    _era_cache.pop(("test", "remembered"), None)
    try:
        for attempt in range(2):
            transport = QueueTransport()
            server = ScriptedServer(transport)
            with Client(transport, timeout=5):
                pass
            assert ("server/discover" in methods(server)) == (attempt == 0)
            server.stop()
    finally:
        _era_cache.pop(("test", "remembered"), None)


def test_an_explicit_legacy_choice_is_not_remembered_as_the_servers_era(monkeypatch):
    monkeypatch.setattr(QueueTransport, "about", About(server_key=("test", "dual-era")))
    _era_cache.pop(("test", "dual-era"), None)
    try:
        transport = QueueTransport()
        server = ScriptedServer(transport)
        with Client(transport, timeout=5, protocol="legacy"):
            pass
        server.stop()
        transport = QueueTransport()
        server = modern_server(transport)
        with Client(transport, timeout=5) as client:
            assert client.protocol_version == V
        assert methods(server)[0] == "server/discover"
        server.stop()
    finally:
        _era_cache.pop(("test", "dual-era"), None)


# -- the modern request path -----------------------------------------------------------------


def test_every_modern_request_carries_meta(transport):
    server = modern_server(transport, {"tools/list": lambda p, m: {"resultType": "complete", "tools": [],
                                                                     "ttlMs": 0, "cacheScope": "public"}})
    with Client(transport, timeout=5) as client:
        client.set_log_level("warning")
        client.list_tools()
    for message in server.received:
        meta = message["params"]["_meta"]
        assert meta[META_VERSION] == V
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcpclient"
        assert "io.modelcontextprotocol/clientCapabilities" in meta
    assert server.received[-1]["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "warning"
    assert "logging/setLevel" not in methods(server)
    server.stop()


def test_a_missing_result_type_means_complete_and_an_unknown_one_is_an_error(transport):
    results = iter([{"content": [{"type": "text", "text": "ok"}]}, {"resultType": "teleport", "content": []}])
    server = modern_server(transport, {"tools/call": lambda p, m: next(results)})
    with Client(transport, timeout=5) as client:
        assert client.call_tool("t").text == "ok"
        with pytest.raises(ProtocolError, match="teleport"):
            client.call_tool("t")
    server.stop()


def test_input_required_runs_the_handlers_and_retries_with_state(transport):
    rounds = []

    def call(params, message):
        rounds.append(message)
        if len(rounds) == 1:
            return {"resultType": "input_required", "requestState": "opaque-1", "inputRequests": {
                "who": {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {
                    "type": "object", "properties": {"name": {"type": "string"}}}}},
                "llm": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
                "where": {"method": "roots/list", "params": {}},
            }}
        if len(rounds) == 2:
            return {"resultType": "input_required", "requestState": "opaque-2"}  # load shedding: no requests
        return {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}

    server = modern_server(transport, {"tools/call": call})
    client = Client(transport, timeout=5)
    client.set_elicitation_handler(lambda req: ElicitationResult(action="accept", content={"name": "Ada"}))
    client.set_sampling_handler(lambda req: CreateMessageResult.from_text("Paris", model="m"))
    client.set_roots([Root(uri="file:///w")])
    client.initialize()
    assert client.call_tool("t", {"x": 1}).text == "done"
    first, second, third = rounds
    assert len({first["id"], second["id"], third["id"]}) == 3, "each retry is a new request"
    assert second["params"]["requestState"] == "opaque-1"
    answers = second["params"]["inputResponses"]
    assert answers["who"] == {"action": "accept", "content": {"name": "Ada"}}
    assert answers["llm"]["content"] == {"type": "text", "text": "Paris"}
    assert answers["where"] == {"roots": [{"uri": "file:///w"}]}
    assert third["params"]["requestState"] == "opaque-2"
    assert "inputResponses" not in third["params"]
    assert third["params"]["arguments"] == {"x": 1}
    client.close()
    server.stop()


def test_max_total_caps_every_input_round_from_the_start_of_the_call(transport):
    """The call's deadline travels with its options: a round sent after an input handler took
    most of ``max_total`` gets only what is left (it ends at 4 s, not 3 + 4), and the error
    names the caller's ``max_total``."""
    rounds = []

    def call(params, message):
        rounds.append(message)
        if len(rounds) == 1:
            return {"resultType": "input_required", "inputRequests": {
                "who": {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {
                    "type": "object", "properties": {"name": {"type": "string"}}}}}}}
        raise Reply()  # the second round is never answered

    def slow_answer(request):
        time.sleep(3.0)  # the user takes their time: 3 of the call's 4 seconds
        return ElicitationResult(action="accept", content={"name": "Ada"})

    server = modern_server(transport, {"tools/call": call})
    client = Client(transport, timeout=60)
    client.set_elicitation_handler(slow_answer)
    client.initialize()
    start = time.monotonic()
    with pytest.raises(RequestTimeout) as info:
        client.call_tool("t", max_total=4.0)
    assert time.monotonic() - start < 6.5  # a fresh cap for the round would end it at 7 s
    assert len(rounds) == 2
    assert info.value.timeout == 4.0 and "max_total=4s" in str(info.value)
    client.close()
    server.stop()


@pytest.mark.parametrize("kind", ["token", "event"])
def test_the_callers_cancel_reaches_an_input_handler_that_waits(transport, kind):
    """A handler answering an input round waits on its token; the caller's cancel (a
    CancelToken, or a plain Event, which has no callbacks) must wake it, and end the call."""
    import time

    from mcpclient import CancelToken, RequestCancelled

    server = modern_server(transport, {"tools/call": lambda p, m: {"resultType": "input_required", "inputRequests": {
        "who": {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {}}}}}})
    waiting, woke = threading.Event(), []

    def handler(request, token):
        waiting.set()
        woke.append(token.wait(60))  # a cancel the handler is not told of: 60 s
        return ElicitationResult(action="decline")

    cancel = CancelToken() if kind == "token" else threading.Event()
    client = Client(transport, timeout=30)
    client.set_elicitation_handler(handler)
    client.initialize()
    errors: list[BaseException] = []
    caller = threading.Thread(target=lambda: _record(errors, client.call_tool, "t", cancel=cancel), daemon=True)
    caller.start()
    assert waiting.wait(5)
    start = time.monotonic()
    cancel.cancel() if isinstance(cancel, CancelToken) else cancel.set()
    caller.join(RELEASED_WITHIN)
    assert not caller.is_alive(), "the call is still blocked"
    assert time.monotonic() - start < RELEASED_WITHIN
    assert woke == [True], "the handler was not told of the cancel"
    assert len(errors) == 1 and isinstance(errors[0], RequestCancelled)
    client.close()
    server.stop()


@pytest.mark.parametrize("kind", ["token", "event"])
def test_a_call_cancelled_before_it_starts_is_never_sent(transport, kind):
    from mcpclient import CancelToken, RequestCancelled

    server = modern_server(transport, {"tools/call": lambda p, m: {"content": []}})
    cancel = CancelToken() if kind == "token" else threading.Event()
    cancel.cancel() if isinstance(cancel, CancelToken) else cancel.set()
    with Client(transport, timeout=5) as client:
        with pytest.raises(RequestCancelled, match="before it was sent"):
            client.call_tool("t", cancel=cancel)
        assert client.call_tool("t").text == ""  # the client goes on
    assert methods(server).count("tools/call") == 1
    server.stop()


def _record(errors: list[BaseException], fn, *args, **kwargs) -> None:
    try:
        fn(*args, **kwargs)
    except BaseException as exc:  # recorded for the test
        errors.append(exc)


def test_a_retry_without_request_state_carries_none(transport):
    rounds = []

    def get(params, message):
        rounds.append(params)
        if len(rounds) == 1:
            return {"resultType": "input_required", "inputRequests": {
                "e": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {}}}}}
        return {"resultType": "complete", "messages": []}

    server = modern_server(transport, {"prompts/get": get})
    with Client(transport, timeout=5) as client:
        client.get_prompt("p")
    assert "requestState" not in rounds[1]
    assert rounds[1]["inputResponses"] == {"e": {"action": "decline"}}  # no handler: declined
    server.stop()


def test_input_rounds_are_bounded(transport, monkeypatch):
    monkeypatch.setattr("mcpclient._client.conversation.MAX_INPUT_ROUNDS", 3)
    server = modern_server(transport, {"tools/call": lambda p, m: {"resultType": "input_required", "requestState": "x"}})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="more than 3"):
            client.call_tool("t")
    assert methods(server).count("tools/call") == 4
    server.stop()


def test_input_required_on_a_method_that_forbids_it_is_an_error(transport):
    server = modern_server(transport, {"tools/list": lambda p, m: {"resultType": "input_required", "requestState": "x"}})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="does not allow"):
            client.list_tools()
    server.stop()


def test_an_input_request_the_client_cannot_answer_is_a_clear_error(transport):
    server = modern_server(transport, {"tools/call": lambda p, m: {"resultType": "input_required", "inputRequests": {
        "s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}}}})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="sampling"):
            client.call_tool("t")
    server.stop()


@pytest.mark.parametrize(("code", "data"), [(-32602, {"uri": "a://gone"}), (-32002, None)])
def test_resource_not_found_in_either_era(transport, code, data):
    server = modern_server(transport, {"resources/read": lambda p, m: (_ for _ in ()).throw(
        error(m, code, "Resource not found", data))})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ResourceNotFound) as info:
            client.read_resource("a://gone")
    assert isinstance(info.value, RPCError) and info.value.code == code
    server.stop()


def test_header_mismatch_refreshes_the_tools_and_retries_once(transport):
    calls = []

    def call(params, message):
        calls.append(message)
        if len(calls) == 1:
            raise error(message, -32020, "header mismatch")
        return {"resultType": "complete", "content": []}

    server = modern_server(transport, {"tools/call": call,
                                       "tools/list": lambda p, m: {"resultType": "complete", "tools": []}})
    with Client(transport, timeout=5) as client:
        client.call_tool("t")
    assert methods(server).count("tools/list") == 1 and len(calls) == 2
    server.stop()


def test_ping_uses_discover_in_the_modern_era(transport):
    server = modern_server(transport)
    with Client(transport, timeout=5) as client:
        client.ping()
    assert methods(server).count("server/discover") == 2
    server.stop()


# -- subscriptions ---------------------------------------------------------------------------


def test_modern_subscriptions_open_a_listen_stream_and_reopen_it_on_change(transport):
    listens = []

    def listen(params, message):
        listens.append(message)
        transport.push({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": message["id"]},
                                   "notifications": params["notifications"]}})
        raise Reply()  # the stream stays open

    server = modern_server(transport, {"subscriptions/listen": listen})
    updated, changed = [], []
    with Client(transport, timeout=5) as client:
        client.set_resource_updated_handler(updated.append)
        client.set_list_changed_handler(changed.append)
        assert wait_for(lambda: len(listens) == 1)
        assert listens[0]["params"]["notifications"] == {
            "toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
        client.subscribe_resource("file:///a")
        assert wait_for(lambda: len(listens) == 2)
        assert listens[1]["params"]["notifications"]["resourceSubscriptions"] == ["file:///a"]
        assert wait_for(lambda: any(m.get("method") == "notifications/cancelled"
                                    and m["params"]["requestId"] == listens[0]["id"] for m in server.received))
        sub = {"io.modelcontextprotocol/subscriptionId": listens[1]["id"]}
        transport.push({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                        "params": {"_meta": sub, "uri": "file:///a"}})
        transport.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": sub}})
        assert wait_for(lambda: updated == ["file:///a"] and changed == ["tools"])
    assert "resources/subscribe" not in methods(server)
    server.stop()


def _acknowledge(transport, message, honoured=None):
    """What a 2026 server does first on a listen stream: say what of the filter it honours."""
    transport.push({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                    "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": message["id"]},
                               "notifications": message["params"]["notifications"] if honoured is None else honoured}})


def test_a_resource_subscribed_again_after_the_last_unsubscribe_reopens_the_listen_stream(transport):
    listens = []

    def listen(params, message):
        listens.append(message)
        _acknowledge(transport, message)
        raise Reply()  # the stream stays open

    server = modern_server(transport, {"subscriptions/listen": listen})
    with Client(transport, timeout=5) as client:
        client.subscribe_resource("file:///a")
        assert wait_for(lambda: len(listens) == 1)
        client.unsubscribe_resource("file:///a")
        # Nothing left to listen for: the listen thread ends.
        assert wait_for(lambda: not any(t.name == "mcpclient-listen" for t in threading.enumerate()))
        client.subscribe_resource("file:///a")
        assert wait_for(lambda: len(listens) == 2)
        assert listens[1]["params"]["notifications"] == {"resourceSubscriptions": ["file:///a"]}
    server.stop()


def test_a_subscription_the_server_leaves_out_of_its_acknowledgement_raises(transport):
    """The acknowledgement names what the server will send; a URI it leaves out is an error
    for subscribe_resource, not a silence (issue #30)."""
    from mcpclient import SubscriptionError

    listens = []

    def listen(params, message):
        listens.append(message)
        _acknowledge(transport, message, honoured={})  # agrees to nothing
        raise Reply()

    server = modern_server(transport, {"subscriptions/listen": listen})
    with Client(transport, timeout=5) as client:
        with pytest.raises(SubscriptionError, match="leaves it out") as info:
            client.subscribe_resource("file:///a")
        assert info.value.uri == "file:///a"
        # The refused URI is dropped from the filter: the listen thread has nothing left to hold.
        assert wait_for(lambda: not any(t.name == "mcpclient-listen" for t in threading.enumerate()))
    server.stop()


def test_an_unacknowledged_subscription_ends_at_its_timeout(transport):
    from mcpclient import SubscriptionError

    def listen(params, message):
        raise Reply()  # never acknowledges

    server = modern_server(transport, {"subscriptions/listen": listen})
    with Client(transport, timeout=60) as client:  # a wait past its own timeout: 60 s
        started = time.monotonic()
        with pytest.raises(SubscriptionError, match="within 1s"):
            client.subscribe_resource("file:///a", timeout=1)
        assert time.monotonic() - started < 1 + RELEASED_WITHIN
    server.stop()


def test_a_stale_streams_acknowledgement_does_not_answer_a_newer_filter(transport):
    """Acknowledgements carry the id of the listen request they answer: one for a stream the
    client has replaced must not make subscribe_resource return early."""
    from mcpclient import SubscriptionError

    listens = []

    def listen(params, message):
        listens.append(message)
        if len(listens) == 1:
            _acknowledge(transport, message)
        else:  # the new stream stays silent; a late acknowledgement of the first arrives instead
            first = dict(listens[0], params={"notifications": {"resourceSubscriptions": ["file:///a"]}})
            _acknowledge(transport, first)
        raise Reply()

    server = modern_server(transport, {"subscriptions/listen": listen})
    with Client(transport, timeout=5) as client:
        client.set_list_changed_handler(lambda kind: None)
        assert wait_for(lambda: len(listens) == 1)
        with pytest.raises(SubscriptionError, match="within 1s"):
            client.subscribe_resource("file:///a", timeout=1)
    server.stop()


def test_legacy_subscriptions_use_resources_subscribe(transport):
    caps = {"resources": {"subscribe": True}}
    server = ScriptedServer(transport, {"resources/subscribe": lambda p, m: {},
                                        "resources/unsubscribe": lambda p, m: {}},
                            init_result={**LEGACY_INIT_RESULT, "capabilities": caps})
    updated = []
    with Client(transport, timeout=5) as client:
        client.set_resource_updated_handler(updated.append)
        client.subscribe_resource("file:///b")
        transport.push({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///b"}})
        assert wait_for(lambda: updated == ["file:///b"])
        client.unsubscribe_resource("file:///b")
    sub = next(m for m in server.received if m.get("method") == "resources/subscribe")
    assert sub["params"] == {"uri": "file:///b"}
    assert "resources/unsubscribe" in methods(server)
    assert "subscriptions/listen" not in methods(server)
    server.stop()


def test_legacy_subscribe_needs_the_capability(transport):
    from mcpclient import CapabilityError

    server = ScriptedServer(transport)
    with Client(transport, timeout=5) as client:
        with pytest.raises(CapabilityError, match="subscribe"):
            client.subscribe_resource("file:///b")
    server.stop()


# -- caching ---------------------------------------------------------------------------------


def test_the_cache_honours_ttl_and_drops_on_list_changed(transport):
    lists = []

    def tools(params, message):
        lists.append(message)
        return {"resultType": "complete", "tools": [{"name": f"t{len(lists)}", "inputSchema": {}}],
                "ttlMs": 60_000, "cacheScope": "public"}

    server = modern_server(transport, {"tools/list": tools,
                                       "subscriptions/listen": lambda p, m: (_ for _ in ()).throw(Reply())})
    with Client(transport, timeout=5, plugins=Plugins(cache=True)) as client:
        assert client.list_tools()[0].name == "t1"
        assert client.list_tools()[0].name == "t1"
        assert len(lists) == 1
        transport.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
        assert wait_for(lambda: client.list_tools()[0].name == "t2")
    server.stop()


def test_cached_resources_and_resource_templates_are_kept_apart(transport):
    public = {"resultType": "complete", "ttlMs": 60_000, "cacheScope": "public"}
    server = modern_server(transport, {
        "resources/list": lambda p, m: {**public, "resources": [{"uri": "a://x", "name": "x"}]},
        "resources/templates/list": lambda p, m: {
            **public, "resourceTemplates": [{"uriTemplate": "a://{id}", "name": "t"}]},
        "subscriptions/listen": lambda p, m: (_ for _ in ()).throw(Reply()),
    })
    with Client(transport, timeout=5, plugins=Plugins(cache=True)) as client:
        assert [r.uri for r in client.list_resources()] == ["a://x"]
        assert [t.uri_template for t in client.list_resource_templates()] == ["a://{id}"]
        assert [r.uri for r in client.list_resources()] == ["a://x"]
    assert methods(server).count("resources/list") == 1
    server.stop()


def test_private_results_are_not_cached_without_a_credential_identity(transport):
    count = []

    def read(params, message):
        count.append(1)
        return {"resultType": "complete", "contents": [{"uri": "a://x", "text": "secret"}],
                "ttlMs": 60_000, "cacheScope": "private"}

    server = modern_server(transport, {"resources/read": read,
                                       "subscriptions/listen": lambda p, m: (_ for _ in ()).throw(Reply())})
    with Client(transport, timeout=5, plugins=Plugins(cache=True)) as client:
        client.read_resource("a://x")
        client.read_resource("a://x")
    assert len(count) == 2
    server.stop()


@pytest.mark.parametrize("hint", [{}, {"cacheScope": "public"}, {"ttlMs": -5, "cacheScope": "public"}],
                         ids=["no-hint", "no-ttl", "negative-ttl"])
def test_a_modern_result_without_a_positive_ttl_is_never_cached_even_when_changes_are_announced(transport, hint):
    # The SDK's servers always send ttlMs (0 by default): a missing one needs a scripted server.
    lists = []

    def tools(params, message):
        lists.append(1)
        return {"resultType": "complete", "tools": [{"name": "t", "inputSchema": {}}], **hint}

    server = modern_server(transport, {"tools/list": tools,
                                       "subscriptions/listen": lambda p, m: (_ for _ in ()).throw(Reply())})
    with Client(transport, timeout=5, plugins=Plugins(cache=True)) as client:
        assert client.server_capabilities["tools"] == {"listChanged": True}
        client.list_tools()
        client.list_tools()
    assert len(lists) == 2
    server.stop()


@pytest.mark.parametrize("partition", [None, "alice"])
def test_a_modern_result_without_a_public_scope_is_kept_only_as_private(transport, partition):
    reads = []

    def read(params, message):
        reads.append(1)
        return {"resultType": "complete", "contents": [{"uri": "a://x", "text": "t"}], "ttlMs": 60_000}

    server = modern_server(transport, {"resources/read": read,
                                       "subscriptions/listen": lambda p, m: (_ for _ in ()).throw(Reply())})
    with Client(transport, timeout=5, plugins=Plugins(cache=True, cache_partition=partition)) as client:
        client.read_resource("a://x")
        client.read_resource("a://x")
    assert len(reads) == (2 if partition is None else 1)
    server.stop()


def test_input_required_results_are_never_cached(transport):
    rounds = []

    def read(params, message):
        rounds.append(1)
        if "requestState" not in params:
            return {"resultType": "input_required", "requestState": "s"}
        return {"resultType": "complete", "contents": [{"uri": "a://x", "text": "t"}], "ttlMs": 0,
                "cacheScope": "public"}

    server = modern_server(transport, {"resources/read": read,
                                       "subscriptions/listen": lambda p, m: (_ for _ in ()).throw(Reply())})
    with Client(transport, timeout=5, plugins=Plugins(cache=True)) as client:
        client.read_resource("a://x")
        client.read_resource("a://x")
    assert len(rounds) == 4
    server.stop()


def test_a_server_answering_anything_with_an_empty_result_is_legacy(transport):
    server = ScriptedServer(transport, {"server/discover": lambda p, m: {}})
    with Client(transport, timeout=5) as client:
        assert client.protocol_version == "2025-11-25"
    server.stop()
