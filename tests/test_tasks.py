"""Tasks in both eras (2025-11-25 experimental tasks, the 2026 tasks extension), on scripted servers."""

from __future__ import annotations

import threading
import time

import pytest

from mcpclient import (
    CancelToken,
    CapabilityError,
    Client,
    ElicitationResult,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    RPCError,
    Task,
)
from tests.doubles import LEGACY_INIT_RESULT, Reply, ScriptedServer, error
from tests.helpers import RELEASED_WITHIN

V = "2026-07-28"
EXT = "io.modelcontextprotocol/tasks"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
TASK_CAPS = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


def task_state(status="working", task_id="t-1", **extra):
    return {"taskId": task_id, "status": status, "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:30:00Z", **extra}


def legacy_server(transport, handlers, tasks_caps=TASK_CAPS):
    init = {**LEGACY_INIT_RESULT, "capabilities": {**LEGACY_INIT_RESULT["capabilities"], "tasks": tasks_caps}}
    return ScriptedServer(transport, handlers, init_result=init)


def modern_server(transport, handlers, extensions=None):
    caps = {"tools": {}, "extensions": {EXT: {}} if extensions is None else extensions}
    table = {"server/discover": lambda p, m: {"resultType": "complete", "supportedVersions": [V], "capabilities": caps}}
    table.update(handlers)
    return ScriptedServer(transport, table)


def sent(server, method):
    return [m for m in server.received if m.get("method") == method]


# -- 2025-11-25: experimental tasks ----------------------------------------------------------


def test_legacy_task_is_created_with_ttl_polled_at_the_interval_and_its_result_fetched(transport):
    polls = []

    def get(params, message):
        polls.append(time.monotonic())
        return task_state("completed" if len(polls) == 3 else "working", pollInterval=150)

    server = legacy_server(transport, {
        "tools/call": lambda p, m: {"task": task_state(ttl=60000, pollInterval=150)},
        "tasks/get": get,
        "tasks/result": lambda p, m: {"content": [{"type": "text", "text": "done"}],
                                      "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}}},
    })
    with Client(transport, timeout=5) as client:
        started = time.monotonic()
        task = client.call_tool_as_task("slow", {"x": 1}, ttl=60)
        assert isinstance(task, Task) and task.task_id == "t-1" and task.status == "working"
        assert task.ttl == 60.0 and task.poll_interval == 0.15
        assert task.result(timeout=5).text == "done"
        assert task.status == "completed" and task.done
    call = sent(server, "tools/call")[0]["params"]
    assert call["task"] == {"ttl": 60000} and call["arguments"] == {"x": 1}
    assert len(polls) == 3
    gaps = [b - a for a, b in zip([started] + polls, polls)]
    assert all(gap >= 0.14 for gap in gaps), f"polled faster than the server's pollInterval: {gaps}"
    assert sent(server, "tasks/result")[0]["params"] == {"taskId": "t-1"}
    server.stop()


def test_legacy_task_needs_the_servers_tools_call_task_capability(transport):
    server = legacy_server(transport, {}, tasks_caps={"list": {}})
    with Client(transport, timeout=5) as client:
        with pytest.raises(CapabilityError, match="tasks.requests.tools.call"):
            client.call_tool_as_task("slow")
    assert not sent(server, "tools/call")
    server.stop()


def test_a_status_notification_wakes_the_waiter_without_polling(transport):
    def call(params, message):
        def announce():
            time.sleep(0.1)
            transport.push({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                            "params": task_state("completed", pollInterval=30000)})
        threading.Thread(target=announce, daemon=True).start()
        return {"task": task_state(pollInterval=30000)}

    server = legacy_server(transport, {
        "tools/call": call,
        "tasks/result": lambda p, m: {"content": [{"type": "text", "text": "ok"}]},
    })
    with Client(transport, timeout=5) as client:
        task = client.call_tool_as_task("slow")
        started = time.monotonic()
        assert task.wait(timeout=60) == "completed"
        assert time.monotonic() - started < RELEASED_WITHIN  # (not the 30 s poll interval)
        assert task.result().text == "ok"
    assert not sent(server, "tasks/get"), "a 30 s poll interval was not waited out"
    server.stop()


def test_wait_is_bounded_and_leaves_the_task_running(transport):
    server = legacy_server(transport, {
        "tools/call": lambda p, m: {"task": task_state(pollInterval=20)},
        "tasks/get": lambda p, m: task_state(pollInterval=20),
    })
    with Client(transport, timeout=60) as client:  # a wait past its own timeout: 60 s
        task = client.call_tool_as_task("forever")
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="still working"):
            task.wait(timeout=1.0)
        assert 0.95 < time.monotonic() - started < 1.0 + RELEASED_WITHIN
        assert task.status == "working"
    assert not sent(server, "tasks/cancel")
    assert 3 <= len(sent(server, "tasks/get")) <= 60  # every 20 ms for 1 s: fewer on a loaded machine
    server.stop()


