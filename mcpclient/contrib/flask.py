"""Flask extensions: one ``SharedClient`` per app (``MCP``), or a client per user (``MCPPool``).

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

A client per logged-in user, each with the user's own credentials (a ``ClientPool``)::

    pool = MCPPool(client_for)                    # at import: client_for(key) -> Client

    def create_app():
        app = Flask(__name__)
        app.config["MCPCLIENT_POOL"] = {"max_clients": 32, "idle_timeout": 300}
        app.config["MCPCLIENT_POOL_STATS_URL"] = "/healthz/mcp-pool"     # optional
        pool.init_app(app)
        return app

    @bp.get("/search")
    def search():
        return pool.client.call_tool("search", {"q": request.args["q"]}).text

``pool.client`` is the current user's client: its key is ``g.user`` (as the Flask tutorial's
``load_logged_in_user`` sets it; a Flask-Login user's ``get_id()``, an object's ``id``, or the
value itself), or what ``MCPPool(factory, key=fn)``'s ``fn()`` returns; a request without a
user gets a 401.

Flask has no shutdown signal: the clients are closed at interpreter exit (and a gunicorn
worker's exit runs it).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable

from flask import Flask, current_app, g, jsonify
from werkzeug.exceptions import Unauthorized

from .._build.pool import ClientPool
from .._build.pooled import PooledClient
from .._build.shared import SharedClient, SharedTarget

__all__ = ["MCP", "MCPPool", "user_key"]

EXTENSION = "mcpclient"
POOL_EXTENSION = "mcpclient.pool"


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


def user_key() -> Hashable:
    """The default key of ``MCPPool``: the request's ``g.user`` (its ``get_id()``, as a
    Flask-Login user has, its ``id``, or the value itself); ``Unauthorized`` (401) without one."""
    user = getattr(g, "user", None)
    if user is None:
        raise Unauthorized("an MCP client of the pool is for a logged-in user")
    get_id = getattr(user, "get_id", None)
    if callable(get_id):
        return get_id()  # type: ignore[no-any-return]
    ident = getattr(user, "id", None)
    return ident if ident is not None else user  # type: ignore[no-any-return]


class MCPPool:
    """The ``init_app`` extension of a ``ClientPool`` (see the module docstring).

    ``factory`` is ``ClientPool``'s; ``key()`` gives the current request's key (default:
    ``user_key``); other keyword arguments, over ``app.config["MCPCLIENT_POOL"]``, go to
    ``ClientPool``. One pool per app, made in ``init_app``.
    """

    def __init__(self, factory: Callable[[Any], Any], app: Flask | None = None, *,
                 key: Callable[[], Hashable] = user_key, **options: Any) -> None:
        self.factory = factory
        self.key = key
        self.options = options
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        options = {**app.config.get("MCPCLIENT_POOL", {}), **self.options}
        pool: ClientPool[Any] = ClientPool(self.factory, **options)
        app.extensions[POOL_EXTENSION] = pool
        stats_url = app.config.get("MCPCLIENT_POOL_STATS_URL")
        if stats_url:
            def mcp_pool_stats() -> Any:
                return jsonify(pool.stats())

            app.add_url_rule(stats_url, "mcpclient_pool_stats", mcp_pool_stats)

    @staticmethod
    def for_app(app: Flask) -> ClientPool[Any]:
        """The pool ``init_app`` gave ``app``."""
        try:
            pool: ClientPool[Any] = app.extensions[POOL_EXTENSION]
        except KeyError:
            raise RuntimeError("MCPPool.init_app(app) was not called for this app") from None
        return pool

    @property
    def pool(self) -> ClientPool[Any]:
        """The pool of the current app (inside a request or app context)."""
        return self.for_app(current_app)

    @property
    def client(self) -> PooledClient:
        """The current user's client (inside a request): ``pool.get(key())``."""
        return self.pool.get(self.key())
