"""End to end: a real MCP Apps server's view in JupyterLab, driven in Debian's chromium.

JupyterLab runs on 127.0.0.1 with a fresh config; the notebook connects with ``apps=True`` to
``@modelcontextprotocol/server-basic-vanillajs`` (pinned in tests/node) and calls its
``get-time`` tool. The test sees the view show the tool's result, clicks the view's "Get
Server Time" button (a ``tools/call`` the kernel serves through the same Client) and sees
the new time; then a probe server's view fetches an origin its CSP does not declare, and the
fetch is blocked (the origin's server sees no request), and its call of a model-only tool
is refused. Last, the person clicks the probe view's full screen button (a gesture in the
view, with the page quiet for longer than an activation of its own lasts) and the view covers the page, is told of its new
display mode and size, and of JupyterLab's switch to the dark theme, and goes back inline
when the person presses the host's button; then the same for picture-in-picture, a box in the
page's lower right corner. The view runs in the host's proxy frame (``into_view`` enters
both). JupyterLab and Chromium start once per test process, for every browser test
(``tests/lab_browser.py``). Screenshots go to ``tmp/artifacts/apps`` (not committed).
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from pathlib import Path

import pytest

from tests.lab_browser import missing_for_browser, run_notebook, wait_until
from tests.node_tools import NODE22, NODE_MODULES

pytestmark = [pytest.mark.node, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
SERVER = NODE_MODULES / "@modelcontextprotocol" / "server-basic-vanillajs" / "dist" / "index.js"
PROBE = Path(__file__).with_name("probe_app_server.py")
ARTIFACTS = ROOT / "tmp" / "artifacts" / "apps"

missing = missing_for_browser()
if missing:
    pytest.skip("the MCP Apps browser test needs " + ", ".join(missing), allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


class Origin:
    """An HTTP server on 127.0.0.1 that counts the requests it gets (none should come)."""

    def __init__(self) -> None:
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def cells(undeclared: str) -> list[str]:
    return [
        "import sys, mcpclient\n"
        f"client = mcpclient.connect([{str(NODE22)!r}, {str(SERVER)!r}, '--stdio'], apps=True)\n"
        "client.call_tool('get-time')",
        f"probe = mcpclient.connect([sys.executable, {str(PROBE)!r}, {undeclared + '/probe'!r}, "
        "'https://declared.example'], apps=True)\n"
        "probe.call_tool('probe')",
    ]


wait = wait_until  # the other browser tests import it from here


def into_view(driver, frame):
    """Switch into the view's document: ``frame`` holds the host's proxy, whose one frame is the view."""
    driver.switch_to.frame(frame)
    driver.switch_to.frame(driver.find_element(By.ID, "view"))


#: How long the page must have seen no input of the host's before a click in a view counts as
#: the person's gesture there (``ACTIVATION_MS`` in the widget's front end), with a margin.
QUIET = 6.5


def quiet_since(moment):
    """Wait until ``QUIET`` seconds have passed since ``moment`` (``time.monotonic()`` of the
    test's last click or key press on the host page): a lower bound, which load only lengthens."""
    time.sleep(max(0.0, moment + QUIET - time.monotonic()))


def test_view_renders_calls_back_through_the_kernel_and_is_confined(lab, browser):
    origin = Origin()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        last_host_input = run_notebook(browser, lab, "apps.ipynb", cells(origin.url))

        frames = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output iframe[sandbox]"),
                      90, "the get-time view")
        frame = frames[0]
        assert "allow-same-origin" not in frame.get_attribute("sandbox")
        into_view(browser, frame)
        shown = wait(browser, lambda d: ISO_TIME.search(d.find_element(By.ID, "server-time").text), 60,
                     "the tool result in the view").group(0)
        browser.switch_to.default_content()
        output = browser.find_elements(By.CSS_SELECTOR, ".jp-Cell .jp-OutputArea")[0]
        output.screenshot(str(ARTIFACTS / "get-time-view.png"))

        time.sleep(1.1)  # the server's clock has second resolution in what the view shows
        into_view(browser, frame)
        browser.find_element(By.ID, "get-time-btn").click()
        wait(browser, lambda d: (m := ISO_TIME.search(d.find_element(By.ID, "server-time").text)) and m.group(0) != shown,
             30, "the view's own tools/call answered through the kernel")
        browser.switch_to.default_content()
        output.screenshot(str(ARTIFACTS / "get-time-after-click.png"))

        probe = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output iframe[sandbox]")[1:],
                     90, "the probe view")[0]
        # An activation the page held when the view was drawn (the key press that ran the cells)
        # is not the view's: the quiet time counts from then too.
        last_host_input = time.monotonic()
        into_view(browser, probe)
        text = wait(browser, lambda d: (t := d.find_element(By.ID, "probe").text) != "pending" and t, 30, "the probe")
        refused = wait(browser, lambda d: (t := d.find_element(By.ID, "secret").text) != "pending" and t, 30, "secret")
        browser.switch_to.default_content()
        browser.save_screenshot(str(ARTIFACTS / "notebook.png"))
        assert text.startswith("blocked"), text
        assert "connect-src" in text
        assert origin.hits == []
        assert refused == "refused -32000"
        display_mode_and_theme(browser, probe, last_host_input)
    except Exception:
        browser.switch_to.default_content()
        browser.save_screenshot(str(ARTIFACTS / "failure.png"))
        raise


