"""The JSON-RPC engine: pending slots, timeouts, the reader thread and the dispatch pool."""

from __future__ import annotations

import logging
import os
import threading
import time

import pytest

from mcpclient import (
    Client,
    ClientClosedError,
    ConnectionClosed,
    ProtocolError,
    RequestTimeout,
    TransportError,
)
from tests.doubles import Reply, ScriptedServer
from tests.helpers import RELEASED_WITHIN, wait_for


def silent(params, message):
    raise Reply()  # never answers


@pytest.fixture
def client_and_server(transport):
    server = ScriptedServer(transport, {"tools/call": silent})
    client = Client(transport, timeout=60)  # what a call that ignored its own bounds would wait
    client.initialize()
    yield client, server
    client.close()
    server.stop()


def test_a_timeout_raises_and_tells_the_server_to_cancel(client_and_server):
    client, server = client_and_server
    t0 = time.monotonic()
    with pytest.raises(RequestTimeout) as info:
        client.call_tool("slow", timeout=0.2)
    assert 0.15 < time.monotonic() - t0 < 0.2 + RELEASED_WITHIN
    assert isinstance(info.value, TimeoutError)
    call = next(m for m in server.received if m.get("method") == "tools/call")
    assert wait_for(lambda: server.notifications("notifications/cancelled"))
    cancel = server.notifications("notifications/cancelled")[0]
    assert cancel["params"]["requestId"] == call["id"]


def test_a_late_reply_is_dropped_and_the_client_stays_usable(client_and_server, caplog):
    client, server = client_and_server
    with pytest.raises(RequestTimeout):
        client.call_tool("slow", timeout=0.1)
    call = next(m for m in server.received if m.get("method") == "tools/call")
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):
        client.transport.push({"jsonrpc": "2.0", "id": call["id"], "result": {"content": []}})
        client.ping()
    assert any("unknown or abandoned" in r.getMessage() for r in caplog.records)


def test_initialize_is_never_cancelled_on_timeout(transport):
    server = ScriptedServer(transport, {"initialize": silent})
    client = Client(transport, timeout=5)
    with pytest.raises(RequestTimeout):
        client.initialize(timeout=0.1)
    time.sleep(0.1)
    assert not server.notifications("notifications/cancelled")
    client.close()
    server.stop()


def test_a_dead_connection_fails_every_pending_call_at_once(client_and_server):
    client, server = client_and_server
    errors = []

    def call():
        try:
            client.call_tool("slow", timeout=30)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(20)]
    for thread in threads:
        thread.start()
    assert wait_for(lambda: sum(1 for m in server.received if m.get("method") == "tools/call") == 20)
    t0 = time.monotonic()
    client.transport.hang_up()
    for thread in threads:  # a call the hang-up did not end would end by its 30 s timeout
        thread.join(max(0.0, t0 + RELEASED_WITHIN - time.monotonic()))
    assert time.monotonic() - t0 < RELEASED_WITHIN
    assert len(errors) == 20
    assert all(isinstance(e, ConnectionClosed) and "hung up" in str(e) for e in errors)
    t1 = time.monotonic()
    with pytest.raises(ConnectionClosed):
        client.ping()
    assert time.monotonic() - t1 < RELEASED_WITHIN  # not the client's 60 s timeout


def test_close_fails_pending_calls_with_client_closed(client_and_server):
    client, server = client_and_server
    errors = []
    thread = threading.Thread(target=lambda: errors.append(pytest.raises(ClientClosedError, client.call_tool, "x")))
    thread.start()
    assert wait_for(lambda: any(m.get("method") == "tools/call" for m in server.received))
    client.close()
    thread.join(5)
    assert errors and errors[0].type is ClientClosedError


@pytest.mark.parametrize(
    ("garbage", "logged"),
    [
        (["not", "an", "object"], "not a JSON object"),
        ({"jsonrpc": "2.0"}, "neither request, reply nor notification"),
        ({"jsonrpc": "2.0", "method": 42}, "method is not a string"),
        ({"jsonrpc": "2.0", "id": 999999, "result": {}}, "unknown or abandoned request id '999999'"),
        ({"jsonrpc": "2.0", "id": {"weird": 1}, "result": {}}, "unknown or abandoned request id"),
        ("a bare string", "not a JSON object: \"'a bare string'\""),
        (ProtocolError("the server sent invalid JSON"), "malformed message from the server: the server sent invalid JSON"),
    ],
)
def test_bad_messages_are_logged_and_skipped(client_and_server, garbage, logged, caplog):
    client, _ = client_and_server
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):
        client.transport.push(garbage)
        client.ping()  # the reader survived and still pairs replies
    assert [r for r in caplog.records if logged in r.getMessage()], f"nothing logged about {garbage!r}"


