"""Handlers that call back: more server requests than dispatch workers, each making a nested
call to the same server (issue #28, item 5). Against the official SDK's server.

The tool ``elicit`` asks the client (``elicitation/create``); the client's elicitation handler
answers an "outer" question by calling ``elicit`` again (so the server elicits from inside the
nested call) and an "inner" one at once. With more outer calls than the pool has workers,
every worker waits in a nested call and the inner elicitations need threads of their own.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mcpclient import Client, RPCError, StdioTransport, StreamableHTTPTransport
from mcpclient import types as t
from mcpclient._rpc import engine as engine_module
from tests.conftest import SDK_SERVER
from tests.helpers import require_mcp_sdk
from tests.http.conftest import start_sdk_server

require_mcp_sdk()
pytestmark = pytest.mark.timeout(120)


def nesting_handler(client: Client, nested: str = "elicit", **options: Any) -> Any:
    """An elicitation handler that answers "outer" questions with a nested call of ``nested``."""

    def handler(request: t.ElicitationRequest) -> t.ElicitationResult:
        if not request.message.startswith("outer"):
            return t.ElicitationResult(action="accept", content={"name": "inner"})
        result = client.call_tool(nested, {"message": "inner"} if nested == "elicit" else {"text": "x"}, **options)
        return t.ElicitationResult(action="accept", content={"name": result.text[:40]})

    return handler


def call_at_once(client: Client, calls: int, join: float = 60.0) -> list[Any]:
    """``calls`` concurrent ``elicit`` calls; each one's ToolResult or exception."""
    results: list[Any] = [None] * calls
    start = threading.Barrier(calls)

    def one(i: int) -> None:
        start.wait(30)
        try:
            results[i] = client.call_tool("elicit", {"message": f"outer {i}"})
        except Exception as exc:  # recorded: the test counts them
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.1, join))
    assert not any(thread.is_alive() for thread in threads), "a caller is still blocked"
    return results


def failures(results: list[Any]) -> list[str]:
    return [repr(r) if isinstance(r, Exception) else r.text for r in results
            if isinstance(r, Exception) or r.is_error or not r.text.startswith("accept")]


@pytest.mark.parametrize("calls", [24, 48])
def test_more_nested_handlers_than_workers_all_complete_over_stdio(calls):
    # A call stuck for want of a thread would end by its 60 s timeout and fail: the calls
    # took a few seconds, so 30 s is far from both.
    client = Client(StdioTransport(SDK_SERVER), protocol="legacy", timeout=60)
    client.set_elicitation_handler(nesting_handler(client))
    with client:
        began = time.monotonic()
        results = call_at_once(client, calls, join=90)
        took = time.monotonic() - began
    assert failures(results) == []
    assert took < 30, f"{calls} nested calls took {took:.1f}s"


def test_more_nested_handlers_than_workers_all_complete_over_streamable_http():
    server = start_sdk_server("--transport", "streamable-http")
    try:
        client = Client(StreamableHTTPTransport(server.url), protocol="legacy", timeout=30)
        client.set_elicitation_handler(nesting_handler(client))
        with client:
            assert failures(call_at_once(client, 24)) == []
    finally:
        server.stop()


def test_nested_handlers_in_the_modern_era_run_on_the_callers_threads():
    # 2026-07-28 has no server requests: input rounds are answered on the thread that called,
    # so handlers there never wait for a dispatch worker.
    client = Client(StdioTransport(SDK_SERVER), timeout=30)
    seen: set[str] = set()
    handler = nesting_handler(client)

    def recording(request: t.ElicitationRequest) -> t.ElicitationResult:
        seen.add(threading.current_thread().name)
        return handler(request)

    client.set_elicitation_handler(recording)
    with client:
        assert client.protocol_version == "2026-07-28"
        assert failures(call_at_once(client, 24)) == []
    assert not any(name.startswith("mcpclient-dispatch") for name in seen)


def test_with_every_thread_waiting_a_request_is_refused_as_busy_and_no_call_hangs():
    # max_dispatch=2: at most 16 threads. 24 outer calls with no timeout: once 16 handlers
    # wait in nested calls, the server's further requests get "client busy" error replies,
    # its tools fail, and every call (nested ones included) ends.
    client = Client(StdioTransport(SDK_SERVER), protocol="legacy", timeout=None, max_dispatch=2)
    client.set_elicitation_handler(nesting_handler(client))
    with client:
        assert client._engine._dispatch._pool.most == 16
        began = time.monotonic()
        results = call_at_once(client, 24, join=60)  # a hang never ends: 60 s is far from it
        took = time.monotonic() - began
    assert took < 60
    # The SDK's tool passes the refusal on as its own error reply (to an outer or nested call).
    busy = [r for r in results if isinstance(r, RPCError) and "client busy" in r.message]
    assert busy
    assert [r for r in results if r not in busy and (isinstance(r, Exception) or r.is_error)] == []


def test_a_nested_calls_progress_reaches_it_while_every_worker_is_busy(monkeypatch):
    # One worker, held by the elicitation handler: the nested call's progress callbacks need a
    # thread, and must run before the nested call returns.
    client = Client(StdioTransport(SDK_SERVER), protocol="legacy", timeout=30, max_dispatch=1)
    progress: list[float] = []
    ended_with: list[list[float]] = []

    def handler(request: t.ElicitationRequest) -> t.ElicitationResult:
        client.call_tool("slow", {"seconds": 0.2, "steps": 4}, on_progress=lambda p, total, m: progress.append(p))
        ended_with.append(list(progress))
        return t.ElicitationResult(action="accept", content={"name": "n"})

    client.set_elicitation_handler(handler)
    # Callbacks with no thread to run on would hold the nested call for the whole drain
    # timeout: 30 s here, far from the 10 s allowed.
    monkeypatch.setattr(engine_module, "PROGRESS_DRAIN_TIMEOUT", 30.0)
    with client:
        began = time.monotonic()
        result = client.call_tool("elicit", {"message": "outer"}, timeout=60)
        took = time.monotonic() - began
    assert not result.is_error, result.text
    assert ended_with == [[1.0, 2.0, 3.0, 4.0]]
    assert took < 10
