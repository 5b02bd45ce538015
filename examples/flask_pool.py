"""A Flask app whose users each call an MCP server with their own token: a client per user.

``MCPPool`` (``mcpclient.contrib.flask``) keeps a ``ClientPool``: the first request of a
logged-in user opens that user's client with ``client_for(user)``, which sends that user's
token and nobody else's; later requests reuse it; at most ``POOL_SIZE`` clients are open per
worker process (the least recently used idle one makes room), and one idle for
``POOL_IDLE`` seconds is closed. The result cache is one ``FileStore`` for every worker
(``MCP_CACHE_DIR``): a private result is kept for the user whose credentials fetched it, and
served to nobody else. Serve it threaded, in several processes::

    export MCP_URL=http://127.0.0.1:8000/mcp FLASK_SECRET_KEY="$(python -c 'import secrets; print(secrets.token_hex(32))')"
    export POOL_USERS='{"ann": "<a werkzeug password hash>"}' MCP_TOKENS='{"ann": "<ann'"'"'s token>"}'
    gunicorn --preload -w 2 -k gthread --threads 4 --pythonpath examples flask_pool:app

``POST /login`` (form ``username``, ``password``, ``csrf_token`` from ``GET /login``) logs in;
``GET /whoami?tag=...`` calls the server's ``whoami`` tool and reads ``user://me`` as the user;
``POST /logout`` closes the user's client; ``GET /healthz/mcp-pool`` shows the pool's counts
(no user, no token). ``POOL_USERS`` (name to password hash) and ``MCP_TOKENS`` (name to token)
stand in for your user database and for the tokens your app keeps per user (an OAuth grant,
say). Every POST needs the session's CSRF token, and ``Host`` is checked (``TRUSTED_HOSTS``).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from typing import Any

from flask import Flask, abort, g, jsonify, request, session
from werkzeug.security import check_password_hash

import mcpclient
from mcpclient import MCPError
from mcpclient.cache import FileStore
from mcpclient.contrib.flask import MCPPool

MCP_URL = os.environ.get("MCP_URL", "http://127.0.0.1:8000/mcp")
USERS: dict[str, str] = json.loads(os.environ.get("POOL_USERS", "{}"))
TOKENS: dict[str, str] = json.loads(os.environ.get("MCP_TOKENS", "{}"))
#: One store for every worker, made before gunicorn forks them (``--preload``).
STORE = FileStore(os.environ["MCP_CACHE_DIR"]) if os.environ.get("MCP_CACHE_DIR") else True


def client_for(user: str) -> mcpclient.Client:
    """The pool's factory: ``user``'s client, which sends ``user``'s token and nobody else's."""
    return mcpclient.connect(MCP_URL, http=mcpclient.HTTP(headers={"Authorization": f"Bearer {TOKENS[user]}"}),
                             plugins=mcpclient.Plugins(cache=STORE), timeout=10)


pool = MCPPool(client_for)


def create_app() -> Flask:
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=os.environ.get("FLASK_SECRET_KEY") or secrets.token_hex(32),
        TRUSTED_HOSTS=["127.0.0.1", "localhost"],  # a request for another Host is a 400
        SESSION_COOKIE_SAMESITE="Strict",
        MCPCLIENT_POOL={"max_clients": int(os.environ.get("POOL_SIZE", "32")),
                        "idle_timeout": float(os.environ.get("POOL_IDLE", "300"))},
        MCPCLIENT_POOL_STATS_URL="/healthz/mcp-pool",
    )
    pool.init_app(app)

    @app.before_request
    def load_logged_in_user() -> None:
        g.user = session.get("user")  # the key of the user's client (MCPPool reads g.user)
        if request.method == "POST":
            sent = request.form.get("csrf_token", "")
            if "csrf" not in session or not hmac.compare_digest(sent, str(session["csrf"])):
                abort(403)

    @app.get("/login")
    def login_form() -> Any:
        session.setdefault("csrf", secrets.token_urlsafe(32))
        return jsonify(csrf_token=session["csrf"])

    @app.post("/login")
    def login() -> Any:
        name, password = request.form.get("username", ""), request.form.get("password", "")
        if name not in USERS or not check_password_hash(USERS[name], password):
            abort(403)
        session.clear()
        session.update(user=name, csrf=secrets.token_urlsafe(32))  # a new session, a new token
        return jsonify(user=name, csrf_token=session["csrf"])

    @app.post("/logout")
    def logout() -> Any:
        if g.user is not None:
            pool.pool.discard(g.user)  # its token leaves this process with it
        session.clear()
        return jsonify(user=None)

    @app.get("/whoami")
    def whoami() -> Any:
        client = pool.client  # the logged-in user's (a 401 without one)
        text = client.call_tool("whoami", {"tag": request.args.get("tag", "")}).text
        profile = client.read_resource("user://me")[0].text
        return jsonify(text=text, profile=profile, worker=os.getpid())

    @app.errorhandler(MCPError)
    def mcp_failed(error: MCPError) -> Any:
        return jsonify(error=str(error).splitlines()[0]), 502

    return app


app = create_app()
