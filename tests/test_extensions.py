"""The open seam (issue #29): middleware, extensions, custom methods, ``meta=``, one page.

Against real servers: the official SDK's low-level server with vendor methods
(tests/servers/sdk_vendor_server.py) over stdio in both eras, and the SDK test server for the
input-required rounds of the 2026 era.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import pytest

from mcpclient import Client, MCPError, Plugins, RPCError, StdioTransport
from mcpclient.extensions import Call, Extension, Message, Options, Session

from tests.conftest import SDK_SERVER, SERVERS
from tests.helpers import require_mcp_sdk, wait_for

require_mcp_sdk()

VENDOR = [sys.executable, str(SERVERS / "sdk_vendor_server.py")]
#: protocol= for each era: the vendor server speaks both over stdio (the first request decides).
ERAS = {"legacy": "legacy", "modern": "2026-07-28"}


class Refused(MCPError):
    pass


def vendor_client(era: str, **kwargs: Any) -> Client:
    return Client(StdioTransport(VENDOR), protocol=ERAS[era], timeout=15, **kwargs)


def seen_meta(client: Client, **kwargs: Any) -> dict[str, Any]:
    return json.loads(client.call_tool("meta", **kwargs).text)


@pytest.fixture(params=sorted(ERAS))
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- middleware ------------------------------------------------------------------------------


def test_a_middleware_adds_meta_that_the_server_sees(era):
    def trace(message: Message, next_: Any) -> Any:
        return next_(message.with_meta(**{"com.example/trace": "t-42"}))

    with vendor_client(era, middleware=[trace]) as client:
        assert seen_meta(client)["com.example/trace"] == "t-42"
        assert client.request("acme/echo")["meta"]["com.example/trace"] == "t-42"


def test_middleware_runs_in_order_the_first_outermost_on_the_callers_thread(era):
    events: list[tuple[str, str, str]] = []

    def named(name: str) -> Any:
        def mw(message: Message, next_: Any) -> Any:
            if message.direction == "send" and message.method == "acme/echo":
                events.append((name, "in", threading.current_thread().name))
                result = next_(message)
                events.append((name, "out", threading.current_thread().name))
                return result
            return next_(message)

        return mw

    with vendor_client(era, middleware=[named("a"), named("b")]) as client:
        client.request("acme/echo")
    me = threading.current_thread().name
    assert events == [("a", "in", me), ("b", "in", me), ("b", "out", me), ("a", "out", me)]


def test_a_middleware_sees_the_opening_and_every_call(era):
    methods: list[str] = []

    def record(message: Message, next_: Any) -> Any:
        if message.direction == "send":
            methods.append(message.method)
        return next_(message)

    with vendor_client(era, middleware=[record]) as client:
        client.list_tools()
        client.call_tool("meta")
    opening = ["initialize", "notifications/initialized"] if era == "legacy" else ["server/discover"]
    assert methods == [*opening, "tools/list", "tools/call"]


def test_a_middleware_that_raises_refuses_the_message_before_it_is_sent(era):
    def refuse_hello(message: Message, next_: Any) -> Any:
        if message.method == "notifications/acme/hello" and message.params == {"who": "mallory"}:
            raise Refused("not that one")
        return next_(message)

    with vendor_client(era, middleware=[refuse_hello]) as client:
        with pytest.raises(Refused):
            client.notify("notifications/acme/hello", {"who": "mallory"})
        client.notify("notifications/acme/hello", {"who": "ann"})
        assert client.request("acme/hellos")["hellos"] == [{"who": "ann"}]


def test_a_middleware_may_change_the_result(era):
    def stamp(message: Message, next_: Any) -> Any:
        result = next_(message)
        if message.method == "acme/echo":
            result = {**result, "stamped": True}
        return result

    with vendor_client(era, middleware=[stamp]) as client:
        assert client.request("acme/echo")["stamped"] is True


def test_receive_middleware_sees_server_notifications_on_a_dispatch_thread(era):
    received: list[tuple[str, str]] = []

    def watch(message: Message, next_: Any) -> Any:
        if message.direction == "receive":
            received.append((message.method, threading.current_thread().name))
        return next_(message)

    ticks: list[dict[str, Any]] = []
    with vendor_client(era, middleware=[watch]) as client:
        client.on_notification("notifications/acme/tick", ticks.append)
        assert client.call_tool("tick", {"n": 2}).text == "ticked"
        wait_for(lambda: len(ticks) == 2)
    assert ticks == [{"i": 1}, {"i": 2}]
    ticked = [thread for method, thread in received if method == "notifications/acme/tick"]
    assert len(ticked) == 2
    assert all(thread.startswith("mcpclient-dispatch") for thread in ticked), ticked


def test_a_receive_middleware_refusing_a_server_request_makes_the_error_reply():
    asked: list[Any] = []

    def refuse(message: Message, next_: Any) -> Any:
        if message.direction == "receive" and message.kind == "request":
            raise RPCError(RPCError.INVALID_REQUEST, "refused by policy")
        return next_(message)

    with vendor_client("legacy", middleware=[refuse]) as client:
        client.on_request("acme/confirm", lambda params, token: asked.append(params) or {"ok": True})
        # The SDK's tool passes the client's error reply on as the error of the tools/call.
        with pytest.raises(RPCError, match="refused by policy"):
            client.call_tool("confirm", {"question": "sure?"})
    assert asked == []


def test_each_input_round_is_a_message_of_its_own():
    """The 2026 era's sampling is an input-required round: a tools/call sent twice."""
    calls: list[Any] = []

    def record(message: Message, next_: Any) -> Any:
        if message.method == "tools/call":
            calls.append(message.params)
        return next_(message)

    client = Client(StdioTransport(SDK_SERVER), protocol="2026-07-28", timeout=15, middleware=[record])
    client.set_sampling_handler(lambda request: {"role": "assistant", "content": {"type": "text", "text": "hi"},
                                                 "model": "m"})
    with client:
        assert "hi" in client.call_tool("sample", {"prompt": "x"}).text
    assert len(calls) == 2
    assert "inputResponses" not in calls[0] and "inputResponses" in calls[1]


