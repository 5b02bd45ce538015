"""Every approval page the project ships checks Host, requires a login and keeps CSRF (issue 44,
item 6): examples/django_approvals.py and examples/flask_approvals.py under gunicorn, over real
HTTP, with the demo server behind them.

Seen before: a page on another name rebound to 127.0.0.1 (DNS rebinding) read the waiting
ids and posted Allow, and the held call ran. Here the rebinding page, a visitor who is not
logged in, and a logged-in staff member's browser made to post without the CSRF token are
all refused while a call waits; the call still waits, and runs only as the staff member
decides. The Flask helper (``mcpclient.contrib.flask``) serves no approval page; its health
page is refused to another Host as every page of an app that sets ``TRUSTED_HOSTS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

from tests.web._approval_site import PASSWORD, REBOUND, Person, django_database, held_call, serve, staff_member
from tests.web._servers import Gunicorn

pytest.importorskip("django")
pytest.importorskip("flask")
pytest.importorskip("gunicorn")

pytestmark = pytest.mark.timeout(180)


def django_site(folder: Path) -> Gunicorn:
    return serve("django_approvals:application", django_database(folder))


def flask_site(folder: Path) -> Gunicorn:
    from werkzeug.security import generate_password_hash

    return serve("flask_approvals:create_app()", {"APPROVALS_PASSWORD_HASH": generate_password_hash(PASSWORD),
                                                  "FLASK_SECRET_KEY": "test-only-secret"})


@pytest.fixture(params=[django_site, flask_site], ids=["django", "flask"])
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Gunicorn]:
    make: Callable[[Path], Gunicorn] = request.param
    with make(tmp_path) as server:
        yield server


def test_only_the_logged_in_staff_on_this_host_with_the_csrf_token_answers(site: Gunicorn) -> None:
    staff = staff_member(site.port)
    agent, ident = held_call(staff, "shout", {"text": "hi"})

    # A page on a name rebound to 127.0.0.1: its requests carry that name as Host, and the
    # browser has no cookies for it. Nothing is served to it, nothing it posts is taken.
    rebound = Person(site.port, host=REBOUND)
    for path in ("/approvals", "/login"):
        page = rebound.get(path)
        assert page.status_code == 400 and ident not in page.text, (path, page.status_code)
    assert rebound.answer(ident, "yes").status_code == 400
    assert rebound.post("/agent/run", json_body={"tool": "shout", "arguments": {"text": "x"}}).status_code == 400
    rebound.http.cookies.update(staff.http.cookies)  # not even with the staff's cookies and token
    rebound.token = staff.token
    assert rebound.answer(ident, "yes").status_code == 400

    # A visitor who is not logged in: sent to the login page, shown no id, its answer not taken.
    visitor = Person(site.port)
    page = visitor.get("/approvals")
    assert page.status_code == 302 and page.headers["Location"].startswith("/login") and ident not in page.text
    assert visitor.answer(ident, "yes").status_code in (302, 403)  # no CSRF token yet (Flask checks it first)
    visitor.get("/login")  # a token of its own, still no login
    assert visitor.answer(ident, "yes").status_code == 302
    assert visitor.post("/agent/run", json_body={"tool": "add", "arguments": {"a": 1, "b": 2}}).status_code == 302

    # The staff member's browser made to post by another page: no token, or a wrong one.
    assert staff.answer(ident, "yes", csrf=False).status_code == 403
    assert staff.answer(ident, "yes", csrf="x" * 32).status_code == 403
    assert staff.get("/approvals").headers["X-Frame-Options"] == "DENY"  # nor may a page frame it to be clicked

    assert agent.waits() and staff.waiting() == [ident]  # still waiting, unanswered
    assert staff.answer(ident, "no").status_code == 302
    assert agent.result() == {"outcome": "denied", "reason": "not approved"}


def test_the_staff_member_approves_and_the_call_runs(site: Gunicorn) -> None:
    staff = staff_member(site.port)
    agent, ident = held_call(staff, "shout", {"text": "hi"})
    assert staff.answer(ident, "yes").status_code == 302
    assert agent.result() == {"outcome": "ran", "text": "HI"}


def test_a_wrong_password_logs_nobody_in(site: Gunicorn) -> None:
    person = Person(site.port)
    with pytest.raises(AssertionError):
        person.log_in(password="wrong")
    assert person.get("/approvals").status_code == 302


def test_the_flask_helpers_health_page_honours_trusted_hosts() -> None:
    from flask import Flask

    from mcpclient.contrib.flask import MCP

    from ..conftest import DEMO_SERVER

    app = Flask("health")
    app.config.update(MCPCLIENT_TARGET=DEMO_SERVER, MCPCLIENT_HEALTH_URL="/healthz/mcp",
                      TRUSTED_HOSTS=["127.0.0.1"])
    MCP(app)
    try:
        client = app.test_client()
        assert client.get("/healthz/mcp", headers={"Host": f"{REBOUND}:5000"}).status_code == 400
        assert not MCP.for_app(app).is_open  # refused before anything was started
        answer = client.get("/healthz/mcp", headers={"Host": "127.0.0.1:5000"})
        assert answer.status_code == 200 and answer.get_json()["ok"] is True
    finally:
        MCP.for_app(app).close()
