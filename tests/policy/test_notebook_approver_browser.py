"""End to end: the notebook approver in JupyterLab, driven in Debian's chromium. The cell calls
the official SDK server's destructive tool and blocks; the test sees the request shown inert
in the page (no element made of the caller's or the server's text) and clicks the real Allow
button, whose message the kernel takes on its subshell while the cell still runs; then a
second call is denied by the Deny button. The lab and browser fixtures are the MCP Apps test's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.apps.test_apps_browser import ARTIFACTS
from tests.lab_browser import wait_until as wait

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(ROOT / "tests" / "servers" / "sdk_policy_server.py")
HOSTILE = "<img id=injected src=x onerror=alert(2)><script>window.injected=1</script>"

pytestmark = [pytest.mark.timeout(240),
              pytest.mark.skipif(sys.platform == "win32", reason="the stdio server is POSIX-tested only")]

CELL = f"""
import sys
from mcpclient import connect
from mcpclient.policy import NotebookApprovals, Policy, Rule, ToolCallDenied
policy = Policy([Rule("allow", annotations={{"readOnlyHint": True}})], approver=NotebookApprovals(timeout=120))
client = connect([sys.executable, {SERVER!r}], policy=policy, protocol="legacy", timeout=150)
for content in ({HOSTILE!r}, "second"):
    try:
        print("OUTCOME ran:", client.call_tool("write_file", {{"path": "p", "content": content}}).text)
    except ToolCallDenied as exc:
        print("OUTCOME denied:", exc.reason)
print("COUNTS", client.call_tool("calls").text)
client.close()
"""


def write_notebook(path: Path) -> None:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": CELL}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }))


def buttons(driver: Any, label: str) -> list[Any]:
    return [b for b in driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea button")
            if b.text.strip() == label and b.is_enabled()]


def test_the_buttons_answer_the_blocked_cell_in_jupyterlab(lab: Any, browser: Any) -> None:
    base, token, folder = lab
    write_notebook(folder / "approve.ipynb")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.get(f"{base}/lab/tree/approve.ipynb?token={token}")
    try:
        wait(browser, lambda d: any("Idle" in e.text for e in d.find_elements(By.CSS_SELECTOR, ".jp-StatusBar-TextItem")),
             90, "kernel")
        editor = wait(browser, lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, ".jp-Cell .cm-content")
                                          if e.is_displayed()], 30, "notebook")[0]
        editor.click()
        ActionChains(browser).key_down(Keys.CONTROL).send_keys(Keys.ENTER).key_up(Keys.CONTROL).perform()

        allow = wait(browser, lambda d: buttons(d, "Allow"), 90, "the Allow button")[0]
        shown = browser.find_element(By.CSS_SELECTOR, ".jp-OutputArea .widget-html-content").text
        assert 'Tool call on server "policy-test-server": "write_file" (destructive' in shown
        assert "<img id=injected" in shown  # shown as text ...
        assert browser.find_elements(By.ID, "injected") == []  # ... never made an element
        assert browser.execute_script("return window.injected === undefined")
        browser.find_element(By.CSS_SELECTOR, ".jp-OutputArea").screenshot(str(ARTIFACTS / "approval-asked.png"))
        allow.click()

        wait(browser, lambda d: len(buttons(d, "Deny")) == 1 and "OUTCOME ran" in d.find_element(
            By.CSS_SELECTOR, ".jp-OutputArea").text, 60, "the first call ran, the second asks")
        buttons(browser, "Deny")[0].click()
        out = wait(browser, lambda d: (t := d.find_element(By.CSS_SELECTOR, ".jp-OutputArea").text) and "COUNTS" in t
                   and t, 60, "the cell finished")
        browser.find_element(By.CSS_SELECTOR, ".jp-OutputArea").screenshot(str(ARTIFACTS / "approval-answered.png"))
        assert "OUTCOME ran: wrote 74 characters to p" in out
        assert "OUTCOME denied: not approved" in out
        assert 'COUNTS {"write_file": 1}' in out
        assert out.count("allowed") == 1 and "denied" in out
    except Exception:
        browser.save_screenshot(str(ARTIFACTS / "approval-failure.png"))
        raise