def test_a_reply_with_both_result_and_error_fails_only_that_call(transport):
    def both(params, message):
        raise Reply({"jsonrpc": "2.0", "id": message["id"], "result": {}, "error": {"code": 1, "message": "x"}})

    server = ScriptedServer(transport, {"tools/call": both})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="malformed"):
            client.call_tool("x")
        client.ping()
    server.stop()


def test_a_non_object_result_is_a_protocol_error(transport):
    server = ScriptedServer(transport, {"tools/call": lambda p, m: [1, 2]})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="not an object"):
            client.call_tool("x")
    server.stop()


def test_a_batch_of_messages_is_routed(client_and_server):
    client, _ = client_and_server
    got = []
    client.set_notification_handler(lambda method, params: got.append(method))
    client.transport.push([
        {"jsonrpc": "2.0", "method": "notifications/a"},
        {"jsonrpc": "2.0", "method": "notifications/b"},
    ])
    assert wait_for(lambda: len(got) == 2)
    assert sorted(got) == ["notifications/a", "notifications/b"]


def test_string_ids_that_echo_ours_are_paired(transport):
    def stringify(params, message):
        raise Reply({"jsonrpc": "2.0", "id": str(message["id"]), "result": {}})

    server = ScriptedServer(transport, {"ping": stringify})
    with Client(transport, timeout=5) as client:
        client.ping()  # a reply left unpaired would end this call by its timeout instead
        assert client._engine._pending == {}
    server.stop()


def test_a_full_pool_drops_notifications_and_replies_still_flow(transport, caplog):
    server = ScriptedServer(transport)
    client = Client(transport, timeout=5, max_dispatch=2)
    client._engine._dispatch._capacity = threading.BoundedSemaphore(2)  # no queue: saturate quickly
    release = threading.Event()
    seen = []

    def blocking(method, params):
        seen.append(method)
        release.wait(60)

    client.set_notification_handler(blocking)
    client.initialize()
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        for i in range(50):
            transport.push({"jsonrpc": "2.0", "method": f"notifications/n{i}"})
        t0 = time.monotonic()
        client.ping()  # the reader thread is not blocked by the handler stuck for 60 s
        assert time.monotonic() - t0 < RELEASED_WITHIN
    assert wait_for(lambda: len(seen) == 1)  # notifications run one at a time, in order
    assert any("dropped" in r.getMessage() for r in caplog.records)
    release.set()
    assert wait_for(lambda: len(seen) == 2)  # the one that found room in the queue
    client.close()
    server.stop()
    assert seen == ["notifications/n0", "notifications/n1"]


def test_a_full_pool_refuses_server_requests_with_an_error(transport):
    server = ScriptedServer(transport)
    client = Client(transport, timeout=5, max_dispatch=1)
    client._engine._dispatch._capacity = threading.BoundedSemaphore(1)
    release = threading.Event()
    holding = threading.Event()
    client.set_notification_handler(lambda method, params: (holding.set(), release.wait(60)))
    client.initialize()
    transport.push({"jsonrpc": "2.0", "method": "notifications/stuck"})
    assert holding.wait(RELEASED_WITHIN)  # the handler holds the only slot
    transport.push({"jsonrpc": "2.0", "id": "r1", "method": "ping"})
    assert wait_for(lambda: any(m.get("id") == "r1" for m in transport.sent))
    reply = next(m for m in transport.sent if m.get("id") == "r1")
    assert reply["error"]["code"] == -32603
    release.set()
    client.close()
    server.stop()


