"""One JupyterLab and one headless Chromium for the browser tests (a pytest plugin, loaded by
tests/conftest.py).

Each costs seconds to start and to stop, so a test process starts each once, when its first
browser test asks, and every browser test gets them clean: ``lab`` ends the kernels and
sessions the test left, forgets the workspace (the open notebooks) and the settings it
changed (the theme); ``browser`` goes back to a blank page with one window. Each test writes
its own notebook (its own name) in the lab's folder.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.helpers import end_process, free_port, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: A host name Chromium resolves to 127.0.0.1: an origin a view may declare (a literal
#: loopback address is dropped from a view's declared domains).
DECLARABLE = "declared.test"
#: The settings the lab starts with; what a test changes (the theme) is dropped after it.
_SETTINGS = {("@jupyterlab", "apputils-extension", "notification"): {"fetchNews": "false", "checkForUpdates": False}}


def missing_for_browser() -> list[str]:
    """What the browser tests need and this machine lacks (empty: they can run)."""
    from tests.node_tools import NODE22, NODE_MODULES

    server = NODE_MODULES / "@modelcontextprotocol" / "server-basic-vanillajs" / "dist" / "index.js"
    missing = [what for what, ok in (
        ("Debian's chromium", os.path.exists(CHROMIUM)),
        ("chromedriver (chromium-driver)", os.path.exists(CHROMEDRIVER)),
        ("Node 22 and the npm test servers", NODE22.exists() and server.exists()),
    ) if not ok]
    for module in ("jupyterlab", "anywidget", "selenium"):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"the Python package {module}")
    return missing


class Lab:
    """A running JupyterLab: its URL, token, folder (its root) and settings folder."""

    def __init__(self, base: str, token: str, folder: Path, proc: subprocess.Popen[bytes]) -> None:
        self.base, self.token, self.folder, self.proc = base, token, folder, proc
        self.settings = folder / "settings"

    def api(self, method: str, path: str) -> Any:
        request = urllib.request.Request(f"{self.base}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as reply:  # loopback only
            body = reply.read()
        return json.loads(body) if body else None

    def write_settings(self) -> None:
        if self.settings.exists():
            shutil.rmtree(self.settings)
        for (scope, plugin, name), values in _SETTINGS.items():
            path = self.settings / scope / plugin / f"{name}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))

    def reset(self) -> None:
        """End what a test left: its sessions and kernels (and so their MCP servers), the
        workspace that would reopen its notebook, the settings it changed."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")
        for kernel in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{kernel['id']}")
        for workspace in self.api("GET", "/lab/api/workspaces").get("workspaces", {}).get("ids", []):
            self.api("DELETE", f"/lab/api/workspaces/{workspace}")
        self.write_settings()


def require_browser() -> None:
    missing = missing_for_browser()
    if missing:
        pytest.skip("the browser tests need " + ", ".join(missing))


@pytest.fixture(scope="session")
def _jupyter_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    require_browser()
    folder = tmp_path_factory.mktemp("lab")
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(folder / "config"),
           "JUPYTER_RUNTIME_DIR": str(folder / "runtime"), "JUPYTER_DATA_DIR": str(folder / "data"),
           "IPYTHONDIR": str(folder / "ipython")}
    # The kernel is the one next to the server's Python (data dir isolated, so list it here).
    kernels = folder / "data" / "kernels" / "python3"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    # JupyterLab's own extensions (widgets, anywidget) stay findable from the venv's data dir.
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    log = open(folder / "lab.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None",
         "--ServerApp.port_retries=0", "--allow-root", "--LabApp.extension_manager=readonly",
         "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to switch the theme
         f"--LabApp.user_settings_dir={folder / 'settings'}", f"--LabApp.workspaces_dir={folder / 'ws'}"],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=folder,
    )
    lab = Lab(f"http://127.0.0.1:{port}", token, folder, proc)
    lab.write_settings()
    try:
        wait_for_port(port, timeout=60, process=proc, log=folder / "lab.log")
        yield lab
    finally:
        end_process(proc)
        log.close()


@pytest.fixture
def lab(_jupyter_lab: Lab) -> Iterator[tuple[str, str, Path]]:
    """The lab's URL, token and folder (where the test writes its notebook), clean after."""
    yield _jupyter_lab.base, _jupyter_lab.token, _jupyter_lab.folder
    _jupyter_lab.reset()


@pytest.fixture(scope="session")
def _chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}", "--window-size=1200,1000",
                 f"--host-resolver-rules=MAP {DECLARABLE} 127.0.0.1"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(_chromium: Any) -> Iterator[Any]:
    """The headless Chromium, on a blank page with one window after the test."""
    yield _chromium
    first, *others = _chromium.window_handles
    for handle in others:
        _chromium.switch_to.window(handle)
        _chromium.close()
    _chromium.switch_to.window(first)
    _chromium.get("about:blank")


def wait_until(driver: Any, condition: Any, timeout: float = 60.0, what: str = "") -> Any:
    """Selenium's wait for ``condition(driver)`` to be truthy; its value."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2).until(lambda d: condition(d), message=what)


def run_notebook(driver: Any, lab: tuple[str, str, Path], name: str, cells: list[str]) -> float:
    """Write the notebook ``name`` of ``cells`` into the lab's folder, open it, wait for its
    kernel and run every cell (Shift+Enter each); the ``time.monotonic()`` of that key press,
    the test's last input on the page."""
    import time

    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    base, token, folder = lab
    (folder / name).write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": cell}
                  for cell in cells],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }))
    driver.switch_to.default_content()
    driver.get(f"{base}/lab/tree/{name}?token={token}")
    wait_until(driver, lambda d: any("Idle" in e.text for e in d.find_elements(
        By.CSS_SELECTOR, ".jp-StatusBar-Widget, .jp-StatusBar-TextItem")), 90, "kernel")
    editor = wait_until(driver, lambda d: [e for e in d.find_elements(By.CSS_SELECTOR, ".jp-Cell .cm-content")
                                           if e.is_displayed()], 30, "notebook")[0]
    editor.click()
    keys = ActionChains(driver).key_down(Keys.SHIFT)
    for _ in cells:
        keys = keys.send_keys(Keys.ENTER)
    keys.key_up(Keys.SHIFT).perform()
    return time.monotonic()