class WholeCalls(Extension):
    """Records what its call middleware and its middleware see, in order."""

    def __init__(self, events: list[tuple[str, str, str]]) -> None:
        self.events = events

    def call_middleware(self) -> Any:
        def around(message: Message, next_: Any) -> Any:
            self.events.append(("call", message.direction, message.method))
            return next_(message)

        return (around,)


def test_call_middleware_sees_a_whole_call_once_outside_every_middleware():
    """A 2026 tools/call with an input round: two messages for middleware, one call; the
    round's sampling request is one received call too."""
    events: list[tuple[str, str, str]] = []

    def record(message: Message, next_: Any) -> Any:
        events.append(("message", message.direction, message.method))
        return next_(message)

    client = Client(StdioTransport(SDK_SERVER), protocol="2026-07-28", timeout=15, middleware=[record],
                    extensions=[WholeCalls(events)])
    client.set_sampling_handler(lambda request: {"role": "assistant", "content": {"type": "text", "text": "hi"},
                                                 "model": "m"})
    with client:
        del events[:]
        assert "hi" in client.call_tool("sample", {"prompt": "x"}).text
    assert events == [
        ("call", "send", "tools/call"), ("message", "send", "tools/call"),
        ("call", "receive", "sampling/createMessage"), ("message", "receive", "sampling/createMessage"),
        ("message", "send", "tools/call"),
    ]


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_receive_middleware_sees_a_server_request_in_either_era(protocol):
    """Legacy: a sampling request on the wire; 2026: one inside an input-required round. A
    refusal must hold in both, or a policy written for one era is bypassed in the other."""
    received: list[str] = []

    def refuse_sampling(message: Message, next_: Any) -> Any:
        if message.direction == "receive" and message.method == "sampling/createMessage":
            received.append(message.method)
            raise RPCError(RPCError.INVALID_REQUEST, "sampling refused by policy")
        return next_(message)

    sampled: list[Any] = []
    client = Client(StdioTransport(SDK_SERVER), protocol=protocol, timeout=15, middleware=[refuse_sampling])
    client.set_sampling_handler(lambda request: sampled.append(request) or {
        "role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"})
    with client:
        with pytest.raises(MCPError, match="sampling refused by policy"):
            result = client.call_tool("sample", {"prompt": "x"})
            result.raise_for_error()
    assert received == ["sampling/createMessage"]
    assert sampled == []