def test_input_required_is_served_through_tasks_result_with_the_clients_handlers(transport):
    answers = []

    def result(params, message):
        # While tasks/result is pending the server asks the client, tagged with the task, and
        # answers tasks/result once the elicitation is answered.
        transport.push({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": {
            "message": "which?", "requestedSchema": {"type": "object", "properties": {"pick": {"type": "string"}}},
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}}}})

        def finish():
            deadline = time.monotonic() + 5
            while not answers and time.monotonic() < deadline:
                answers.extend(m for m in list(server.received) if m.get("id") == "e1" and "result" in m)
                time.sleep(0.01)
            pick = answers[0]["result"]["content"]["pick"] if answers else "nothing"
            transport.push({"jsonrpc": "2.0", "id": message["id"],
                            "result": {"content": [{"type": "text", "text": f"picked {pick}"}]}})

        threading.Thread(target=finish, daemon=True).start()
        raise Reply()

    server = legacy_server(transport, {
        "tools/call": lambda p, m: {"task": task_state(pollInterval=20)},
        "tasks/get": lambda p, m: task_state("input_required", pollInterval=20),
        "tasks/result": result,
    })
    client = Client(transport, timeout=5)
    client.set_elicitation_handler(lambda request: ElicitationResult(action="accept", content={"pick": "snake"}))
    with client:
        assert client.call_tool_as_task("research").result(timeout=5).text == "picked snake"
    server.stop()


def test_a_failed_legacy_task_raises_the_error_tasks_result_returns(transport):
    server = legacy_server(transport, {
        "tools/call": lambda p, m: {"task": task_state(pollInterval=20)},
        "tasks/get": lambda p, m: task_state("failed", statusMessage="rate limited"),
        "tasks/result": lambda p, m: (_ for _ in ()).throw(error(m, -32603, "rate limited")),
    })
    with Client(transport, timeout=5) as client:
        task = client.call_tool_as_task("x")
        with pytest.raises(RPCError) as caught:
            task.result(timeout=5)
        assert caught.value.code == -32603 and task.status == "failed"
        assert task.status_message == "rate limited"
    server.stop()


def test_cancel_sends_tasks_cancel_and_result_then_raises_cancelled(transport):
    server = legacy_server(transport, {
        "tools/call": lambda p, m: {"task": task_state(pollInterval=20)},
        "tasks/cancel": lambda p, m: task_state("cancelled", statusMessage="by request"),
    })
    with Client(transport, timeout=5) as client:
        task = client.call_tool_as_task("x")
        task.cancel()
        assert task.status == "cancelled"
        with pytest.raises(RequestCancelled, match="by request"):
            task.result(timeout=1)
    assert sent(server, "tasks/cancel")[0]["params"] == {"taskId": "t-1"}
    assert not sent(server, "tasks/result")
    server.stop()


def test_list_tasks_follows_pages_and_needs_tasks_list(transport):
    pages = {None: {"tasks": [task_state(task_id="a")], "nextCursor": "c2"},
             "c2": {"tasks": [task_state("completed", task_id="b")]}}
    server = legacy_server(transport, {"tasks/list": lambda p, m: pages[p.get("cursor")]})
    with Client(transport, timeout=5) as client:
        tasks = client.list_tasks()
        assert [(t.task_id, t.status) for t in tasks] == [("a", "working"), ("b", "completed")]
    server.stop()


def test_list_tasks_stops_a_server_that_paginates_without_end(transport, monkeypatch):
    monkeypatch.setattr("mcpclient._protocol.reads.MAX_PAGES", 5)
    endless = {"tasks/list": lambda p, m: {"tasks": [], "nextCursor": str(int(p.get("cursor") or 0) + 1)}}
    server = legacy_server(transport, endless)
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="past 5 pages"):
            client.list_tasks()
    assert len(sent(server, "tasks/list")) == 5
    server.stop()


