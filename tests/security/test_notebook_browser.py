"""Server text in a real JupyterLab, in a real Chromium: nothing a hostile server sends runs.

The kernel connects to tests/security/hostile_notebook_server.py (the official SDK, stdio) and
displays everything of it a notebook user would look at: a ``text/markdown``, a ``text/html``
and two SVG resources, the tool list and one tool (descriptions and schema), a tool result
(text, an embedded Markdown resource, an SVG image), the resource and prompt lists, a prompt,
the server's name and the LLM-format tool lists. Every payload there, if it ran, would write
``pwned-<name>.txt`` through the Jupyter contents API and start a kernel through the kernels
API (see the server's docstring). The test asserts that no such file appears, that the
server still has its one kernel, that no payload noted itself in the page, and that the
rendered output holds no event handler, script-capable element or non-web URL, while the
server's text is on the page (as text). JupyterLab and Chromium are started by the
fixtures of tests/apps/test_apps_browser.py.
"""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest

from tests.apps.test_apps_browser import ARTIFACTS
from tests.lab_browser import run_notebook
from tests.lab_browser import wait_until as wait

from selenium.webdriver.common.by import By  # noqa: E402

pytestmark = [pytest.mark.node, pytest.mark.timeout(240)]

SERVER = Path(__file__).with_name("hostile_notebook_server.py")
SHOWN = ["markdown", "html", "tooldesc", "result", "embedded", "resdesc", "promptdesc", "prompt"]

CELL = f"""import sys, mcpclient
from IPython.display import display
from mcpclient.llm import anthropic, openai
%load_ext mcpclient.notebook
c = mcpclient.connect([sys.executable, {str(SERVER)!r}])
for uri in ["hostile://readme.md", "hostile://page.html", "hostile://text.svg", "hostile://blob.svg"]:
    display(c.read_resource(uri)[0])
display(c.list_tools())
display(c.list_tools()[0])
display(c.call_tool("hostile"))
display(c.list_resources())
display(c.list_prompts())
for part in c.get_prompt("hostile"):
    display(part)
display(c.server_info)
display(anthropic.tools(c))
display(openai.chat_tools(c))
print("ALL" + "SHOWN")
"""

# Everything in the output area that could run script or load a URL that is not web or data.
AUDIT = r"""
const bad = [];
const media = /^data:(image\/(png|jpeg|gif|webp|avif|bmp)|audio\/[a-z0-9.+-]+);base64,/i;
for (const out of document.querySelectorAll(".jp-OutputArea-output")) {
  for (const e of out.querySelectorAll("*")) {
    const tag = e.tagName.toLowerCase();
    if (["script", "iframe", "object", "embed", "svg", "math", "style", "form", "base", "link", "meta"].includes(tag))
      bad.push(tag);
    for (const a of e.attributes) {
      if (/^on|^data-commandlinker/i.test(a.name)) bad.push(tag + " " + a.name);
      if (["href", "xlink:href", "action", "formaction"].includes(a.name) && !/^(https?|mailto):/i.test(a.value.trim()))
        bad.push(tag + " " + a.name + "=" + a.value.slice(0, 40));
      if (["src", "srcset", "poster", "data"].includes(a.name) && !media.test(a.value.trim()))
        bad.push(tag + " " + a.name + "=" + a.value.slice(0, 40));
    }
  }
}
return bad;
"""


def api(base: str, token: str, path: str) -> object:
    request = urllib.request.Request(f"{base}{path}", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_hostile_server_text_runs_nothing_in_jupyterlab(lab, browser):
    base, token, folder = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        run_notebook(browser, lab, "hostile.ipynb", [CELL])
        wait(browser, lambda d: "ALLSHOWN" in d.find_element(By.CSS_SELECTOR, ".jp-OutputArea").text, 120,
             "the cell's outputs")
        kernels = api(base, token, "/api/kernels")
        time.sleep(3)  # an image error, a load or a toggle fires at once; give fetches time to land
        text = browser.find_element(By.CSS_SELECTOR, ".jp-OutputArea").text
        ran = browser.execute_script("return window.__mcp_ran || []")
        audit = browser.execute_script(AUDIT)
        browser.save_screenshot(str(ARTIFACTS / "hostile-notebook.png"))
        written = sorted(p.name for p in folder.glob("pwned-*"))
        assert written == [], f"server text wrote files through the Jupyter API: {written}"
        assert ran == [], f"server text ran in the page: {ran}"
        assert len(api(base, token, "/api/kernels")) == len(kernels) == 1, "server text started a kernel"
        assert audit == [], f"the output holds live markup: {audit[:20]}"
        for where in SHOWN:  # the server's text is there, shown as text
            assert f"end of {where}" in text, where
    except Exception:
        browser.switch_to.default_content()
        browser.save_screenshot(str(ARTIFACTS / "hostile-notebook-failure.png"))
        raise
