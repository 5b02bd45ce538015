"""Progress, cancellation from another thread, and server log messages."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from mcpclient import CancelToken, CapabilityError, Client, RequestCancelled, RequestTimeout
from tests.doubles import LEGACY_INIT_RESULT, Reply, ScriptedServer
from tests.helpers import wait_for


def slow_with_progress(transport, steps, interval, final=True):
    def handler(params, message):
        token = params.get("_meta", {}).get("progressToken", message["id"])  # unasked progress too

        def run():
            for i in range(1, steps + 1):
                time.sleep(interval)
                transport.push({"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": token, "progress": i, "total": steps, "message": f"step {i}"}})
            if final:
                transport.push({"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}})

        threading.Thread(target=run, daemon=True).start()
        raise Reply()

    return handler


def test_progress_reaches_the_callback_with_a_token_sent(transport):
    server = ScriptedServer(transport)
    server.handlers["tools/call"] = slow_with_progress(transport, 3, 0.01)
    seen = []
    with Client(transport, timeout=5) as client:
        client.call_tool("slow", on_progress=lambda p, total, msg: seen.append((p, total, msg)))
        assert wait_for(lambda: len(seen) == 3)
    assert sorted(seen) == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    call = next(m for m in server.received if m.get("method") == "tools/call")
    assert call["params"]["_meta"]["progressToken"] == call["id"]
    server.stop()


def test_progress_renews_the_idle_timeout(transport):
    server = ScriptedServer(transport)
    server.handlers["tools/call"] = slow_with_progress(transport, 6, 0.1)  # 0.6 s in all
    with Client(transport, timeout=5) as client:
        result = client.call_tool("slow", timeout=0.3, on_progress=lambda *a: None)
    assert result.content == []
    server.stop()


def test_max_total_still_caps_a_call_that_keeps_reporting_progress(transport):
    server = ScriptedServer(transport)
    server.handlers["tools/call"] = slow_with_progress(transport, 50, 0.05, final=False)
    with Client(transport, timeout=5) as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", timeout=0.3, max_total=0.8, on_progress=lambda *a: None)
        assert 0.7 < time.monotonic() - t0 < 2
    server.stop()


def test_without_progress_the_timeout_is_not_renewed(transport):
    server = ScriptedServer(transport)
    server.handlers["tools/call"] = slow_with_progress(transport, 6, 0.1)
    with Client(transport, timeout=5) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", timeout=0.3)
    server.stop()


@pytest.mark.parametrize("kind", ["token", "event"])
def test_a_call_can_be_cancelled_from_another_thread(transport, kind):
    server = ScriptedServer(transport, {"tools/call": lambda p, m: (_ for _ in ()).throw(Reply())})
    cancel = CancelToken() if kind == "token" else threading.Event()
    with Client(transport, timeout=5) as client:
        trigger = (lambda: cancel.cancel("user pressed stop")) if kind == "token" else cancel.set
        threading.Timer(0.2, trigger).start()
        t0 = time.monotonic()
        with pytest.raises(RequestCancelled):
            client.call_tool("slow", timeout=10, cancel=cancel)
        assert time.monotonic() - t0 < 2
        call = next(m for m in server.received if m.get("method") == "tools/call")
        assert wait_for(lambda: any(m["params"]["requestId"] == call["id"]
                                    for m in server.notifications("notifications/cancelled")))
        client.ping()  # still usable
    server.stop()


def test_an_already_cancelled_token_cancels_at_once(transport):
    server = ScriptedServer(transport, {"tools/call": lambda p, m: (_ for _ in ()).throw(Reply())})
    token = CancelToken()
    token.cancel()
    with Client(transport, timeout=5) as client:
        with pytest.raises(RequestCancelled):
            client.call_tool("x", cancel=token)
    server.stop()


def test_set_log_level_sends_logging_set_level_to_a_legacy_server(transport):
    server = ScriptedServer(transport, {"logging/setLevel": lambda p, m: {}},
                            init_result={**LEGACY_INIT_RESULT, "capabilities": {"logging": {}}})
    with Client(transport, timeout=5) as client:
        client.set_log_level("debug")
        with pytest.raises(ValueError):
            client.set_log_level("loud")
    sent = next(m for m in server.received if m.get("method") == "logging/setLevel")
    assert sent["params"] == {"level": "debug"}
    server.stop()


def test_set_log_level_needs_the_logging_capability(transport):
    server = ScriptedServer(transport)
    with Client(transport, timeout=5) as client:
        with pytest.raises(CapabilityError):
            client.set_log_level("info")
    server.stop()


def test_server_log_messages_go_to_python_logging(transport, caplog, monkeypatch):
    from mcpclient._client import server_logging as _logging

    # Only the first MAX_SERVER_LOGGERS names in a process get a child logger: make room,
    # whatever names the tests before this one used.
    monkeypatch.setattr(_logging, "_children", set())
    server = ScriptedServer(transport)
    with caplog.at_level(logging.DEBUG, logger="mcpclient.server"):
        with Client(transport, timeout=5):
            transport.push({"jsonrpc": "2.0", "method": "notifications/message",
                            "params": {"level": "error", "logger": "db", "data": {"query": "x"}}})
            assert wait_for(lambda: any(r.name == "mcpclient.server.db" for r in caplog.records))
    record = next(r for r in caplog.records if r.name == "mcpclient.server.db")
    assert record.levelno == logging.ERROR
    assert '"query"' in record.getMessage() and "scripted" in record.getMessage()
    server.stop()


def test_server_log_messages_can_go_to_a_callback(transport):
    server = ScriptedServer(transport)
    got = []
    with Client(transport, timeout=5) as client:
        client.set_log_handler(lambda level, data, logger: got.append((level, data, logger)))
        transport.push({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "notice", "data": "hi"}})
        assert wait_for(lambda: got)
    assert got == [("notice", "hi", None)]
    server.stop()


def test_every_progress_callback_has_run_when_the_call_returns(transport):
    server = ScriptedServer(transport)
    server.handlers["tools/call"] = slow_with_progress(transport, 5, 0.0)
    seen = []

    def slow_callback(progress, total, message):
        time.sleep(0.05)  # callbacks run on another thread: the call must still wait for them
        seen.append(progress)

    with Client(transport, timeout=5) as client:
        client.call_tool("slow", on_progress=slow_callback)
        assert seen == [1.0, 2.0, 3.0, 4.0, 5.0]
    server.stop()


def test_a_call_with_progress_made_from_a_progress_callback_does_not_wait_for_the_drain(transport):
    # The inner call's own progress callback queues behind the callback that makes it (one
    # lane): waiting for it before returning could only time out.
    def tool(params, message):
        token = params["_meta"]["progressToken"]
        progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1}}
        raise Reply(progress, {"jsonrpc": "2.0", "id": message["id"], "result": {"content": []}})

    server = ScriptedServer(transport, {"tools/call": tool})
    inner_took: list[float] = []
    inner_progress = threading.Event()

    def outer_progress(*_):
        if inner_took:
            return
        t0 = time.monotonic()
        client.call_tool("inner", on_progress=lambda *a: inner_progress.set())
        inner_took.append(time.monotonic() - t0)

    with Client(transport, timeout=5) as client:
        client.call_tool("outer", on_progress=outer_progress)
        assert inner_progress.wait(5)
    assert inner_took and inner_took[0] < 1.0
    server.stop()
