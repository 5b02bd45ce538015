"""Progress, cancellation from another thread, and server log messages.

Progress renewing a call's timeout and ``max_total`` capping it are shown on the official
SDK's server too (its ``slow`` tool reports progress after each step), in both eras.
"""

from __future__ import annotations

import logging
import threading
import time

import pytest

from mcpclient import CancelToken, CapabilityError, Client, RequestCancelled, RequestTimeout, StdioTransport
from mcpclient._rpc import engine as engine_module
from tests.conftest import SDK_SERVER
from tests.doubles import LEGACY_INIT_RESULT, Reply, ScriptedServer
from tests.helpers import RELEASED_WITHIN, require_mcp_sdk, wait_for


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
    # Progress every 0.4 s against a 2 s timeout, 4 s in all: a step 1.6 s late still renews.
    server = ScriptedServer(transport)
    server.handlers["tools/call"] = slow_with_progress(transport, 10, 0.4)
    with Client(transport, timeout=60) as client:
        result = client.call_tool("slow", timeout=2, on_progress=lambda *a: None)
    assert result.content == []
    server.stop()


def test_max_total_still_caps_a_call_that_keeps_reporting_progress(transport):
    # Progress every 0.2 s for 30 s, never a result: only max_total (3 s) ends the call.
    server = ScriptedServer(transport)
    server.handlers["tools/call"] = slow_with_progress(transport, 150, 0.2, final=False)
    with Client(transport, timeout=60) as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout, match="max_total"):
            client.call_tool("slow", timeout=2, max_total=3, on_progress=lambda *a: None)
        assert 3 <= time.monotonic() - t0 < 3 + RELEASED_WITHIN
    server.stop()


def test_without_progress_the_timeout_is_not_renewed(transport):
    # The first progress comes after 10 s and the result after 30: a renewed call would wait.
    server = ScriptedServer(transport)
    server.handlers["tools/call"] = slow_with_progress(transport, 3, 10)
    with Client(transport, timeout=60) as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", timeout=0.3)
        assert time.monotonic() - t0 < 0.3 + RELEASED_WITHIN
    server.stop()


# -- the same against the official SDK's server -----------------------------------------------

SDK_ERAS = {"legacy": ["--legacy-only"], "2026-07-28": []}


def sdk_client(era: str, events: list[str]) -> Client:
    require_mcp_sdk()
    transport = StdioTransport(SDK_SERVER + SDK_ERAS[era], stderr=lambda line: events.append(line))
    client = Client(transport, timeout=60)
    client.initialize()
    assert client.protocol_version.startswith("2026" if era != "legacy" else "2025")
    return client


def sdk_events(lines: list[str], name: str) -> list[str]:
    return [line for line in lines if line.startswith("EVENT ") and f'"event": "{name}"' in line]


@pytest.mark.parametrize("era", SDK_ERAS)
def test_the_sdk_servers_progress_renews_the_timeout_and_max_total_caps_it(era):
    events: list[str] = []
    seen: list[float] = []
    with sdk_client(era, events) as client:
        # Its slow tool: 10 steps of 0.3 s, progress after each, against a 1.5 s timeout.
        result = client.call_tool("slow", {"seconds": 3, "steps": 10}, timeout=1.5,
                                  on_progress=lambda progress, total, message: seen.append(progress))
        assert result.text == "done after 10 steps"
        assert seen == [float(i) for i in range(1, 11)]

        # Without on_progress no token is sent, the server reports nothing, and 1.5 s is the end.
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", {"seconds": 30, "steps": 10}, timeout=1.5)
        assert time.monotonic() - started < 1.5 + RELEASED_WITHIN
        wait_for(lambda: len(sdk_events(events, "slow_cancelled")) == 1, timeout=RELEASED_WITHIN,
                 what="the server cancelled the call")

        # Progress every 0.3 s for 45 s: the idle timeout never ends it, max_total (3 s) does,
        # and the server is told to stop.
        del seen[:]
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="max_total"):
            client.call_tool("slow", {"seconds": 45, "steps": 150}, timeout=1.5, max_total=3,
                             on_progress=lambda progress, total, message: seen.append(progress))
        took = time.monotonic() - started
        assert 3 <= took < 3 + RELEASED_WITHIN, took
        assert len(seen) >= 5, seen  # renewed past the 1.5 s idle timeout
        wait_for(lambda: len(sdk_events(events, "slow_cancelled")) == 2, timeout=RELEASED_WITHIN,
                 what="the server cancelled the capped call")
        assert client.call_tool("echo", {"text": "after"}).text == "after"


@pytest.mark.parametrize("kind", ["token", "event"])
def test_a_call_can_be_cancelled_from_another_thread(transport, kind):
    server = ScriptedServer(transport, {"tools/call": lambda p, m: (_ for _ in ()).throw(Reply())})
    cancel = CancelToken() if kind == "token" else threading.Event()
    with Client(transport, timeout=5) as client:
        trigger = (lambda: cancel.cancel("user pressed stop")) if kind == "token" else cancel.set
        threading.Timer(0.2, trigger).start()
        t0 = time.monotonic()
        with pytest.raises(RequestCancelled):
            client.call_tool("slow", timeout=60, cancel=cancel)  # a cancel not heeded: 60 s
        assert time.monotonic() - t0 < 0.2 + RELEASED_WITHIN
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


def test_a_call_with_progress_made_from_a_progress_callback_does_not_wait_for_the_drain(transport, monkeypatch):
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

    # A wait for the drain would take its whole timeout: 30 s here, far from the 10 s allowed.
    monkeypatch.setattr(engine_module, "PROGRESS_DRAIN_TIMEOUT", 30.0)
    with Client(transport, timeout=60) as client:
        client.call_tool("outer", on_progress=outer_progress)
        assert inner_progress.wait(RELEASED_WITHIN)
    assert inner_took and inner_took[0] < RELEASED_WITHIN
    server.stop()
