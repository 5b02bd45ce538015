"""The explorer's kernel side on an official-SDK server, with no front end (as in a script).

What the page sends is called directly (``run``, ``cancel``, ``copy_code``, setting ``tool``);
tests/notebook/test_magics_kernel.py sends the same as widget messages in a real kernel.
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

import pytest

import mcpclient
from mcpclient._core.text import is_clean

pytest.importorskip("anywidget")

from mcpclient.notebook import explorer  # noqa: E402

pytestmark = pytest.mark.timeout(120)

SERVER = [sys.executable, str(Path(__file__).resolve().parents[1] / "servers" / "sdk_explorer_server.py")]
ODD_NAME = "odd\u202eexe.txt\x1b]52;c;aGk=\x07\n')#"


@pytest.fixture
def client():
    with mcpclient.connect(SERVER, timeout=30) as opened:
        yield opened


def until(condition, what: str, timeout: float = 60.0):
    """Poll ``condition`` until true; a bound for a stuck test, not a measurement."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_tool_names_and_texts_reach_the_page_cleaned_and_the_copied_call_keeps_the_real_name(client):
    ui = explorer(client)
    names = [tool["name"] for tool in ui.tools]
    assert all(is_clean(name) for name in names) and "odd\\u202eexe.txt\\x1b]52;c;aGk=\\x07\\n')#" in names
    ui.tool = "hostile"
    assert all(is_clean(value) for spec in ui.fields for value in spec.values() if isinstance(value, str))
    # the page names the tool by its cleaned name; the call and the code use the server's
    ui.tool = "odd\\u202eexe.txt\\x1b]52;c;aGk=\\x07\\n')#"
    code = ui.copy_code({})
    assert ast.literal_eval(ast.parse(code).body[0].value.args[0]) == ODD_NAME
    assert is_clean(code.replace("\n", " "))
    assert ui.run({}) and ui.wait(30) and ui.result.text == "odd"


def test_a_second_run_while_one_runs_is_refused_and_cancel_ends_the_first(client):
    ui = explorer(client)
    ui.tool = "wait"
    assert ui.run({"seconds": "120", "steps": "120"})
    assert not ui.run({"seconds": "1"})
    until(lambda: ui.message.startswith("step "), "a progress report")
    ui.cancel()
    assert ui.wait(30) and ui.status == "cancelled"
    assert client.call_tool("wait", {"seconds": 0.1, "steps": 1}).text == "waited 1 steps"


def test_a_running_call_ends_when_the_client_closes(client):
    ui = explorer(client)
    ui.tool = "wait"
    assert ui.run({"seconds": "120", "steps": "120"})
    until(lambda: ui.message.startswith("step "), "a progress report")
    client.close()
    assert ui.wait(30) and ui.status == "error"
    assert isinstance(ui.error, mcpclient.MCPError)


def test_an_image_result_is_shown_inline(client):
    ui = explorer(client)
    ui.tool = "picture"
    assert ui.run({}) and ui.wait(30) and ui.status == "done"
    assert '<img src="data:image/png;base64,' in ui.result_html and ui.table is None
