"""Helpers for the HTTP transport tests: a fake MCP server on ``responses``, real servers."""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable

import pytest
import responses

from tests.helpers import end_process
from tests.helpers import wait_for  # noqa: F401 - the HTTP tests import it from here

ROOT = Path(__file__).resolve().parents[2]
SDK_SERVER = ROOT / "tests" / "servers" / "sdk_server.py"
URL = "http://mcp.test/mcp"

BLOCK = object()  # in a StreamBody: wait until the response is closed


class StreamBody(io.BufferedReader):
    """A response body for ``responses`` that yields chunks as they are fed, like a socket.

    Items are bytes (returned as one read), an exception (raised by that read), ``BLOCK``
    (block until closed) or None (end of stream). Feed more with ``put`` from any thread.
    """

    def __init__(self, *items: Any) -> None:
        super().__init__(io.BytesIO(b""))
        self._items: queue.Queue[Any] = queue.Queue()
        self._closed_event = threading.Event()
        for item in items:
            self._items.put(item)

    def put(self, item: Any) -> None:
        self._items.put(item)

    def read1(self, size: int = -1) -> bytes:
        while not self._closed_event.is_set():
            try:
                item = self._items.get(timeout=0.05)
            except queue.Empty:
                continue
            if item is None:
                self._closed_event.set()
                return b""
            if item is BLOCK:
                self._closed_event.wait()
                return b""
            if isinstance(item, BaseException):
                raise item
            return item
        return b""

    def read(self, size: int | None = -1) -> bytes:
        parts = []
        while True:
            chunk = self.read1()
            if not chunk:
                return b"".join(parts)
            parts.append(chunk)

    def close(self) -> None:
        self._closed_event.set()

    @property
    def closed(self) -> bool:  # type: ignore[override]
        return self._closed_event.is_set()


def sse(*messages: Any, event_id: str | None = None) -> bytes:
    """SSE bytes for ``messages`` (dicts become JSON ``message`` events)."""
    out = []
    for message in messages:
        out.append("event: message\n")
        if event_id is not None:
            out.append(f"id: {event_id}\n")
        out.append(f"data: {json.dumps(message)}\n\n")
    return "".join(out).encode()


def result(request_id: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "fake", "version": "1"},
}


class FakeMCP:
    """A scriptable MCP server behind ``responses``: records every request it gets.

    ``handlers[method](message, request)`` returns ``(status, headers, body)``; the defaults
    answer initialize (with a session id), notifications (202) and ``tools/call`` (JSON).
    ``get`` answers GETs (default 405) and ``delete`` DELETEs (default 200).
    """

    def __init__(self, rsps: responses.RequestsMock, url: str = URL, session_id: str | None = "sess-1") -> None:
        self.url = url
        self.session_id = session_id
        self.requests: list[Any] = []
        self.lock = threading.Lock()
        self.handlers: dict[str, Callable[..., tuple[int, dict[str, str], Any]]] = {
            "initialize": self.on_initialize,
            "tools/call": lambda m, r: (200, {"Content-Type": "application/json"}, json.dumps(
                result(m["id"], {"content": [{"type": "text", "text": "ok"}]}))),
        }
        self.get: Callable[[Any], tuple[int, dict[str, str], Any]] = lambda r: (405, {}, "")
        self.delete: Callable[[Any], tuple[int, dict[str, str], Any]] = lambda r: (200, {}, "")
        rsps.add_callback(responses.POST, url, callback=self._post)
        rsps.add_callback(responses.GET, url, callback=self._get)
        rsps.add_callback(responses.DELETE, url, callback=self._delete)

    def on_initialize(self, message: dict[str, Any], request: Any) -> tuple[int, dict[str, str], Any]:
        headers = {"Content-Type": "application/json"}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        return 200, headers, json.dumps(result(message["id"], INIT_RESULT))

    def _post(self, request: Any) -> tuple[int, dict[str, str], Any]:
        with self.lock:
            self.requests.append(request)
        message = json.loads(request.body)
        handler = self.handlers.get(message.get("method"))
        if handler is not None:
            return handler(message, request)
        if "id" in message and "method" in message:
            return 200, {"Content-Type": "application/json"}, json.dumps(result(message["id"], {}))
        return 202, {}, ""

    def _get(self, request: Any) -> tuple[int, dict[str, str], Any]:
        with self.lock:
            self.requests.append(request)
        return self.get(request)

    def _delete(self, request: Any) -> tuple[int, dict[str, str], Any]:
        with self.lock:
            self.requests.append(request)
        return self.delete(request)

    def posts(self, method: str | None = None) -> list[Any]:
        found = [r for r in self.requests if r.method == "POST"]
        if method is not None:
            found = [r for r in found if json.loads(r.body).get("method") == method]
        return found

    def of(self, verb: str) -> list[Any]:
        return [r for r in self.requests if r.method == verb]


@pytest.fixture
def rsps():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def fake(rsps) -> FakeMCP:
    return FakeMCP(rsps)


# -- real servers ---------------------------------------------------------------------------


class ServerProcess:
    def __init__(self, proc: subprocess.Popen[str], url: str, stderr: deque[str]) -> None:
        self.proc = proc
        self.url = url
        self.stderr = stderr

    def stop(self) -> None:
        end_process(self.proc, 5)


def start_sdk_server(
    *args: str, timeout: float = 30.0, env: dict[str, str] | None = None, script: Path = SDK_SERVER
) -> ServerProcess:
    """Start tests/servers/sdk_server.py (or another server ``script`` that takes ``--port``
    and prints LISTENING) with ``args`` on a free port; wait for LISTENING.

    ``env`` adds to this process's environment (``SDK_SERVER_EVENTS``, say).
    """
    proc = subprocess.Popen(
        [sys.executable, str(script), "--port", "0", *args],
        env={**os.environ, **env} if env else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr: deque[str] = deque(maxlen=200)
    threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True).start()  # type: ignore[arg-type]
    ready: list[str] = []
    reader = threading.Thread(target=lambda: ready.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    line = ready[0] if ready else ""
    if not line.startswith("LISTENING "):
        proc.kill()
        proc.wait()
        raise RuntimeError(f"sdk_server did not start: {line!r}; stderr: {list(stderr)[-20:]}")
    return ServerProcess(proc, line.split()[1], stderr)


@pytest.fixture
def sdk_server():
    """A factory: ``sdk_server("--transport", "sse")`` -> a started server, killed after."""
    started: list[ServerProcess] = []

    def start(*args: str) -> ServerProcess:
        server = start_sdk_server(*args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def everything_server():
    """A factory: ``everything_server("streamableHttp")`` -> server-everything, stopped after."""
    from tests import node_tools

    if node_tools.node22() is None or not node_tools.EVERYTHING_JS.is_file():
        pytest.skip("Node 22 or server-everything missing: run `npm ci` in tests/node")
    started: list[Any] = []

    def start(transport: str, port: int = 0) -> Any:
        server = node_tools.start_everything_http(transport, port=port)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
