"""A Flask app where a person approves an agent's tool calls from a staff page: the Flask twin
of ``django_approvals.py``.

Give it the staff password's hash and a secret key, then serve it threaded (one thread waits
for the answer while another takes it)::

    export APPROVALS_PASSWORD_HASH="$(python -c 'import getpass, werkzeug.security as s;
    print(s.generate_password_hash(getpass.getpass()))')"
    export FLASK_SECRET_KEY="$(python -c 'import secrets; print(secrets.token_hex(32))')"
    flask --app examples/flask_approvals.py run --with-threads       # then log in at /login

or ``gunicorn -w 1 -k gthread --threads 4 --pythonpath examples 'flask_approvals:create_app()'``.

* ``POST /agent/run`` (JSON ``{"tool": ..., "arguments": {...}}``, logged in, with the CSRF
  token in ``X-CSRFToken``) is the agent's work: the tool is called through a client whose
  policy allows ``add`` and asks about everything else. The request waits for the answer.
* ``GET /approvals`` is the staff page: each waiting call as inert text (the request's
  ``lines()``, escaped again by Jinja) with Allow and Deny buttons; ``POST /approvals/<id>``
  answers (409 when it no longer waits).

An approval page is a door to every tool the policy asks about, so it is guarded as one:

* the ``Host`` header is checked on every request (Flask's ``TRUSTED_HOSTS``; a wrong one is
  a 400).
  Listening on 127.0.0.1 alone is no protection: a web page on a name its attacker rebinds
  to 127.0.0.1 (DNS rebinding) is the same origin as this page to the browser;
* every page but ``/login`` needs the staff login (one password here; use your app's own
  login in a real one);
* every POST, the login's included, needs the session's CSRF token (a form field, or the
  ``X-CSRFToken`` header), and no page may be framed.

``WebApprovals`` lives in one process: run one worker process (many threads).
"""

from __future__ import annotations

import functools
import hmac
import os
import secrets
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from flask import Flask, abort, redirect, render_template_string, request, session
from werkzeug.security import check_password_hash

from mcpclient import Plugins
from mcpclient.contrib.flask import MCP
from mcpclient.policy import Policy, Rule, ToolCallDenied, WebApprovals

DEMO_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "demo_server.py")]
HOSTS = ("127.0.0.1", "localhost")

LOGIN = """<!DOCTYPE html><title>Log in</title>
<form method="post"><input type="hidden" name="csrf_token" value="{{ token }}">
<label>Password <input type="password" name="password"></label> <button>Log in</button></form>"""
PAGE = """<!DOCTYPE html><title>Approvals</title><meta name="csrf-token" content="{{ token }}">
<h1>Tool calls waiting for you</h1>
{% for p in pending %}<form method="post" action="/approvals/{{ p.id }}">
<input type="hidden" name="csrf_token" value="{{ token }}">
<pre>{% for line in p.lines %}{{ line }}
{% endfor %}</pre>
<button name="allow" value="yes">Allow</button> <button name="allow" value="no">Deny</button>
</form>{% else %}<p>Nothing waits.</p>{% endfor %}"""


def create_app(client: Any = None, approvals: WebApprovals | None = None, *, password_hash: str | None = None,
               secret_key: str | None = None, hosts: Sequence[str] = HOSTS) -> Flask:
    """The app. ``client`` (anything with ``call_tool``) defaults to a shared client of the
    demo server (``MCP_SERVER`` names another command) whose policy asks ``approvals``; the
    password hash and the secret key default to ``APPROVALS_PASSWORD_HASH`` and
    ``FLASK_SECRET_KEY``."""
    password_hash = password_hash or os.environ.get("APPROVALS_PASSWORD_HASH")
    if not password_hash:
        raise RuntimeError("set APPROVALS_PASSWORD_HASH (werkzeug.security.generate_password_hash of the password)")
    approvals = approvals if approvals is not None else WebApprovals(
        timeout=float(os.environ.get("APPROVAL_TIMEOUT", "120")))
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=secret_key or os.environ.get("FLASK_SECRET_KEY") or secrets.token_hex(32),
        TRUSTED_HOSTS=list(hosts),  # a request for another Host is a 400
        SESSION_COOKIE_SAMESITE="Strict",
    )
    if client is None:
        policy = Policy([Rule("allow", annotations={"readOnlyHint": True}, name="reads"),
                         Rule("allow", tool="add", name="sums")], default="ask", approver=approvals)
        target = os.environ["MCP_SERVER"].split() if os.environ.get("MCP_SERVER") else DEMO_SERVER
        client = MCP(app, target=target, timeout=300, plugins=Plugins(policy=policy)).for_app(app)

    def token() -> str:
        if "csrf" not in session:
            session["csrf"] = secrets.token_urlsafe(32)
        return str(session["csrf"])

    @app.before_request
    def guard() -> None:
        _ = request.host  # Host first: Flask's own check comes only after the before_request hooks
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            sent = request.form.get("csrf_token") or request.headers.get("X-CSRFToken") or ""
            if "csrf" not in session or not hmac.compare_digest(sent, str(session["csrf"])):
                abort(403, "the CSRF token is missing or wrong")

    @app.after_request
    def no_frames(response: Any) -> Any:
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Content-Security-Policy"] = "frame-ancestors 'none'"
        return response

    def staff(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if not session.get("staff"):
                return redirect("/login")
            return view(*args, **kwargs)
        return checked

    @app.route("/login", methods=["GET", "POST"])
    def login() -> Any:
        if request.method == "POST":
            if not check_password_hash(password_hash, request.form.get("password", "")):
                abort(403, "wrong password")
            session.clear()
            session["staff"] = True
            token()  # a new token for the new session
            return redirect("/approvals")
        return render_template_string(LOGIN, token=token())

    @app.post("/agent/run")
    @staff
    def run() -> Any:
        body = request.get_json()
        try:
            result = client.call_tool(body["tool"], body.get("arguments", {}),
                                      **({"timeout": body["timeout"]} if "timeout" in body else {}))
        except ToolCallDenied as exc:
            return {"outcome": "denied", "reason": exc.reason}
        return {"outcome": "ran", "text": result.text}

    @app.get("/approvals")
    @staff
    def pending() -> Any:
        return render_template_string(PAGE, pending=approvals.pending(), token=token())

    @app.post("/approvals/<ident>")
    @staff
    def answer(ident: str) -> Any:
        if not approvals.answer(ident, request.form.get("allow") == "yes"):
            return "That call no longer waits (answered, or its deadline passed).", 409
        return redirect("/approvals")

    return app