def test_list_tasks_without_the_capability_sends_nothing(transport):
    server = legacy_server(transport, {}, tasks_caps={"requests": {"tools": {"call": {}}}})
    with Client(transport, timeout=5) as client:
        with pytest.raises(CapabilityError, match="tasks.list"):
            client.list_tasks()
    assert not sent(server, "tasks/list")
    server.stop()


def test_get_task_gives_the_live_handle_for_an_id(transport):
    server = legacy_server(transport, {
        "tools/call": lambda p, m: {"task": task_state()},
        "tasks/get": lambda p, m: task_state("working", statusMessage="halfway"),
    })
    with Client(transport, timeout=5) as client:
        task = client.call_tool_as_task("x")
        again = client.get_task("t-1")
        assert again is task and task.status_message == "halfway"
    server.stop()


def test_a_server_that_ignores_the_task_field_gives_a_finished_task(transport):
    server = legacy_server(transport, {"tools/call": lambda p, m: {"content": [{"type": "text", "text": "now"}]}})
    with Client(transport, timeout=5) as client:
        task = client.call_tool_as_task("x")
        assert task.done and task.result().text == "now"
    assert not sent(server, "tasks/get")
    server.stop()


def test_the_legacy_handshake_declares_no_tasks_extension(transport):
    server = legacy_server(transport, {})
    with Client(transport, timeout=5, protocol="legacy"):
        pass
    caps = sent(server, "initialize")[0]["params"]["capabilities"]
    assert "extensions" not in caps and "tasks" not in caps
    server.stop()


# -- 2026-07-28: the tasks extension ---------------------------------------------------------


def test_call_tool_waits_for_an_unsolicited_task_and_returns_its_result(transport):
    polls = []

    def get(params, message):
        polls.append(params)
        if len(polls) < 2:
            return {"resultType": "complete", **task_state(ttlMs=None, pollIntervalMs=20)}
        return {"resultType": "complete", **task_state("completed"),
                "result": {"content": [{"type": "text", "text": "finished"}], "isError": False}}

    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(ttlMs=60000, pollIntervalMs=20)},
        "tasks/get": get,
    })
    with Client(transport, timeout=5) as client:
        assert client.call_tool("slow").text == "finished"
    call = sent(server, "tools/call")[0]["params"]
    assert call["_meta"][CAPS_KEY]["extensions"] == {EXT: {}}
    assert "task" not in call
    assert polls[0]["taskId"] == "t-1" and len(polls) == 2
    assert not sent(server, "tasks/result")
    server.stop()


def test_input_requests_are_answered_once_with_tasks_update(transport):
    polls, updates = [], []
    wanted = {"name": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}}

    def get(params, message):
        polls.append(params)
        if len(polls) <= 2:  # the second poll still shows the request: eventual consistency
            return {"resultType": "complete", **task_state("input_required", pollIntervalMs=20), "inputRequests": wanted}
        return {"resultType": "complete", **task_state("completed"), "result": {"content": [
            {"type": "text", "text": f"Hello, {updates[0]['inputResponses']['name']['content']['name']}!"}]}}

    def update(params, message):
        updates.append(params)
        return {"resultType": "complete"}

    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=20)},
        "tasks/get": get, "tasks/update": update,
    })
    asked = []
    client = Client(transport, timeout=5)
    client.set_elicitation_handler(lambda req: asked.append(req) or ElicitationResult(action="accept", content={"name": "Luca"}))
    with client:
        assert client.call_tool("hello_world").text == "Hello, Luca!"
    assert len(asked) == 1 and len(updates) == 1
    assert updates[0]["taskId"] == "t-1"
    assert updates[0]["inputResponses"] == {"name": {"action": "accept", "content": {"name": "Luca"}}}
    server.stop()


def test_a_failed_modern_task_raises_its_json_rpc_error(transport):
    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=20)},
        "tasks/get": lambda p, m: {"resultType": "complete", **task_state("failed"),
                                   "error": {"code": -32602, "message": "bad city"}},
    })
    with Client(transport, timeout=5) as client:
        with pytest.raises(RPCError) as caught:
            client.call_tool("weather")
        assert caught.value.code == -32602 and "bad city" in str(caught.value)
    server.stop()


def test_call_tool_bounds_the_task_wait_by_its_timeout(transport):
    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=20)},
        "tasks/get": lambda p, m: {"resultType": "complete", **task_state(pollIntervalMs=20)},
    })
    with Client(transport, timeout=60) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("forever", timeout=0.3)
        assert time.monotonic() - started < 0.3 + RELEASED_WITHIN
    server.stop()