def test_notifications_reach_the_handler_in_the_order_sent(client_and_server):
    client, _ = client_and_server
    got = []

    def slow_first(method, params):
        if params["n"] == 0:
            time.sleep(0.2)  # a slow handler must not let later notifications overtake it
        got.append(params["n"])

    client.set_notification_handler(slow_first)
    for n in range(20):
        client.transport.push({"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n}})
    assert wait_for(lambda: len(got) == 20)
    assert got == list(range(20))


def test_max_dispatch_must_be_positive(transport):
    with pytest.raises(ValueError):
        Client(transport, max_dispatch=0)


def test_a_forked_child_gets_a_clear_error_not_a_hang(client_and_server):
    client, _ = client_and_server
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        try:
            client.ping(timeout=2)
            outcome = b"no error"
        except TransportError as exc:
            outcome = b"ok" if b"fork" in str(exc).encode() else str(exc).encode()
        except BaseException as exc:  # noqa: BLE001 - report anything else
            outcome = repr(exc).encode()
        os.write(write, outcome)
        os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    outcome = os.read(read, 1000)
    os.close(read)
    assert outcome == b"ok"
    client.ping()  # the parent is unaffected


@pytest.mark.parametrize("threshold, warned", [(0.0, True), (60.0, False)])
def test_a_blocked_notification_lane_is_warned_about(transport, caplog, monkeypatch, threshold, warned):
    from mcpclient._rpc import dispatch

    monkeypatch.setattr(dispatch, "LANE_BLOCKED_WARNING", threshold)
    server = ScriptedServer(transport)
    client = Client(transport, timeout=5)
    started, release = threading.Event(), threading.Event()
    seen = []

    def blocking(method, params):
        seen.append(method)
        started.set()
        release.wait(10)

    client.set_notification_handler(blocking)
    client.initialize()
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        transport.push({"jsonrpc": "2.0", "method": "notifications/first"})
        assert started.wait(5)
        transport.push({"jsonrpc": "2.0", "method": "notifications/second"})
        client.ping()  # the reader has routed the second notification by now
    assert any("wait behind it" in r.getMessage() for r in caplog.records) is warned
    assert seen == ["notifications/first"]  # the second waits its turn
    release.set()
    assert wait_for(lambda: len(seen) == 2)
    client.close()
    server.stop()


def test_notifications_waiting_for_a_worker_are_not_taken_for_a_blocked_lane(transport, caplog):
    # The lane's job waits for a worker held by a server request's handler: no lane item has
    # started, so none has been running "for 3000 s" (the time since the clock's start).
    server = ScriptedServer(transport)
    client = Client(transport, timeout=5, max_dispatch=1)
    client.set_notification_handler(lambda method, params: None)
    started, release = threading.Event(), threading.Event()

    def elicit(request):
        started.set()
        release.wait(10)
        return {"action": "decline"}

    client.set_elicitation_handler(elicit)
    client.initialize()
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        transport.push({"jsonrpc": "2.0", "id": "r1", "method": "elicitation/create", "params": {
            "message": "hold the only worker", "requestedSchema": {"type": "object", "properties": {}}}})
        assert started.wait(5)
        transport.push({"jsonrpc": "2.0", "method": "notifications/first"})
        transport.push({"jsonrpc": "2.0", "method": "notifications/second"})
        try:
            client.ping()  # the reader has routed both by now
        finally:
            release.set()
    assert not any("wait behind it" in r.getMessage() for r in caplog.records)
    client.close()
    server.stop()


def test_a_thread_reuses_its_event_and_a_late_set_on_it_only_wakes_the_next_call_early(transport):
    # A thread's calls wait on one threading.Event, handed from each call to the next; a
    # set() arriving after its call ended (a reply routed just as the call timed out, a
    # cancel callback already running) must not end the next call without its reply.
    from mcpclient._rpc import engine as engine_module

    received, answer = threading.Event(), threading.Event()

    def tool(params, message):
        if params["name"] == "slow":
            received.set()
            assert answer.wait(10)
        return {"content": [{"type": "text", "text": params["name"]}]}

    server = ScriptedServer(transport, {"tools/call": tool})
    client = Client(transport, timeout=10)
    try:
        client.initialize()
        assert client.call_tool("fast").text == "fast"
        event = engine_module._events.free
        assert isinstance(event, threading.Event)

        def stale_then_answer():
            assert received.wait(10)
            event.set()  # the late set, while the next call waits on the same Event
            time.sleep(0.3)
            answer.set()

        helper = threading.Thread(target=stale_then_answer)
        helper.start()
        start = time.monotonic()
        assert client.call_tool("slow").text == "slow"
        took = time.monotonic() - start
        helper.join(5)
        assert took >= 0.25, took  # it went on waiting for its own reply
        assert engine_module._events.free is event  # the same Event, handed on again
        assert client.call_tool("fast").text == "fast"
    finally:
        client.close()
        server.stop()


def test_each_thread_waits_on_its_own_event(transport):
    from mcpclient._rpc import engine as engine_module

    server = ScriptedServer(transport, {"tools/call": lambda params, msg: {"content": []}})
    client = Client(transport, timeout=10)
    seen: dict[str, threading.Event | None] = {}
    try:
        client.initialize()

        def caller(name: str) -> None:
            for _ in range(20):
                client.call_tool("x")
            seen[name] = engine_module._events.free

        workers = [threading.Thread(target=caller, args=(f"t{n}",)) for n in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(10)
        events = list(seen.values())
        assert len(events) == 4 and all(isinstance(e, threading.Event) for e in events)
        assert len({id(e) for e in events}) == 4
    finally:
        client.close()
        server.stop()
