"""The pool examples (examples/django_pool.py, examples/flask_pool.py) under a real gunicorn with
two preforked workers of four threads, several users logged in at once, against the official-SDK
server that records which token each request carried (tests/servers/sdk_cache_server.py
``--record``; ``whoami`` and ``user://me`` answer with the caller's token).

Each worker holds at most two clients and closes one idle for 0.2 s, so under the load clients
are evicted and reopened all the time; every worker shares one ``FileStore`` (made in the master),
which keeps each user's private profile. No request may carry another user's token, and no
answer, cached or not, may be another user's (issue #48).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
import requests

from tests.cache_fixtures import RecordingServer
from tests.helpers import require_mcp_sdk
from tests.web._servers import EXAMPLES, ROOT, Gunicorn

pytest.importorskip("gunicorn")
require_mcp_sdk()
pytestmark = pytest.mark.timeout(240)

PASSWORD = "correct horse battery staple"
USERS = [f"user{i}" for i in range(5)]
CALLS = 12  # per user


def token_of(user: str) -> str:
    return f"token-of-{user}-{user[::-1]}"


class Browser:
    """One person's cookies, talking to 127.0.0.1:``port``."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.http = requests.Session()
        self.http.trust_env = False

    def get(self, path: str) -> requests.Response:
        return self.http.get(self.base + path, allow_redirects=False, timeout=60)

    def post(self, path: str, data: dict[str, str]) -> requests.Response:
        return self.http.post(self.base + path, data=data, allow_redirects=False, timeout=60,
                              headers={"X-CSRFToken": self.http.cookies.get("csrftoken", "")})


def django_login(browser: Browser, user: str) -> None:
    form = browser.get("/login")
    [token] = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    answer = browser.post("/login", {"username": user, "password": PASSWORD, "csrfmiddlewaretoken": token})
    assert answer.status_code == 302, (answer.status_code, answer.text[-300:])
    browser.csrf = browser.http.cookies.get("csrftoken", "")  # type: ignore[attr-defined]


def django_logout(browser: Browser) -> None:
    assert browser.post("/logout", {"csrfmiddlewaretoken": browser.http.cookies.get("csrftoken", "")}).status_code == 200


def flask_login(browser: Browser, user: str) -> None:
    token = browser.get("/login").json()["csrf_token"]
    answer = browser.post("/login", {"username": user, "password": PASSWORD, "csrf_token": token})
    assert answer.status_code == 200, (answer.status_code, answer.text[-300:])
    browser.csrf = answer.json()["csrf_token"]  # type: ignore[attr-defined]


def flask_logout(browser: Browser) -> None:
    assert browser.post("/logout", {"csrf_token": browser.csrf}).status_code == 200  # type: ignore[attr-defined]


def django_site(folder: Path) -> dict[str, str]:
    """A migrated database with ``USERS`` for examples/django_pool.py; the environment that names it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POOL_DB": str(folder / "pool.sqlite3")}
    example = [sys.executable, str(EXAMPLES / "django_pool.py")]
    create = ("from django.contrib.auth.models import User\n"
              f"for name in {USERS!r}: User.objects.create_user(name, password={PASSWORD!r})")
    for command in (["migrate", "--no-input"], ["shell", "-c", create]):
        subprocess.run([*example, *command], env=env, cwd=folder, check=True, capture_output=True, timeout=120)
    return {"POOL_DB": env["POOL_DB"]}


def flask_site(folder: Path) -> dict[str, str]:
    from werkzeug.security import generate_password_hash

    hashed = {user: generate_password_hash(PASSWORD, method="pbkdf2:sha256:1000") for user in USERS}
    return {"POOL_USERS": json.dumps(hashed), "FLASK_SECRET_KEY": "test-only-" + folder.name}


def load(port: int, login: Callable[[Browser, str], None], logout: Callable[[Browser], None]) -> dict[str, Any]:
    """Every user logs in, then all make ``CALLS`` requests at once (each user from a thread of
    its own, a third of them after logging out and in again); what came back, per user."""
    answers: dict[str, list[tuple[str, int, dict[str, Any]]]] = {user: [] for user in USERS}
    errors: list[BaseException] = []
    browsers = {user: Browser(port) for user in USERS}
    for user, browser in browsers.items():
        login(browser, user)

    def user_requests(user: str) -> None:
        browser = browsers[user]
        try:
            for n in range(CALLS):
                if n == CALLS // 3:  # the same key, closed and made again under load
                    logout(browser)
                    login(browser, user)
                tag = f"{user}-{n}"
                answer = browser.get(f"/whoami?tag={tag}")
                answers[user].append((tag, answer.status_code, answer.json()))
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=user_requests, args=(user,)) for user in USERS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert not errors, errors
    return answers


def check(answers: dict[str, Any], server: RecordingServer, anonymous: int) -> None:
    for user, seen in answers.items():
        assert len(seen) == CALLS
        for tag, status, body in seen:
            assert status == 200, body
            assert body["text"] == f"{token_of(user)} {tag}", (user, body)  # no call carried another's token
            assert body["profile"] == f"the profile of {token_of(user)}", (user, body)  # no result crossed
    records = server.records()
    tagged = [r for r in records if r["method"] == "tools/call"]
    assert len(tagged) == len(USERS) * CALLS
    assert all(r["caller"] == token_of(str(r["tag"]).split("-")[0]) for r in tagged)
    assert {r["caller"] for r in records} <= {token_of(user) for user in USERS}  # nobody else's, never none
    reads = [r for r in records if r["method"] == "resources/read"]
    assert 0 < len(reads) < len(USERS) * CALLS, "the shared store served no read: the test proves little"
    assert anonymous in (401, 403)


def run(app: str, folder: Path, site: dict[str, str], login: Any, logout: Any, *server_args: str) -> None:
    tokens = json.dumps({user: token_of(user) for user in USERS})
    with RecordingServer(folder, *server_args) as server:
        env = {"MCP_URL": server.url, "MCP_TOKENS": tokens, "MCP_CACHE_DIR": str(folder / "cache"),
               "POOL_SIZE": "2", "POOL_IDLE": "0.2", **site}
        with Gunicorn(app, "-w", "2", "-k", "gthread", "--threads", "4", "--preload", env=env) as web:
            anonymous = Browser(web.port).get("/whoami?tag=nobody").status_code
            answers = load(web.port, login, logout)
            stats = [Browser(web.port).get("/healthz/mcp-pool").json() for _ in range(4)]
        check(answers, server, anonymous)
    assert all(s["max_clients"] == 2 and s["open"] <= 2 for s in stats)
    assert not any(user in json.dumps(stats) for user in USERS)


def test_django_users_each_call_with_their_own_token_and_never_see_anothers_result(tmp_path: Path):
    pytest.importorskip("django")
    run("django_pool:application", tmp_path, django_site(tmp_path), django_login, django_logout)


def test_flask_users_each_call_with_their_own_token_and_never_see_anothers_result_legacy_server(tmp_path: Path):
    pytest.importorskip("flask")
    run("flask_pool:app", tmp_path, flask_site(tmp_path), flask_login, flask_logout, "--legacy")