def test_cancelling_call_tool_cancels_the_task_on_the_server(transport):
    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=60000)},
        "tasks/get": lambda p, m: {"resultType": "complete", **task_state(pollIntervalMs=60000)},
        "tasks/cancel": lambda p, m: {"resultType": "complete"},
    })
    token = CancelToken()
    threading.Timer(0.2, token.cancel, args=("user gave up",)).start()
    with Client(transport, timeout=60) as client:  # a cancel heard only at the next poll: 60 s
        started = time.monotonic()
        with pytest.raises(RequestCancelled):
            client.call_tool("forever", cancel=token)
        assert time.monotonic() - started < 0.2 + RELEASED_WITHIN
    assert sent(server, "tasks/cancel")[0]["params"]["taskId"] == "t-1"
    assert not server.notifications("notifications/cancelled"), "tasks are cancelled with tasks/cancel only"
    server.stop()


def test_call_tool_as_task_needs_the_extension_and_list_tasks_does_not_exist(transport):
    server = modern_server(transport, {}, extensions={})
    with Client(transport, timeout=5) as client:
        with pytest.raises(CapabilityError, match=EXT):
            client.call_tool_as_task("x")
        with pytest.raises(CapabilityError, match="tasks"):
            client.list_tasks()
    assert not sent(server, "tools/call")
    server.stop()


def test_call_tool_as_task_gives_the_handle_and_a_modern_notification_completes_it(transport):
    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=30000)},
    })
    with Client(transport, timeout=5) as client:
        task = client.call_tool_as_task("x")
        transport.push({"jsonrpc": "2.0", "method": "notifications/tasks", "params": {
            **task_state("completed"), "result": {"content": [{"type": "text", "text": "pushed"}]}}})
        assert task.result(timeout=3).text == "pushed"
    assert not sent(server, "tasks/get")
    server.stop()


def test_a_task_result_for_a_method_that_cannot_have_one_is_a_protocol_error(transport):
    server = modern_server(transport, {
        "prompts/get": lambda p, m: {"resultType": "task", **task_state()},
        "server/discover": lambda p, m: {"resultType": "complete", "supportedVersions": [V],
                                         "capabilities": {"prompts": {}, "extensions": {EXT: {}}}},
    })
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="resultType"):
            client.get_prompt("p")
    server.stop()


def test_an_input_request_no_handler_can_answer_is_reported_not_looped(transport):
    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=20)},
        "tasks/get": lambda p, m: {"resultType": "complete", **task_state("input_required", pollIntervalMs=20),
                                   "inputRequests": {"s": {"method": "sampling/createMessage",
                                                           "params": {"messages": [], "maxTokens": 5}}}},
    })
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="sampling/createMessage"):
            client.call_tool("needs_llm")
    assert not sent(server, "tasks/update")
    server.stop()


def test_unknown_task_notifications_are_ignored(transport):
    server = modern_server(transport, {"tools/list": lambda p, m: {"resultType": "complete", "tools": []}})
    seen = []
    with Client(transport, timeout=5) as client:
        client.set_notification_handler(lambda method, params: seen.append(method))
        transport.push({"jsonrpc": "2.0", "method": "notifications/tasks", "params": task_state(task_id="nobody")})
        transport.push({"jsonrpc": "2.0", "method": "notifications/tasks", "params": {"taskId": "x"}})
        client.list_tools()
        deadline = time.monotonic() + 2
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert seen == ["notifications/tasks", "notifications/tasks"]
    server.stop()


def test_a_terminal_task_never_goes_back(transport):
    server = legacy_server(transport, {
        "tools/call": lambda p, m: {"task": task_state()},
        "tasks/get": lambda p, m: task_state("working"),
        "tasks/cancel": lambda p, m: task_state("cancelled"),
    })
    with Client(transport, timeout=5) as client:
        task = client.call_tool_as_task("x")
        task.cancel()
        assert task.refresh() == "cancelled"
    server.stop()


def test_get_task_is_bounded_by_its_timeout(transport):
    server = legacy_server(transport, {"tasks/get": lambda p, m: (_ for _ in ()).throw(Reply())})
    with Client(transport, timeout=5) as client:
        with pytest.raises(RequestTimeout):
            client.get_task("t-1", timeout=0.2)
    server.stop()


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_modern_task_requests_over_http_name_the_task_in_mcp_name(method):
    from mcpclient.plugins.headers import request_headers

    message = {"jsonrpc": "2.0", "id": 1, "method": method,
               "params": {"taskId": "t-1", "_meta": {"io.modelcontextprotocol/protocolVersion": V}}}
    assert request_headers(message) == {"MCP-Protocol-Version": V, "Mcp-Method": method, "Mcp-Name": "t-1"}


