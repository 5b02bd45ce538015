"""WebApprovals answered from a real threaded Flask app over HTTP: one request thread runs the
agent's call and blocks on its approval, another lists what waits and answers it, as a staff
page would. A call nobody answers is denied at its deadline, and at the client's close(); the
official SDK server counts what reached it."""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Iterator

import pytest

import mcpclient
from mcpclient.policy import Policy, Rule, ToolCallDenied, WebApprovals

from ..conftest import SERVERS

flask = pytest.importorskip("flask")
serving = pytest.importorskip("werkzeug.serving")

pytestmark = pytest.mark.timeout(90)

POLICY_SERVER = [sys.executable, str(SERVERS / "sdk_policy_server.py")]
#: How much later than its deadline a denial may come on a loaded machine (it comes at once).
SLACK = 3.0


class App:
    """The Flask app: ``POST /run`` calls the tool, ``GET /approvals`` and ``POST /approvals/ID``
    are the staff page's list and buttons. Served threaded on loopback, one request a thread."""

    def __init__(self) -> None:
        self.approvals = WebApprovals(timeout=60)
        policy = Policy([Rule("allow", annotations={"readOnlyHint": True})], approver=self.approvals)
        self.client = mcpclient.connect(POLICY_SERVER, policy=policy, protocol="legacy", timeout=30)
        app = flask.Flask("approvals")

        @app.post("/run")
        def run() -> Any:
            body = flask.request.get_json()
            try:
                text = self.client.call_tool(body["tool"], body["arguments"], timeout=body.get("timeout")).text
                return {"outcome": "ran", "text": text}
            except ToolCallDenied as exc:
                return {"outcome": "denied", "reason": exc.reason}

        @app.get("/approvals")
        def pending() -> Any:
            return {"pending": [{"id": p.id, "lines": list(p.lines), "deadline": p.deadline}
                                for p in self.approvals.pending()]}

        @app.post("/approvals/<ident>")
        def answer(ident: str) -> Any:
            if not self.approvals.answer(ident, flask.request.form.get("allow") == "yes"):
                return {"error": "no longer waiting"}, 409
            return {"answered": ident}

        self.server = serving.make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self._thread.join(10)
        self.client.close()


@pytest.fixture
def app() -> Iterator[App]:
    served = App()
    try:
        yield served
    finally:
        served.close()


def http(url: str, data: bytes | None = None, json_body: Any = None) -> tuple[int, Any]:
    headers = {}
    if json_body is not None:
        data, headers = json.dumps(json_body).encode(), {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


class Run:
    """``POST /run`` on a thread of its own, as the agent's request: its answer, and when it came."""

    def __init__(self, app: App, **body: Any) -> None:
        self.answer: Any = None
        self.ended: float | None = None
        self.started = time.monotonic()
        self._thread = threading.Thread(target=self._post, args=(app.url, body), daemon=True)
        self._thread.start()

    def _post(self, url: str, body: dict[str, Any]) -> None:
        self.answer = http(f"{url}/run", json_body=body)
        self.ended = time.monotonic()

    def join(self) -> Any:
        self._thread.join(60)
        assert not self._thread.is_alive(), "the agent's request still waits"
        return self.answer


def waiting(app: App) -> list[dict[str, Any]]:
    end = time.monotonic() + 20
    while True:
        status, body = http(f"{app.url}/approvals")
        assert status == 200
        if body["pending"]:
            return body["pending"]  # type: ignore[no-any-return]
        assert time.monotonic() < end, "the call never asked"
        time.sleep(0.05)


def counts(app: App) -> dict[str, int]:
    result: dict[str, int] = json.loads(app.client.call_tool("calls").text)
    return result


WRITE = {"tool": "write_file", "arguments": {"path": "p", "content": "hello"}}


def test_a_staff_request_says_yes_and_the_agents_call_runs(app: App) -> None:
    run = Run(app, **WRITE)
    [pending] = waiting(app)
    assert pending["lines"][0].startswith('Tool call on server "policy-test-server": "write_file" (destructive')
    assert '  content = "hello"' in pending["lines"]
    assert http(f"{app.url}/approvals/{pending['id']}", data=b"allow=yes") == (200, {"answered": pending["id"]})
    assert run.join() == (200, {"outcome": "ran", "text": "wrote 5 characters to p"})
    assert counts(app) == {"write_file": 1}
    assert http(f"{app.url}/approvals/{pending['id']}", data=b"allow=yes")[0] == 409  # answered already


def test_a_staff_request_says_no_and_the_call_never_reaches_the_server(app: App) -> None:
    run = Run(app, **WRITE)
    [pending] = waiting(app)
    http(f"{app.url}/approvals/{pending['id']}", data=b"allow=no")
    assert run.join() == (200, {"outcome": "denied", "reason": "not approved"})
    assert counts(app) == {}


def test_nobody_answers_and_the_call_is_denied_at_its_deadline(app: App) -> None:
    run = Run(app, **WRITE, timeout=1.5)
    [pending] = waiting(app)
    assert run.join() == (200, {"outcome": "denied", "reason": "no answer came before the call's deadline"})
    assert run.ended is not None and run.ended - run.started < 1.5 + SLACK
    assert http(f"{app.url}/approvals")[1] == {"pending": []}
    assert http(f"{app.url}/approvals/{pending['id']}", data=b"allow=yes")[0] == 409  # too late
    assert counts(app) == {}


def test_closing_the_client_denies_what_waits_at_once(app: App) -> None:
    run = Run(app, **WRITE)
    waiting(app)
    closing = time.monotonic()
    app.client.close()
    assert run.join() == (200, {"outcome": "denied", "reason": "the client closed before an answer came"})
    assert run.ended is not None and run.ended - closing < SLACK
    assert http(f"{app.url}/approvals")[1] == {"pending": []}