# -- meta= -------------------------------------------------------------------------------------


def test_meta_reaches_the_server_and_cannot_override_the_eras_keys():
    with vendor_client("modern") as client:
        meta = seen_meta(client, meta={"com.example/k": "v", "io.modelcontextprotocol/protocolVersion": "1999-01-01"})
    assert meta["com.example/k"] == "v"
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_the_progress_token_is_the_clients_when_on_progress_is_given(era):
    with vendor_client(era) as client:
        meta = client.request("acme/echo", meta={"progressToken": "mine"}, on_progress=lambda *a: None)["meta"]
    assert isinstance(meta["progressToken"], int)


def test_meta_goes_with_every_method_that_takes_it(era):
    with vendor_client(era) as client:
        echoed = client.request("acme/echo", {"x": 1}, meta={"com.example/k": "v"})
        assert echoed["params"] == {"x": 1}
        assert echoed["meta"]["com.example/k"] == "v"
        assert [r.uri for r in client.list_resources(meta={"com.example/k": "v"})][:1] == ["acme://r/0"]


# -- custom methods ------------------------------------------------------------------------------


def test_request_and_notify_reach_a_vendor_method(era):
    with vendor_client(era) as client:
        client.notify("notifications/acme/hello", {"who": "ann"})
        assert client.request("acme/hellos")["hellos"] == [{"who": "ann"}]


def test_a_vendor_server_request_is_answered_by_its_handler():
    with vendor_client("legacy") as client:
        client.on_request("acme/confirm", lambda params, token: {"ok": True, "q": params["question"]})
        assert json.loads(client.call_tool("confirm", {"question": "sure?"}).text) == {"ok": True, "q": "sure?"}


def test_an_unknown_method_is_the_servers_method_not_found(era):
    with vendor_client(era) as client:
        with pytest.raises(RPCError) as caught:
            client.request("acme/nothing")
    assert caught.value.code == RPCError.METHOD_NOT_FOUND


@pytest.mark.parametrize("method", ["initialize", "server/discover", "notifications/initialized",
                                    "notifications/cancelled"])
def test_request_and_notify_refuse_the_clients_own_methods(method):
    with vendor_client("legacy") as client:
        with pytest.raises(ValueError):
            client.request(method)
        with pytest.raises(ValueError):
            client.notify(method)


def test_a_method_is_claimed_once_and_built_in_ones_never(transport):
    client = Client(transport)
    try:
        client.on_request("acme/confirm", lambda params, token: {})
        with pytest.raises(ValueError):
            client.on_request("acme/confirm", lambda params, token: {})
        client.on_notification("notifications/acme/tick", lambda params: None)
        with pytest.raises(ValueError):
            client.on_notification("notifications/acme/tick", lambda params: None)
        for method in ("sampling/createMessage", "elicitation/create", "roots/list", "ping"):
            with pytest.raises(ValueError):
                client.on_request(method, lambda params, token: {})
        for method in ("notifications/message", "notifications/progress", "notifications/tools/list_changed",
                       "notifications/subscriptions/acknowledged", "notifications/tasks/status"):
            with pytest.raises(ValueError):
                client.on_notification(method, lambda params: None)
    finally:
        client.close()


# -- extensions --------------------------------------------------------------------------------------