def context_changes(driver):
    """What the probe view was told in ``ui/notifications/host-context-changed``, in order."""
    return json.loads(driver.find_element(By.ID, "context").text)


def display_mode_and_theme(browser, probe, last_host_input):
    quiet_since(last_host_input)  # a click in the view is then the person's gesture there
    into_view(browser, probe)
    assert wait(browser, lambda d: (t := d.find_element(By.ID, "modes").text) != "pending" and t, 30,
                "the host's display modes") == "inline fullscreen pip"
    browser.find_element(By.ID, "fullscreen").click()
    wait(browser, lambda d: d.find_element(By.ID, "mode").text == "fullscreen", 30, "full screen granted")
    told = wait(browser, lambda d: [c for c in context_changes(d) if "height" in c.get("containerDimensions", {})],
                30, "the fixed size of full screen")
    assert {"displayMode": "fullscreen"} in context_changes(browser)
    browser.switch_to.default_content()
    left, top, width, height, page_width, page_height = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return [r.left, r.top, r.width, r.height, window.innerWidth, window.innerHeight];", probe)
    assert (left, round(width)) == (0, page_width), (left, width, page_width)  # the whole page's width
    assert height > page_height * 0.8, (height, page_height)
    assert told[-1]["containerDimensions"] == {"width": round(width), "height": round(height)}
    browser.save_screenshot(str(ARTIFACTS / "probe-fullscreen.png"))

    browser.execute_script("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'});")
    wait(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-jp-theme-light") == "false",
         60, "JupyterLab's dark theme")
    into_view(browser, probe)
    wait(browser, lambda d: {"theme": "dark"} in context_changes(d), 30, "the theme switch told to the view")
    browser.switch_to.default_content()

    back = [b for b in browser.find_elements(By.CSS_SELECTOR, ".mcpclient-app-back") if b.is_displayed()]
    assert [b.text for b in back] == ["Exit full screen"]
    back[0].click()
    last_host_input = time.monotonic()
    into_view(browser, probe)
    last = wait(browser, lambda d: (c := context_changes(d)[-1]).get("displayMode") == "inline" and c, 30,
                "back inline")
    assert last["containerDimensions"]["maxHeight"] == 1200 and "height" not in last["containerDimensions"]
    browser.switch_to.default_content()
    assert probe.rect["width"] < browser.execute_script("return window.innerWidth")

    quiet_since(last_host_input)
    into_view(browser, probe)
    browser.find_element(By.ID, "pip").click()
    wait(browser, lambda d: d.find_element(By.ID, "mode").text == "pip", 30, "picture-in-picture granted")
    told = wait(browser, lambda d: (c := context_changes(d)[-1]).get("containerDimensions", {}).get("height") and c,
                30, "the fixed size of picture-in-picture")
    assert {"displayMode": "pip"} in context_changes(browser)
    browser.switch_to.default_content()
    right, bottom, width, height, page_width, page_height = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return [r.right, r.bottom, r.width, r.height, window.innerWidth, window.innerHeight];", probe)
    assert (round(right), round(width)) == (page_width - 16, 420), (right, width, page_width)  # the lower right corner
    assert page_height - 16 - 300 < bottom - height and round(bottom) == page_height - 16, (bottom, height, page_height)
    assert told["containerDimensions"] == {"width": 420, "height": round(height)}
    browser.save_screenshot(str(ARTIFACTS / "probe-pip.png"))
    back = [b for b in browser.find_elements(By.CSS_SELECTOR, ".mcpclient-app-back") if b.is_displayed()]
    assert [b.text for b in back] == ["Back into the notebook"]
    back[0].click()
    into_view(browser, probe)
    wait(browser, lambda d: context_changes(d)[-1].get("displayMode") == "inline", 30, "back inline from pip")
    browser.switch_to.default_content()
