"""An MCP Apps view's Content Security Policy holds whatever its document starts with (real Chromium).

tests/security/hostile_app_server.py serves one view per trick (``PREFIXES``): blanks that a
regex's ``\\s`` takes for blanks and HTML does not (U+00A0, U+001C, U+3000, U+0085), a BOM,
a comment, a title, text or a body before anything else, a legacy doctype, a looser policy
of the view's own. Each view fetches an origin it did not declare; in JupyterLab, in
Chromium, every such fetch is blocked and the origin sees no request. The control view
declares an origin (a name Chromium maps to 127.0.0.1) and reaches it, so a blocked fetch
is the policy's doing, not a broken view. (With the ``<meta>`` left out, the iframe's ``csp``
attribute alone blocks every one of these fetches in Chromium too; measured, not asserted.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.apps.test_apps_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    DECLARABLE,
    Origin,
    browser,
    lab,
    wait,
)

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

pytestmark = [pytest.mark.node, pytest.mark.timeout(240)]

SERVER = Path(__file__).with_name("hostile_app_server.py")
NAMES = ["nbsp", "x1c", "ideographic", "nel", "bom", "comment", "title", "text", "body", "legacy",
         "own-policy", "declared"]


def notebook(path: Path, undeclared: str, declared: str) -> None:
    cell = (
        "import sys, mcpclient\nfrom IPython.display import display\n"
        f"views = mcpclient.connect([sys.executable, {str(SERVER)!r}, {undeclared!r}, {declared!r}], apps=True)\n"
        f"for name in {NAMES!r}:\n    display(views.call_tool('view-' + name))\n"
    )
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": cell}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }))


def test_no_view_document_moves_its_policy_out_of_force(lab, browser):  # noqa: F811 (fixtures)
    base, token, folder = lab
    origin = Origin()
    declared = origin.url.replace("127.0.0.1", DECLARABLE)
    notebook(folder / "views.ipynb", origin.url, declared)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.get(f"{base}/lab/tree/views.ipynb?token={token}")
    try:
        wait(browser, lambda d: any("Idle" in e.text for e in d.find_elements(
            By.CSS_SELECTOR, ".jp-StatusBar-Widget, .jp-StatusBar-TextItem")), 90, "kernel")
        editor = wait(browser, lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, ".jp-Cell .cm-content")
                                          if e.is_displayed()], 30, "notebook")[0]
        editor.click()
        ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
        frames = wait(browser, lambda d: f if len(f := d.find_elements(
            By.CSS_SELECTOR, ".jp-OutputArea-output iframe[sandbox]")) == len(NAMES) else None, 120, "every view")
        seen = {}
        for frame in frames:
            assert (frame.get_attribute("csp") or "").startswith("default-src 'none'; ")  # Chromium's second copy
            browser.switch_to.frame(frame)
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