# -- the built-in extension's wiring -----------------------------------------------------------


def test_a_task_result_is_checked_against_the_schema_of_the_listing_the_task_call_made(transport):
    from mcpclient import OutputValidationError

    tool = {"name": "count", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"},
            "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    server = legacy_server(transport, {
        "tools/list": lambda p, m: {"tools": [tool]},
        "tools/call": lambda p, m: {"task": task_state()},
        "tasks/get": lambda p, m: task_state("completed"),
        "tasks/result": lambda p, m: {"content": [{"type": "text", "text": "x"}], "structuredContent": {"n": "x"}},
    })
    with Client(transport, timeout=5) as client:
        task = client.call_tool_as_task("count")  # unknown tool: listed once, through the result hooks
        with pytest.raises(OutputValidationError):
            task.result(timeout=5)
    assert len(sent(server, "tools/list")) == 1
    server.stop()


def test_a_task_waits_by_the_clients_timeout_as_it_is_now(transport):
    server = legacy_server(transport, {
        "tools/call": lambda p, m: {"task": task_state(pollInterval=20)},
        "tasks/get": lambda p, m: task_state(pollInterval=20),
    })
    with Client(transport, timeout=30) as client:
        task = client.call_tool_as_task("forever")
        client.timeout = 0.3  # a task made before the change waits by the new default
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="still working"):
            task.wait()
        assert 0.25 < time.monotonic() - started < 0.3 + RELEASED_WITHIN  # (the old default: 30 s)
    server.stop()


def test_a_raw_tools_list_request_passes_the_tasks_hook_as_it_came(transport):
    """``client.request("tools/list")`` hands the result hooks the result dict, not a tool list
    (the doctor and the stubs generator read the raw items this way)."""
    raw = {"tools": [{"name": "count", "inputSchema": {"type": "object"}}]}
    server = legacy_server(transport, {"tools/list": lambda p, m: raw})
    with Client(transport, timeout=5) as client:
        assert client.request("tools/list") == raw
    server.stop()


# -- 2026-07-28: task status by push (subscriptions/listen for task ids) --------------------

ACK = "notifications/subscriptions/acknowledged"
SUB_ID = "io.modelcontextprotocol/subscriptionId"


def pushing_listen(transport, listens, *, agree=True, completed=True):
    """A ``subscriptions/listen`` handler that acknowledges the task ids asked for (or none,
    ``agree=False``) and, when it agreed, pushes each task's completed state on the stream."""

    def listen(params, message):
        listens.append(params["notifications"])
        asked = params["notifications"].get("taskIds") or []
        meta = {SUB_ID: message["id"]}
        honoured = {key: value for key, value in params["notifications"].items() if key != "taskIds"}
        if agree and asked:
            honoured["taskIds"] = asked
        transport.push({"jsonrpc": "2.0", "method": ACK, "params": {"_meta": meta, "notifications": honoured}})
        for task_id in asked if agree and completed else ():
            transport.push({"jsonrpc": "2.0", "method": "notifications/tasks", "params": {
                "_meta": meta, **task_state("completed", task_id=task_id),
                "result": {"content": [{"type": "text", "text": f"pushed {task_id}"}], "isError": False}}})
        raise Reply()  # the stream stays open

    return listen


def test_a_task_waited_for_is_asked_of_the_listen_stream_and_its_pushed_status_ends_the_wait(transport):
    from tests.helpers import wait_for

    listens = []
    server = modern_server(transport, {
        # An interval past the call's timeout: only the push can end this wait in time.
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=60000)},
        "subscriptions/listen": pushing_listen(transport, listens),
    })
    with Client(transport, timeout=5) as client:
        assert client.call_tool("slow").text == "pushed t-1"
        assert listens[0] == {"taskIds": ["t-1"]}
        assert not sent(server, "tasks/get")
        # The wait is over: the id is withdrawn, and the stream it alone needed is ended.
        listen_id = sent(server, "subscriptions/listen")[0]["id"]
        assert wait_for(lambda: any(m.get("method") == "notifications/cancelled"
                                    and m["params"]["requestId"] == listen_id for m in server.received))
    server.stop()


