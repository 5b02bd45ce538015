"""The explorer in a real JupyterLab, driven in Debian's chromium.

The notebook runs ``%mcp explore sdk_explorer_server.py`` (the official SDK's
tests/servers/sdk_explorer_server.py, copied beside the notebook).
The test fills the ``cities`` form (a drop-down, a number box), presses Run and reads the
table; presses "Copy as code" and runs ``%mcp code``, which puts the call in a new cell;
runs the ``wait`` tool and cancels it once the bar moves; and shows and runs the ``hostile``
tool, whose description, argument title and result carry script: it is on the page as text,
and nothing ran. JupyterLab and Chromium are started by the fixtures of
tests/apps/test_apps_browser.py; screenshots go to ``tmp/artifacts/apps`` (docs/explorer.png
is one of them).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.apps.test_apps_browser import ARTIFACTS
from tests.lab_browser import wait_until as wait
from tests.security.test_notebook_browser import AUDIT

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

pytestmark = [pytest.mark.node, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "servers" / "sdk_explorer_server.py"
# The lab's kernel imports this checkout (PYTHONPATH) and runs in the notebook's folder, where
# the server is copied: a script is opened with the kernel's Python, as on the command line.
CELLS = ["%load_ext mcpclient.notebook\n%mcp explore sdk_explorer_server.py", "%mcp code"]


def notebook(path: Path) -> None:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c}
                  for c in CELLS],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }))


def run_cell(driver, index: int) -> None:
    editors = wait(driver, lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, ".jp-Cell .cm-content")
                                      if e.is_displayed()][index:], 30, f"cell {index}")
    editors[0].click()
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()


def field(explorer, name: str):
    return explorer.find_element(By.CSS_SELECTOR, f'.mcpx-input[data-name="{name}"]')


def status(explorer) -> str:
    return explorer.find_element(By.CSS_SELECTOR, ".mcpx-status").get_attribute("data-state")


def test_the_explorer_fills_a_form_runs_a_tool_copies_the_call_cancels_and_keeps_server_text_inert(lab, browser):
    base, token, folder = lab
    notebook(folder / "explorer.ipynb")
    shutil.copy(SERVER, folder / SERVER.name)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.get(f"{base}/lab/tree/explorer.ipynb?token={token}")
    try:
        wait(browser, lambda d: any("Idle" in e.text for e in d.find_elements(
            By.CSS_SELECTOR, ".jp-StatusBar-Widget, .jp-StatusBar-TextItem")), 90, "kernel")
        wait(browser, lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, ".jp-Cell .cm-content")
                                 if e.is_displayed()], 30, "notebook")
        run_cell(browser, 0)
        explorer = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".mcpx"), 90, "the explorer")[0]
        tool = Select(explorer.find_element(By.CSS_SELECTOR, ".mcpx-tool"))
        odd = "odd\\u202eexe.txt\\x1b]52;c;aGk=\\x07\\n')#"  # the tool's name, its controls shown as escapes
        wait(browser, lambda d: [o.text for o in tool.options] == ["cities", "wait", "picture", "hostile", odd], 60, "tools")

        # the form of `cities`: an enum as a drop-down, a number box with its default shown
        wait(browser, lambda d: field(explorer, "region"), 30, "the form")
        assert [o.text for o in Select(field(explorer, "region")).options] == ["", "europe", "asia"]
        assert field(explorer, "limit").get_attribute("placeholder") == "default: 3"
        Select(field(explorer, "region")).select_by_visible_text("asia")
        field(explorer, "limit").send_keys("1")
        explorer.find_element(By.CSS_SELECTOR, ".mcpx-run").click()
        wait(browser, lambda d: status(explorer) == "done", 60, "the run")
        cells = [td.text for td in explorer.find_elements(By.CSS_SELECTOR, ".mcpx-result table td")]
        assert cells == ["Tokyo", "Japan", "14090000", "true"]
        explorer.find_element(By.XPATH, "./ancestor::div[contains(@class,'jp-CodeCell')]").screenshot(
            str(ARTIFACTS / "explorer.png"))

        # copy as code, then `%mcp code` puts it in a new cell below that one
        explorer.find_element(By.CSS_SELECTOR, ".mcpx-copy").click()
        code = "result = client.call_tool('cities', {'region': 'asia', 'limit': 1})\nresult"
        wait(browser, lambda d: explorer.find_element(By.CSS_SELECTOR, ".mcpx-code").text == code, 30, "the code")
        run_cell(browser, 1)
        wait(browser, lambda d: any("client.call_tool('cities'" in e.text for e in
                                    d.find_elements(By.CSS_SELECTOR, ".jp-Cell .cm-content")[2:]), 60, "the new cell")

        # a long call: the bar moves with the server's progress, Cancel ends it
        tool.select_by_visible_text("wait")
        wait(browser, lambda d: field(explorer, "seconds"), 30, "the wait form")
        field(explorer, "seconds").send_keys("120")
        field(explorer, "steps").send_keys("120")
        explorer.find_element(By.CSS_SELECTOR, ".mcpx-run").click()
        bar = explorer.find_element(By.CSS_SELECTOR, ".mcpx-progress")
        wait(browser, lambda d: status(explorer) == "running" and explorer.find_element(
            By.CSS_SELECTOR, ".mcpx-status").text.startswith("step "), 60, "a progress report")
        assert 0 < float(bar.get_attribute("value")) < 1
        explorer.find_element(By.CSS_SELECTOR, ".mcpx-cancel").click()
        wait(browser, lambda d: status(explorer) == "cancelled", 30, "the cancel")

        # a tool with controls in its name: the page names it by the cleaned text, the call is made
        tool.select_by_visible_text(odd)
        explorer.find_element(By.CSS_SELECTOR, ".mcpx-run").click()
        wait(browser, lambda d: status(explorer) == "done" and "odd" in explorer.find_element(
            By.CSS_SELECTOR, ".mcpx-result").text, 60, "the odd tool's run")

        # hostile server text: shown as text in the form and the result, nothing runs
        tool.select_by_visible_text("hostile")
        wait(browser, lambda d: field(explorer, "note"), 30, "the hostile form")
        about = explorer.find_element(By.CSS_SELECTOR, ".mcpx-tool-description").text
        assert about.startswith('Says hello <img src=x onerror="window.__mcpx_pwned=1"><script>')
        assert "Note <img src=x" in explorer.find_element(By.CSS_SELECTOR, ".mcpx-label").text
        field(explorer, "note").send_keys("<b>mine</b>")
        explorer.find_element(By.CSS_SELECTOR, ".mcpx-run").click()
        # (the status is "done" already, from the run before: the wait is for this run's table)
        cells = wait(browser, lambda d: status(explorer) == "done" and [
            td.text for td in explorer.find_elements(By.CSS_SELECTOR, ".mcpx-result table td")], 60, "the hostile run")
        assert cells[0].startswith("<img src=x onerror=") and cells[1] == "<b>mine</b>"
        browser.save_screenshot(str(ARTIFACTS / "explorer-notebook.png"))
        assert browser.execute_script("return window.__mcpx_pwned === undefined")
        assert browser.execute_script(AUDIT) == []
    except Exception:
        browser.switch_to.default_content()
        browser.save_screenshot(str(ARTIFACTS / "explorer-failure.png"))
        raise
