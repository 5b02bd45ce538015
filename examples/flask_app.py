"""A Flask app that calls an MCP tool per request, with one client per process.

Run it with ``flask --app examples/flask_app.py run --with-threads`` (or
``gunicorn --preload -w 2 --threads 4 examples.flask_app:app``) and open
http://127.0.0.1:5000/add?a=2&b=40. The ``MCP`` extension keeps a ``SharedClient``: each
process opens its own server on first use (gunicorn workers included, even with ``--preload``
and a warmed master), a server that died is replaced on the next request, and the client is
closed at exit. http://127.0.0.1:5000/healthz/mcp pings the server.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from flask import Flask, jsonify, request

from mcpclient import MCPError
from mcpclient.contrib.flask import MCP

DEMO_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "demo_server.py")]

mcp = MCP()


def create_app(command: list[str] | None = None) -> Flask:
    app = Flask(__name__)
    app.config["MCPCLIENT_TARGET"] = command or DEMO_SERVER
    app.config["MCPCLIENT_OPTIONS"] = {"timeout": 10}
    app.config["MCPCLIENT_HEALTH_URL"] = "/healthz/mcp"
    mcp.init_app(app)

    @app.get("/add")
    def add() -> Any:
        a = request.args.get("a", type=float)
        b = request.args.get("b", type=float)
        if a is None or b is None:
            return jsonify(error="give numbers a and b"), 400
        result = mcp.client.call_tool("add", {"a": a, "b": b})
        return jsonify(sum=result.text, is_error=result.is_error, worker=os.getpid())

    @app.get("/shout/<text>")
    def shout(text: str) -> Any:
        return jsonify(text=mcp.client.call_tool("shout", {"text": text}).text)

    @app.errorhandler(MCPError)
    def mcp_failed(error: MCPError) -> Any:
        return jsonify(error=str(error).splitlines()[0]), 502

    return app


app = create_app(os.environ["MCP_SERVER"].split() if os.environ.get("MCP_SERVER") else None)
if os.environ.get("MCP_WARM"):  # what --preload users do: open at import, in the master
    MCP.for_app(app).initialize()