def test_a_pushed_task_is_not_polled_at_the_servers_interval(transport):
    from tests.helpers import wait_for

    listens, results = [], []

    def listen(params, message):
        listens.append(params["notifications"])
        transport.push({"jsonrpc": "2.0", "method": ACK, "params": {
            "_meta": {SUB_ID: message["id"]}, "notifications": params["notifications"]}})
        raise Reply()

    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=50)},
        "tasks/get": lambda p, m: {"resultType": "complete", **task_state(pollIntervalMs=50)},
        "subscriptions/listen": listen,
    })
    with Client(transport, timeout=5) as client:
        task = client.call_tool_as_task("slow")
        waiter = threading.Thread(target=lambda: results.append(task.result(timeout=10)))
        waiter.start()
        # Once the client has taken the acknowledgement, at most the one poll already due goes out.
        assert wait_for(lambda: client._session.listening("taskIds") == ["t-1"])
        polls_at_ack = len(sent(server, "tasks/get"))
        time.sleep(0.5)  # ten of the server's intervals: a polled task would be asked ten times
        assert len(sent(server, "tasks/get")) <= polls_at_ack + 1
        transport.push({"jsonrpc": "2.0", "method": "notifications/tasks", "params": {
            **task_state("completed"), "result": {"content": [{"type": "text", "text": "at last"}]}}})
        waiter.join(10)
        assert results[0].text == "at last"
    server.stop()


def test_a_task_the_server_will_not_push_is_polled(transport):
    polls = []

    def get(params, message):
        polls.append(params)
        if len(polls) < 3:
            return {"resultType": "complete", **task_state(pollIntervalMs=20)}
        return {"resultType": "complete", **task_state("completed"),
                "result": {"content": [{"type": "text", "text": "polled"}], "isError": False}}

    listens = []
    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=20)},
        "tasks/get": get,
        "subscriptions/listen": pushing_listen(transport, listens, agree=False),
    })
    with Client(transport, timeout=5) as client:
        assert client.call_tool("slow").text == "polled"
    assert listens[0] == {"taskIds": ["t-1"]}  # asked, refused by the acknowledgement
    assert len(polls) == 3
    server.stop()


def test_a_server_without_listen_streams_leaves_tasks_polled(transport):
    polls = []

    def get(params, message):
        polls.append(params)
        return {"resultType": "complete", **task_state("completed"),
                "result": {"content": [{"type": "text", "text": "polled"}], "isError": False}}

    server = modern_server(transport, {  # no subscriptions/listen: -32601 for the stream
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=20)},
        "tasks/get": get,
    })
    with Client(transport, timeout=5) as client:
        assert client.call_tool("slow").text == "polled"
    assert len(polls) == 1
    server.stop()


def test_an_extension_may_not_set_the_clients_own_listen_keys(transport):
    server = modern_server(transport, {})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ValueError, match="client's own"):
            client._session.listen("toolsListChanged", True)
    server.stop()


def test_a_pushed_task_is_polled_again_once_its_listen_stream_fails(transport, monkeypatch):
    from mcpclient._client import subscriptions

    monkeypatch.setattr(subscriptions, "RECONNECT_DELAYS", (30.0,))  # the stream stays lost in this test
    broken = threading.Event()

    def listen(params, message):
        meta = {SUB_ID: message["id"]}
        broken.set()
        raise Reply({"jsonrpc": "2.0", "method": ACK, "params": {"_meta": meta, "notifications": params["notifications"]}},
                    {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "stream broke"}})

    def get(params, message):
        if not broken.is_set():
            return {"resultType": "complete", **task_state(pollIntervalMs=50)}
        return {"resultType": "complete", **task_state("completed"),
                "result": {"content": [{"type": "text", "text": "polled after the loss"}], "isError": False}}

    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=50)},
        "tasks/get": get,
        "subscriptions/listen": listen,
    })
    with Client(transport, timeout=5) as client:
        # The failed stream's acknowledgement does not outlive it: no push is counted on.
        assert client.call_tool("slow").text == "polled after the loss"
        assert client._session.listening("taskIds") is None
    server.stop()


def test_the_task_ids_ride_beside_the_clients_own_listen_keys(transport):
    listens = []
    server = modern_server(transport, {
        "tools/call": lambda p, m: {"resultType": "task", **task_state(pollIntervalMs=60000)},
        "subscriptions/listen": pushing_listen(transport, listens),
    })
    with Client(transport, timeout=5) as client:
        client.set_list_changed_handler(lambda kind: None)
        assert client.call_tool("slow").text == "pushed t-1"
    assert any({"toolsListChanged": True, "taskIds": ["t-1"]}.items() <= asked.items() for asked in listens)
    server.stop()