class Acme(Extension):
    """A vendor extension: advertises itself, takes the tick notices, answers acme/confirm."""

    identifier = "com.example/acme"

    def __init__(self) -> None:
        self.events: list[str] = []
        self.ticks: list[dict[str, Any]] = []
        self.session: Session | None = None
        self.echo: dict[str, Any] | None = None

    def settings(self) -> dict[str, Any]:
        return {"level": 2}

    def capabilities(self) -> dict[str, Any]:
        return {"experimental": {"acme": {}}}

    def middleware(self) -> list[Any]:
        def tag(message: Message, next_: Any) -> Any:
            return next_(message.with_meta(**{"com.example/acme": "on"}))

        return [tag]

    def notification_handlers(self) -> dict[str, Any]:
        return {"notifications/acme/tick": self.ticks.append}

    def request_handlers(self) -> dict[str, Any]:
        return {"acme/confirm": lambda params, token: {"by": "extension"}}

    def bind(self, session: Session) -> None:
        self.events.append(f"bind open={session.is_open}")
        self.session = session

    def opened(self, session: Session) -> None:
        self.events.append(f"opened era={session.era}")
        self.echo = session.request("acme/echo", {"from": "opened"}, options=Options(timeout=10))

    def result(self, call: Call, value: Any) -> Any:
        if call.method == "tools/call":
            self.events.append(f"result {call.name}")
        return value

    def close(self) -> None:
        self.events.append("close")


def test_an_extension_is_advertised_in_both_eras(era):
    with vendor_client(era, extensions=[Acme()]) as client:
        caps = json.loads(client.call_tool("client_caps").text)
    assert caps["extensions"]["com.example/acme"] == {"level": 2}
    assert caps["experimental"] == {"acme": {}}


def test_an_extension_cannot_change_what_a_built_in_handler_declares():
    class Claims(Extension):
        def capabilities(self) -> dict[str, Any]:
            return {"roots": {"listChanged": False}, "experimental": {"x": {}}}

    client = vendor_client("legacy", extensions=[Claims()])
    client.set_roots(["file:///tmp"])
    with client:
        caps = json.loads(client.call_tool("client_caps").text)
    assert caps["roots"] == {"listChanged": True} and caps["experimental"] == {"x": {}}


def test_an_extensions_hooks_run_in_the_connections_life(era):
    acme = Acme()
    client = vendor_client(era, extensions=[acme])
    with client:
        client.call_tool("tick", {"n": 1})
        wait_for(lambda: acme.ticks == [{"i": 1}])
        assert acme.session is not None and acme.session.is_open
    client.close()  # a second close runs no hook again
    assert acme.events == ["bind open=False", f"opened era={era}", "result tick", "close"]
    assert acme.echo is not None and acme.echo["params"] == {"from": "opened"}
    assert acme.echo["meta"]["com.example/acme"] == "on"  # its requests go through the middleware


def test_an_extensions_request_handler_answers_the_server():
    with vendor_client("legacy", extensions=[Acme()]) as client:
        assert json.loads(client.call_tool("confirm", {"question": "?"}).text) == {"by": "extension"}


def test_a_method_an_extension_claims_cannot_be_claimed_again(transport):
    client = Client(transport, extensions=[Acme()])
    try:
        with pytest.raises(ValueError):
            client.on_request("acme/confirm", lambda params, token: {})
    finally:
        client.close()
    with pytest.raises(ValueError):
        Client(transport, extensions=[Acme(), Acme()])


def test_an_extensions_result_hook_may_replace_the_result():
    class Upper(Extension):
        def result(self, call: Call, value: Any) -> Any:
            if call.method == "tools/call" and call.name == "tick":
                return "replaced"
            return value

    with vendor_client("legacy", extensions=[Upper()]) as client:
        assert client.call_tool("tick", {"n": 0}) == "replaced"


def test_result_methods_name_the_results_an_extension_is_given():
    class Seen(Extension):
        def __init__(self) -> None:
            self.methods: list[str] = []

        def result(self, call: Call, value: Any) -> Any:
            self.methods.append(call.method)
            return value

    class ListsOnly(Seen):
        result_methods = frozenset({"tools/list"})

    every, lists = Seen(), ListsOnly()
    with vendor_client("legacy", extensions=[every, lists]) as client:
        client.list_tools()
        assert client.call_tool("tick", {"n": 0}).is_error is False
        assert client.request("acme/echo", {"x": 1})["params"] == {"x": 1}
    assert every.methods == ["tools/list", "tools/call", "acme/echo"]
    assert lists.methods == ["tools/list"]


