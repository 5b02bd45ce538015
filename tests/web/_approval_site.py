"""The approval examples (examples/django_approvals.py, examples/flask_approvals.py) served by
gunicorn on 127.0.0.1, and a person using them over real HTTP: logging in, reading the staff
page, answering with the CSRF token, or leaving any of that out."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import requests

from tests.web._servers import EXAMPLES, ROOT, Gunicorn

PASSWORD = "correct horse battery staple"
#: A name an attacker's DNS answers with 127.0.0.1 (DNS rebinding): the browser sends it as Host.
REBOUND = "rebind.attacker.example"


def django_database(folder: Path, example: str = "django_approvals.py", variable: str = "APPROVALS_DB",
                    user: str = "staff") -> dict[str, str]:
    """A migrated database for the Django ``example`` in ``folder``, with the superuser ``user``;
    the environment that points the example at it (its ``variable``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), variable: str(folder / "example.sqlite3"),
           "DJANGO_SUPERUSER_PASSWORD": PASSWORD}
    command_line = [sys.executable, str(EXAMPLES / example)]
    for command in (["migrate", "--no-input"],
                    ["createsuperuser", "--no-input", "--username", user, "--email", f"{user}@example.invalid"]):
        subprocess.run([*command_line, *command], env=env, cwd=folder, check=True, capture_output=True, timeout=120)
    return {variable: env[variable]}


def serve(app: str, env: dict[str, str]) -> Gunicorn:
    """gunicorn serving ``app`` with one worker of four threads (one waits, one answers)."""
    return Gunicorn(app, "-w", "1", "-k", "gthread", "--threads", "4", env=env)


class Person:
    """Someone with a browser: cookies of their own, requests to 127.0.0.1 under a ``host`` name."""

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.host = f"{host}:{port}"
        self.http = requests.Session()
        self.http.trust_env = False
        self.token = ""  # the CSRF token of the last page that showed one

    def get(self, path: str) -> requests.Response:
        page = self.http.get(self.base + path, headers={"Host": self.host}, allow_redirects=False, timeout=60)
        found = re.search(r'<meta name="csrf-token" content="([^"]+)"|name="(?:csrfmiddlewaretoken|csrf_token)" '
                          r'value="([^"]+)"', page.text)
        if found:
            self.token = found.group(1) or found.group(2)
        return page

    def post(self, path: str, data: Any = None, json_body: Any = None, csrf: bool | str = True) -> requests.Response:
        """POST with the CSRF token in ``X-CSRFToken`` (``csrf=False``: none; a string: that one)."""
        headers = {"Host": self.host}
        token = self.http.cookies.get("csrftoken") or self.token  # Django's cookie, else the page's
        if isinstance(csrf, str):
            headers["X-CSRFToken"] = csrf
        elif csrf and token:
            headers["X-CSRFToken"] = token
        return self.http.post(self.base + path, data=data, json=json_body, headers=headers, allow_redirects=False,
                              timeout=60)

    def log_in(self, user: str = "staff", password: str = PASSWORD) -> None:
        """Log in through the login form (Django's, or the Flask example's), then read the
        staff page for the new session's token."""
        form = self.get("/login")
        assert form.status_code == 200, form.status_code
        [(field, token)] = re.findall(r'name="(csrfmiddlewaretoken|csrf_token)" value="([^"]+)"', form.text)
        answer = self.post("/login", data={"username": user, "password": password, field: token}, csrf=False)
        assert answer.status_code == 302, (answer.status_code, answer.text[-500:])
        assert self.get("/approvals").status_code == 200

    def waiting(self, timeout: float = 30.0) -> list[str]:
        """The ids on the staff page, once one call waits."""
        end = time.monotonic() + timeout
        while True:
            page = self.get("/approvals")
            assert page.status_code == 200, page.status_code
            ids = re.findall(r'action="/approvals/([^"]+)"', page.text)
            if ids:
                return ids
            assert time.monotonic() < end, "no call ever waited"
            time.sleep(0.05)

    def answer(self, ident: str, allow: str, csrf: bool | str = True) -> requests.Response:
        return self.post(f"/approvals/{ident}", data={"allow": allow}, csrf=csrf)


class Agent:
    """``POST /agent/run`` by ``person`` on a thread: the agent's request, which waits for its approval."""

    def __init__(self, person: Person, tool: str, arguments: dict[str, Any], **options: Any) -> None:
        self.answer: requests.Response | None = None
        self.started = time.monotonic()
        self.ended: float | None = None
        body = {"tool": tool, "arguments": arguments, **options}
        self._thread = threading.Thread(target=self._run, args=(person, body), daemon=True)
        self._thread.start()

    def _run(self, person: Person, body: dict[str, Any]) -> None:
        self.answer = person.post("/agent/run", json_body=body)
        self.ended = time.monotonic()

    def waits(self) -> bool:
        return self._thread.is_alive()

    def result(self) -> dict[str, Any]:
        self._thread.join(60)
        assert self.answer is not None and self.answer.status_code == 200, self.answer
        return json.loads(self.answer.text)  # type: ignore[no-any-return]


def staff_member(port: int) -> Person:
    """The staff member ``staff``, logged in."""
    staff = Person(port)
    staff.log_in()
    return staff


def held_call(staff: Person, tool: str, arguments: dict[str, Any], **options: Any) -> tuple[Agent, str]:
    """The agent's call of ``tool`` (by ``staff``), waiting for its approval, and its id on the page."""
    agent = Agent(staff, tool, arguments, **options)
    [ident] = staff.waiting()
    return agent, ident
