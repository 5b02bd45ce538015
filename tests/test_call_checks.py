"""What a call checks as it starts (issue #46), against the official SDK's server.

* ``on_progress`` must take ``(progress, total, message)``: one that cannot is a ``TypeError``
  before anything is sent (it was a traceback in the log at each progress notice);
* a blocking call made on the thread of a running asyncio event loop (an ASGI handler) gets
  a ``RuntimeWarning``, once per process, at the caller's line; the same call through
  ``asyncio.to_thread`` gets none.
"""

from __future__ import annotations

import asyncio
import functools
import sys
import warnings
from pathlib import Path

import pytest

from mcpclient import Stdio, connect
from mcpclient._core import call_checks

from tests.helpers import require_mcp_sdk, wait_for

SDK_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "sdk_server.py")]


@pytest.fixture
def client():
    require_mcp_sdk()
    with connect(SDK_SERVER, timeout=30, stdio=Stdio(stderr=None)) as client:
        yield client


def _count(client) -> int:
    return int(client.call_tool("counter").text)


@pytest.mark.parametrize("callback", [
    lambda progress: None,
    lambda: None,
    lambda progress, total, message, extra: None,
])
def test_an_on_progress_that_cannot_take_three_arguments_is_refused_before_sending(client, callback):
    before = _count(client)
    with pytest.raises(TypeError, match=r"on_progress\(progress, total, message\)") as raised:
        client.call_tool("counter", on_progress=callback)
    assert "<lambda>(" in str(raised.value)
    assert _count(client) == before + 1  # the refused call never reached the server


def test_something_not_callable_is_refused_before_sending(client):
    before = _count(client)
    with pytest.raises(TypeError, match="on_progress must be callable"):
        client.call_tool("counter", on_progress="a bar")
    with pytest.raises(TypeError, match="on_progress must be callable"):
        client.read_resource("test://text", on_progress=42)
    assert _count(client) == before + 1


class _Bar:
    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None]] = []

    def __call__(self, progress, total=None, message=None) -> None:
        self.seen.append((progress, total))


def _record(seen, prefix, progress, total, message) -> None:
    seen.append((progress, total))


@pytest.mark.parametrize("kind", ["lambda", "star-args", "object", "partial"])
def test_callbacks_that_take_three_arguments_get_the_progress(client, kind):
    seen: list[tuple[float, float | None]] = []
    callback = {
        "lambda": lambda progress, total, message: seen.append((progress, total)),
        "star-args": lambda *args: seen.append(args[:2]),
        "object": _Bar(),
        "partial": functools.partial(_record, seen, "p"),
    }[kind]
    if kind == "object":
        seen = callback.seen
    assert client.call_tool("slow", {"seconds": 0.2, "steps": 2}, on_progress=callback).text == "done after 2 steps"
    assert wait_for(lambda: seen == [(1.0, 2.0), (2.0, 2.0)], timeout=10), seen


@pytest.fixture
def warn_again(monkeypatch):
    """The warning is said once per process: let this test see it said."""
    monkeypatch.setattr(call_checks, "_warned", False)


def _blocking(call):
    return [w for w in call if issubclass(w.category, RuntimeWarning) and "mcpclient: a blocking" in str(w.message)]


def test_a_blocking_call_in_an_asgi_handler_warns_once_at_the_handlers_line(client, warn_again):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    async def blocking(request):
        return PlainTextResponse(client.call_tool("echo", {"text": request.query_params["t"]}).text)

    async def threaded(request):
        result = await asyncio.to_thread(client.call_tool, "echo", {"text": request.query_params["t"]})
        return PlainTextResponse(result.text)

    app = Starlette(routes=[Route("/blocking", blocking), Route("/threaded", threaded)])
    with warnings.catch_warnings(record=True) as caught, TestClient(app) as http:
        warnings.simplefilter("always")
        assert http.get("/threaded", params={"t": "a"}).text == "a"
        assert _blocking(caught) == []
        assert [http.get("/blocking", params={"t": t}).text for t in ("b", "c")] == ["b", "c"]
    (warning,) = _blocking(caught)  # once, for two calls
    assert "'tools/call'" in str(warning.message) and "asyncio.to_thread" in str(warning.message)
    assert Path(warning.filename) == Path(__file__)  # the handler's line, not mcpclient's


def test_a_coroutine_that_calls_through_a_thread_gets_no_warning(client, warn_again):
    async def main() -> str:
        return (await asyncio.to_thread(client.call_tool, "echo", {"text": "x"})).text

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert asyncio.run(main()) == "x"
        assert client.call_tool("echo", {"text": "y"}).text == "y"  # no loop at all
    assert _blocking(caught) == []
