"""Flask extension: one ``SharedClient`` per app, opened per process on first use.

    mcp = MCP()                                   # at import

    def create_app():
        app = Flask(__name__)
        app.config["MCPCLIENT_TARGET"] = ["python", "server.py"]
        app.config["MCPCLIENT_OPTIONS"] = {"timeout": 10, "retry": "safe"}
        app.config["MCPCLIENT_HEALTH_URL"] = "/healthz/mcp"     # optional
        mcp.init_app(app)
        return app

    @bp.get("/add")
    def add():
        return mcp.client.call_tool("add", {"a": 1, "b": 2}).text

Flask has no shutdown signal: the client is closed at interpreter exit (and a gunicorn
worker's exit runs it).
"""

from __future__ import annotations

from typing import Any

from flask import Flask, current_app, jsonify

from .._build.shared import SharedClient, SharedTarget

__all__ = ["MCP"]

EXTENSION = "mcpclient"


class MCP:
    """The ``init_app`` extension; ``target`` and ``options`` here win over ``app.config``."""

    def __init__(self, app: Flask | None = None, *, target: SharedTarget | None = None, **options: Any) -> None:
        self.target = target
        self.options = options
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        target = self.target if self.target is not None else app.config.get("MCPCLIENT_TARGET")
        if target is None:
            raise RuntimeError("set app.config['MCPCLIENT_TARGET'] (a URL or a command) before init_app()")
        options = {**app.config.get("MCPCLIENT_OPTIONS", {}), **self.options}
        shared = SharedClient(target, **options)
        app.extensions[EXTENSION] = shared
        health_url = app.config.get("MCPCLIENT_HEALTH_URL")
        if health_url:
            def mcp_health() -> Any:
                health = shared.health()
                return jsonify(health), 200 if health["ok"] else 503

            app.add_url_rule(health_url, "mcpclient_health", mcp_health)

    @staticmethod
    def for_app(app: Flask) -> SharedClient:
        """The shared client ``init_app`` gave ``app``."""
        try:
            shared: SharedClient = app.extensions[EXTENSION]
        except KeyError:
            raise RuntimeError("MCP.init_app(app) was not called for this app") from None
        return shared

    @property
    def client(self) -> SharedClient:
        """The shared client of the current app (inside a request or app context)."""
        return self.for_app(current_app)
