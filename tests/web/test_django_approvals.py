"""The Django approvals example (examples/django_approvals.py) under gunicorn (one worker,
four threads): a logged-in agent's request waits for its approval while a logged-in staff
member reads the page and answers Allow or Deny; the demo server's answer shows whether the
call ran. What the page refuses (another Host, no login, no CSRF token) is in
tests/security/test_approval_pages.py."""

from __future__ import annotations

import pytest

from tests.web._approval_site import Agent, django_database, held_call, serve, staff_member

pytest.importorskip("django")
pytest.importorskip("gunicorn")

pytestmark = pytest.mark.timeout(180)

APP = "django_approvals:application"


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return django_database(tmp_path_factory.mktemp("approvals"))


def test_the_staff_page_shows_the_waiting_call_inert_and_allow_runs_it(database: dict[str, str]) -> None:
    with serve(APP, database) as server:
        staff = staff_member(server.port)
        assert staff.post("/agent/run", json_body={"tool": "add", "arguments": {"a": 1, "b": 2}}).json() \
            == {"outcome": "ran", "text": "3"}  # allowed by a rule: nobody is asked
        agent, ident = held_call(staff, "shout", {"text": "<b>hi</b>"})
        page = staff.get("/approvals").text
        assert 'Tool call on server &quot;demo-server&quot;: &quot;shout&quot; (destructive, open-world' in page
        assert "&lt;b&gt;hi&lt;/b&gt;" in page and "<b>hi" not in page
        assert staff.answer(ident, "yes").status_code == 302
        assert agent.result() == {"outcome": "ran", "text": "<B>HI</B>"}
        assert "Nothing waits." in staff.get("/approvals").text


def test_deny_refuses_the_call_and_a_late_answer_is_told_it_no_longer_waits(database: dict[str, str]) -> None:
    with serve(APP, database) as server:
        staff = staff_member(server.port)
        agent, ident = held_call(staff, "shout", {"text": "hi"})
        assert staff.answer(ident, "no").status_code == 302
        assert agent.result() == {"outcome": "denied", "reason": "not approved"}
        assert staff.answer(ident, "yes").status_code == 409


def test_nobody_answers_and_the_call_is_denied_at_the_approvals_timeout(database: dict[str, str]) -> None:
    with serve(APP, {**database, "APPROVAL_TIMEOUT": "1"}) as server:
        staff = staff_member(server.port)
        agent = Agent(staff, "shout", {"text": "hi"})
        assert agent.result() == {"outcome": "denied", "reason": "not approved"}

