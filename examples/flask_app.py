"""A Flask app that calls an MCP tool per request, with one client shared by every thread.

Run it with ``flask --app examples/flask_app.py run --with-threads`` and open
http://127.0.0.1:5000/add?a=2&b=40. A ``Client`` is safe to share between threads, so the
app opens one, on the first request (after any fork: gunicorn workers each get their own),
and closes it at exit. If the server dies, the next request starts a new one.
"""

from __future__ import annotations

import atexit
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from flask import Flask, jsonify, request

from mcpclient import Client, ConnectionClosed, MCPError, connect

DEMO_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "demo_server.py")]


class SharedClient:
    """One MCP client for the whole process: opened on first use, reopened if the server died."""

    def __init__(self, open_client: Callable[[], Client]) -> None:
        self._open_client = open_client
        self._client: Client | None = None
        self._lock = threading.Lock()
        self.opened = 0

    def get(self) -> Client:
        with self._lock:
            if self._client is None:
                self._client = self._open_client()
                self.opened += 1
            return self._client

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        client = self.get()
        try:
            return client.call_tool(name, arguments)
        except ConnectionClosed:
            with self._lock:
                if self._client is client:
                    self._client = None  # the next request starts a fresh server
            client.close()
            raise

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


def create_app(command: list[str] | None = None) -> Flask:
    app = Flask(__name__)
    mcp = SharedClient(lambda: connect(command or DEMO_SERVER, timeout=10))
    app.extensions["mcp"] = mcp
    atexit.register(mcp.close)

    @app.get("/add")
    def add() -> Any:
        a = request.args.get("a", type=float)
        b = request.args.get("b", type=float)
        if a is None or b is None:
            return jsonify(error="give numbers a and b"), 400
        result = mcp.call_tool("add", {"a": a, "b": b})
        return jsonify(sum=result.text, is_error=result.is_error)

    @app.get("/shout/<text>")
    def shout(text: str) -> Any:
        return jsonify(text=mcp.call_tool("shout", {"text": text}).text)

    @app.errorhandler(MCPError)
    def mcp_failed(error: MCPError) -> Any:
        return jsonify(error=str(error).splitlines()[0]), 502

    return app


app = create_app()
