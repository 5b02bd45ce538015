"""The Django approvals example (examples/django_approvals.py) under gunicorn (one worker,
four threads): the agent's request waits for its approval while a staff request reads the
page and answers Allow or Deny; the demo server's answer shows whether the call ran."""

from __future__ import annotations

import http.client
import json
import re
import threading
import urllib.parse
from typing import Any

import pytest

from tests.web._servers import Gunicorn

pytest.importorskip("django")
pytest.importorskip("gunicorn")

pytestmark = pytest.mark.timeout(120)


def request(port: int, method: str, path: str, body: bytes | None = None,
            content_type: str = "application/json") -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": content_type} if body is not None else {})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


class Agent:
    """``POST /agent/run`` on a thread: the agent's request, which waits for its approval."""

    def __init__(self, port: int, tool: str, arguments: dict[str, Any]) -> None:
        self.answer: tuple[int, str] | None = None
        body = json.dumps({"tool": tool, "arguments": arguments}).encode()
        self._thread = threading.Thread(target=self._run, args=(port, body), daemon=True)
        self._thread.start()

    def _run(self, port: int, body: bytes) -> None:
        self.answer = request(port, "POST", "/agent/run", body)

    def result(self) -> dict[str, Any]:
        self._thread.join(60)
        assert self.answer is not None and self.answer[0] == 200, self.answer
        return json.loads(self.answer[1])  # type: ignore[no-any-return]


def staff_page(port: int) -> str:
    for _ in range(200):
        status, page = request(port, "GET", "/approvals")
        assert status == 200
        if "<form" in page:
            return page
        threading.Event().wait(0.05)
    raise AssertionError("no call ever waited")


def answer(port: int, page: str, allow: str) -> int:
    [ident] = re.findall(r'action="/approvals/([^"]+)"', page)
    status, _ = request(port, "POST", f"/approvals/{ident}", urllib.parse.urlencode({"allow": allow}).encode(),
                        "application/x-www-form-urlencoded")
    return status


def test_the_staff_page_shows_the_waiting_call_inert_and_allow_runs_it() -> None:
    with Gunicorn("django_approvals:application", "-w", "1", "-k", "gthread", "--threads", "4") as server:
        assert json.loads(request(server.port, "POST", "/agent/run",
                                  json.dumps({"tool": "add", "arguments": {"a": 1, "b": 2}}).encode())[1]) \
            == {"outcome": "ran", "text": "3"}  # allowed by a rule: nobody is asked
        agent = Agent(server.port, "shout", {"text": "<b>hi</b>"})
        page = staff_page(server.port)
        assert 'Tool call on server &quot;demo-server&quot;: &quot;shout&quot; (destructive, open-world' in page
        assert "&lt;b&gt;hi&lt;/b&gt;" in page and "<b>hi" not in page
        assert answer(server.port, page, "yes") == 302
        assert agent.result() == {"outcome": "ran", "text": "<B>HI</B>"}
        assert "Nothing waits." in request(server.port, "GET", "/approvals")[1]


def test_deny_refuses_the_call_and_a_late_answer_is_told_it_no_longer_waits() -> None:
    with Gunicorn("django_approvals:application", "-w", "1", "-k", "gthread", "--threads", "4") as server:
        agent = Agent(server.port, "shout", {"text": "hi"})
        page = staff_page(server.port)
        assert answer(server.port, page, "no") == 302
        assert agent.result() == {"outcome": "denied", "reason": "not approved"}
        assert answer(server.port, page, "yes") == 409


def test_nobody_answers_and_the_call_is_denied_at_the_approvals_timeout() -> None:
    with Gunicorn("django_approvals:application", "-w", "1", "-k", "gthread", "--threads", "4",
                  env={"APPROVAL_TIMEOUT": "1"}) as server:
        agent = Agent(server.port, "shout", {"text": "hi"})
        assert agent.result() == {"outcome": "denied", "reason": "not approved"}