def test_session_run_and_on_close():
    done = threading.Event()
    threads: list[str] = []
    closed: list[bool] = []

    class Worker(Extension):
        def opened(self, session: Session) -> None:
            session.run(lambda: (threads.append(threading.current_thread().name), done.set()))
            session.on_close(lambda: closed.append(session.is_open))

    with vendor_client("legacy", extensions=[Worker()]):
        assert done.wait(5)
    assert threads and threads[0] != threading.current_thread().name
    assert closed == [False]


def test_extensions_and_middleware_are_checked_when_the_client_is_made(transport):
    with pytest.raises(TypeError):
        Client(transport, extensions=[object()])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        Client(transport, middleware=["not callable"])  # type: ignore[list-item]


# -- one page --------------------------------------------------------------------------------------


def test_a_cursor_asks_for_one_page_and_no_cursor_for_all(era):
    with vendor_client(era) as client:
        uris: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = client.list_resources(cursor=cursor)
            uris += [r.uri for r in page.items]
            pages += 1
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert pages == 3
        assert uris == [r.uri for r in client.list_resources()] == [f"acme://r/{i}" for i in range(5)]
        assert client.list_tools(cursor=None).next_cursor is None
        assert client.list_prompts(cursor=None).items == []


# -- SharedClient and connect() ----------------------------------------------------------------------


def test_a_shared_client_passes_meta_middleware_and_custom_methods_on():
    from mcpclient import SharedClient

    sent: list[str] = []

    def record(message: Message, next_: Any) -> Any:
        sent.append(message.method)
        return next_(message)

    ticks: list[dict[str, Any]] = []
    shared = SharedClient(VENDOR, protocol="legacy", timeout=15, middleware=[record])
    try:
        shared.on_notification("notifications/acme/tick", ticks.append)
        with pytest.raises(ValueError):
            shared.on_notification("notifications/acme/tick", ticks.append)
        with pytest.raises(ValueError):
            shared.on_request("sampling/createMessage", lambda params, token: {})
        assert json.loads(shared.call_tool("meta", meta={"com.example/k": "v"}).text)["com.example/k"] == "v"
        assert shared.request("acme/echo", {"x": 1})["params"] == {"x": 1}
        shared.call_tool("tick", {"n": 1})
        wait_for(lambda: ticks == [{"i": 1}])
    finally:
        shared.close()
    assert "acme/echo" in sent


def test_meta_goes_with_ping_and_the_log_level():
    """The requests an era sends for the client (a double: no real server shows their _meta)."""
    from mcpclient.testing import FakeServer

    class Recording(FakeServer):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[tuple[str, Any]] = []

        def record(self, method: str, params: dict[str, Any]) -> None:
            self.seen.append((method, (params or {}).get("_meta")))

    server = Recording()
    with Client(server) as client:
        client.ping(meta={"com.example/k": "ping"})
        client.set_log_level("info", meta={"com.example/k": "level"})
    assert ("ping", {"com.example/k": "ping"}) in server.seen
    assert ("logging/setLevel", {"com.example/k": "level"}) in server.seen


class Sometimes(Extension):
    """Middleware that says, through ``idle``, when it has nothing to do."""

    def __init__(self) -> None:
        self.resting = True
        self.seen: list[str] = []

    def idle(self) -> bool:
        return self.resting

    def middleware(self) -> Any:
        def note(message: Message, next_: Any) -> Any:
            self.seen.append(message.method)
            return next_(message)

        return (note,)


def test_a_call_skips_the_middleware_of_idle_extensions_and_no_one_elses():
    ext = Sometimes()
    with vendor_client("legacy", extensions=[ext], plugins=Plugins(telemetry=False)) as client:
        ext.seen.clear()
        client.call_tool("meta")
        assert ext.seen == []  # idle: the call took the path with no chain
        ext.resting = False
        client.call_tool("meta")
        assert ext.seen == ["tools/call"]
    ext = Sometimes()
    with vendor_client("legacy", extensions=[ext], middleware=[lambda m, n: n(m)],
                       plugins=Plugins(telemetry=False)) as client:
        ext.seen.clear()
        client.call_tool("meta")
        assert ext.seen == ["tools/call"]  # the user's middleware runs: so does everyone's
