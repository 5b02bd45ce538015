"""The Django example of a call that waits for a person (examples/django_input.py) under gunicorn,
used by a person in a real browser (headless Chromium) against the official SDK server in both
eras: log in, open the page, read the server's form (its text inert), fill it in, send it, read
the result (issue #48).

2026-07-28: the form is answered after the server that showed it was stopped and another
started on the same port (a new worker process, a fresh client): the state in the session
resumes there. Legacy: the call is held in its worker; after a restart the answer gets "start
again" (409), never a hang.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.lab_browser import wait_until
from tests.web._approval_site import PASSWORD, django_database
from tests.web._servers import Gunicorn

pytest.importorskip("django")
pytest.importorskip("gunicorn")
pytestmark = pytest.mark.timeout(300)

APP = "django_input:application"
#: The server's message, with markup that must reach the page as text.
MESSAGE = "<b>Who</b> are you? <script>document.title='owned'</script>"


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return django_database(tmp_path_factory.mktemp("input"), "django_input.py", "INPUT_DB", user="ann")


@pytest.fixture
def sdk(request: pytest.FixtureRequest) -> Any:
    from tests.helpers import require_mcp_sdk
    from tests.http.conftest import start_sdk_server

    require_mcp_sdk()
    started: list[Any] = []

    def start(*args: str) -> Any:
        started.append(start_sdk_server("--transport", "streamable-http", *args))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def gunicorn(env: dict[str, str], workers: int, port: int | None = None) -> Gunicorn:
    served = Gunicorn(APP, "-w", str(workers), "-k", "gthread", "--threads", "4", env=env)
    if port is not None:  # the same origin as the one before: the browser's session goes on
        served.args[served.args.index(f"127.0.0.1:{served.port}")] = f"127.0.0.1:{port}"
        served.port = port
    return served


def log_in(browser: Any, base: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{base}/login")
    browser.find_element(By.NAME, "username").send_keys("ann")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form button").click()
    wait_until(browser, lambda d: "/login" not in d.current_url, 60, "the login")


def open_form(browser: Any, base: str) -> str:
    """Open the page that calls the tool; the form shown, checked inert; the worker's pid."""
    from urllib.parse import quote

    from selenium.webdriver.common.by import By

    browser.get(f"{base}/ask?message={quote(MESSAGE)}")
    legend = wait_until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "legend.message"), 60,
                        f"the form, on a page of {browser.page_source[-800:]!r}")[0]
    assert legend.text == MESSAGE  # the server's markup, shown as text
    assert legend.find_elements(By.CSS_SELECTOR, "b, script") == []
    assert browser.title == "The server asks"  # its script never ran
    labels = [label.text.strip() for label in browser.find_elements(By.CSS_SELECTOR, "label")]
    assert labels[0].startswith("Name") and labels[1].startswith("Age")
    return browser.find_element(By.ID, "worker").text


def fill_and_send(browser: Any, name: str, age: str) -> None:
    from selenium.webdriver.common.by import By

    field = browser.find_element(By.CSS_SELECTOR, "input[name$='.name']")
    field.send_keys(name)
    years = browser.find_element(By.CSS_SELECTOR, "input[name$='.age']")
    years.clear()
    years.send_keys(age)
    page = browser.find_element(By.ID, "answer")
    browser.find_element(By.CSS_SELECTOR, "button[value=accept]").click()
    wait_until(browser, staleness_of(page), 60, "the next page")  # never read the form page again


def staleness_of(element: Any) -> Any:
    from selenium.webdriver.support import expected_conditions

    return expected_conditions.staleness_of(element)


def shown(browser: Any) -> tuple[str, str]:
    """The result page: its result (or error) text and the worker's pid."""
    from selenium.webdriver.common.by import By

    found = wait_until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#result, #error"), 60, "the result")[0]
    return found.text, browser.find_element(By.ID, "worker").text


def test_a_modern_servers_form_is_answered_in_the_browser_and_resumed_by_another_process(
    browser: Any, database: dict[str, str], sdk: Any
) -> None:
    server = sdk()
    env = {**database, "MCP_TARGET": server.url}
    with gunicorn(env, workers=2) as first:
        base = f"http://127.0.0.1:{first.port}"
        log_in(browser, base)
        asked_by = open_form(browser, base)
        fill_and_send(browser, "<i>Ann</i>", "41")
        text, _ = shown(browser)
        assert text == 'accept {"age": 41, "name": "<i>Ann</i>"}'
        asked_by = open_form(browser, base)
    with gunicorn(env, workers=2, port=first.port):  # a new process: what the session keeps resumes there
        fill_and_send(browser, "Bo", "7")
        text, answered_by = shown(browser)
        assert text == 'accept {"age": 7, "name": "Bo"}'
        assert answered_by != asked_by


def test_a_form_answer_that_breaks_the_schema_is_shown_again(browser: Any, database: dict[str, str], sdk: Any) -> None:
    from selenium.webdriver.common.by import By

    server = sdk()
    with gunicorn({**database, "MCP_TARGET": server.url}, workers=1) as served:
        base = f"http://127.0.0.1:{served.port}"
        log_in(browser, base)
        open_form(browser, base)
        browser.execute_script("document.querySelector(\"input[name$='.name']\").removeAttribute('required')")
        fill_and_send(browser, "", "3")  # no name: the schema requires one
        error = wait_until(browser, lambda d: d.find_elements(By.ID, "error"), 60, "the error")[0]
        assert "name" in error.text
        fill_and_send(browser, "Cy", "3")
        assert shown(browser)[0] == 'accept {"age": 3, "name": "Cy"}'


def test_a_legacy_servers_form_is_answered_in_the_browser_in_the_same_process(
    browser: Any, database: dict[str, str], sdk: Any
) -> None:
    server = sdk("--legacy-only")
    env = {**database, "MCP_TARGET": server.url, "MCP_PROTOCOL": "legacy", "MCP_HOLD": "120"}
    with gunicorn(env, workers=1) as served:
        base = f"http://127.0.0.1:{served.port}"
        log_in(browser, base)
        asked_by = open_form(browser, base)
        fill_and_send(browser, "Ann", "41")
        text, answered_by = shown(browser)
        assert text == 'accept {"age": 41, "name": "Ann"}' and answered_by == asked_by
        open_form(browser, base)
    with gunicorn(env, workers=1, port=served.port):  # the held call died with its process
        fill_and_send(browser, "Bo", "7")
        text, _ = shown(browser)
        assert "another process" in text


def test_the_pages_are_guarded_like_the_other_examples(database: dict[str, str], sdk: Any) -> None:
    from tests.web._approval_site import REBOUND, Person

    server = sdk()
    with gunicorn({**database, "MCP_TARGET": server.url}, workers=1) as served:
        anonymous = Person(served.port)
        assert anonymous.get("/ask").status_code == 302  # to the login page: nothing was called
        assert Person(served.port, host=REBOUND).get("/login").status_code == 400  # another Host
        person = Person(served.port)
        person.get("/login")
        form = person.get("/login").text
        [token] = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
        assert person.post("/login", data={"username": "ann", "password": PASSWORD,
                                           "csrfmiddlewaretoken": token}, csrf=False).status_code == 302
        assert person.get("/ask").status_code == 200
        assert person.post("/answer", data={"action": "accept", "q.name": "x"}, csrf=False).status_code == 403
        assert person.post("/answer", data={"action": "decline"}).status_code == 200
        assert person.post("/answer", data={"action": "decline"}).status_code == 409  # nothing waits now
