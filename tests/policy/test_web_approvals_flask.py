"""WebApprovals answered from the Flask approvals example (examples/flask_approvals.py), served
threaded over real HTTP: one request thread runs the agent's call and blocks on its approval,
a logged-in staff member reads the page and answers it with the CSRF token. A call nobody
answers is denied at its deadline, and at the client's close(); the official SDK server counts
what reached it. What the page refuses (another Host, no login, no CSRF token) is in
tests/security/test_approval_pages.py."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Iterator

import pytest

import mcpclient
from mcpclient.policy import Policy, Rule, WebApprovals

from ..conftest import SERVERS
from ..web._approval_site import PASSWORD, Agent, Person, held_call, staff_member
from ..web._servers import EXAMPLES

flask = pytest.importorskip("flask")
serving = pytest.importorskip("werkzeug.serving")
security = pytest.importorskip("werkzeug.security")

pytestmark = pytest.mark.timeout(90)

POLICY_SERVER = [sys.executable, str(SERVERS / "sdk_policy_server.py")]
#: How much later than its deadline a denial may come on a loaded machine (it comes at once).
SLACK = 3.0


def example_app(client: mcpclient.Client, approvals: WebApprovals) -> flask.Flask:
    sys.path.insert(0, str(EXAMPLES))
    try:
        from flask_approvals import create_app
    finally:
        sys.path.remove(str(EXAMPLES))
    return create_app(client, approvals, password_hash=security.generate_password_hash(PASSWORD),  # type: ignore[no-any-return]
                      secret_key="test-only")


class App:
    """The example app around a client of the SDK policy server, served threaded on loopback."""

    def __init__(self) -> None:
        self.approvals = WebApprovals(timeout=60)
        policy = Policy([Rule("allow", annotations={"readOnlyHint": True})], approver=self.approvals)
        self.client = mcpclient.connect(POLICY_SERVER,
                                        plugins=mcpclient.Plugins(policy=policy), protocol="legacy", timeout=30)
        self.server = serving.make_server("127.0.0.1", 0, example_app(self.client, self.approvals), threaded=True)
        self.port = self.server.server_port
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


@pytest.fixture
def staff(app: App) -> Person:
    return staff_member(app.port)


def counts(app: App) -> dict[str, int]:
    result: dict[str, int] = json.loads(app.client.call_tool("calls").text)
    return result


WRITE = ("write_file", {"path": "p", "content": "hello"})


def test_a_staff_request_says_yes_and_the_agents_call_runs(app: App, staff: Person) -> None:
    agent, ident = held_call(staff, *WRITE)
    page = staff.get("/approvals").text
    assert "Tool call on server &#34;policy-test-server&#34;: &#34;write_file&#34; (destructive" in page
    assert "  content = &#34;hello&#34;" in page
    assert staff.answer(ident, "yes").status_code == 302
    assert agent.result() == {"outcome": "ran", "text": "wrote 5 characters to p"}
    assert counts(app) == {"write_file": 1}
    assert staff.answer(ident, "yes").status_code == 409  # answered already


def test_a_staff_request_says_no_and_the_call_never_reaches_the_server(app: App, staff: Person) -> None:
    agent, ident = held_call(staff, *WRITE)
    staff.answer(ident, "no")
    assert agent.result() == {"outcome": "denied", "reason": "not approved"}
    assert counts(app) == {}


def test_nobody_answers_and_the_call_is_denied_at_its_deadline(app: App, staff: Person) -> None:
    agent, ident = held_call(staff, *WRITE, timeout=1.5)
    assert agent.result() == {"outcome": "denied", "reason": "no answer came before the call's deadline"}
    assert agent.ended is not None and agent.ended - agent.started < 1.5 + SLACK
    assert "Nothing waits." in staff.get("/approvals").text
    assert staff.answer(ident, "yes").status_code == 409  # too late
    assert counts(app) == {}


def test_closing_the_client_denies_what_waits_at_once(app: App, staff: Person) -> None:
    agent = Agent(staff, *WRITE)
    staff.waiting()
    closing = time.monotonic()
    app.client.close()
    assert agent.result() == {"outcome": "denied", "reason": "the client closed before an answer came"}
    assert agent.ended is not None and agent.ended - closing < SLACK
    assert "Nothing waits." in staff.get("/approvals").text
