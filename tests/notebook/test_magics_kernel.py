"""``%mcp`` in a real IPython kernel, with this test as the front end.

The kernel is started by nbclient; the test speaks to it as JupyterLab does: cells on the
shell channel, the explorer widget's messages as comm messages (a trait set by the page is a
``method: update``, a button press a ``method: custom``), and its state read from the
``comm_msg`` updates the kernel sends. The server is the official SDK's
(tests/servers/sdk_explorer_server.py).
"""

from __future__ import annotations

import queue
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("anywidget")

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "servers" / "sdk_explorer_server.py"
WIDGET = "application/vnd.jupyter.widget-view+json"


class Kernel:
    """A kernel's client, as a front end: run cells, send widget messages, read widget state."""

    def __init__(self, kc):
        self.kc = kc
        self.state: dict = {}

    def run(self, code: str) -> tuple[dict, list[dict]]:
        """Run ``code``; its execute_reply and the iopub messages it caused."""
        msg_id = self.kc.execute(code)
        reply = self.kc.get_shell_msg(timeout=60)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=60)
        outputs = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=60)
            self._see(msg)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return reply["content"], outputs
            outputs.append(msg)

    def _see(self, msg: dict) -> None:
        content = msg["content"]
        if msg["msg_type"] == "comm_msg" and content["data"].get("method") == "update":
            self.state.setdefault(content["comm_id"], {}).update(content["data"]["state"])

    def send(self, comm_id: str, data: dict) -> None:
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))

    def press(self, comm_id: str, **content) -> None:
        self.send(comm_id, {"method": "custom", "content": content})

    def set(self, comm_id: str, **state) -> None:
        self.send(comm_id, {"method": "update", "state": state, "buffer_paths": []})

    def until(self, comm_id: str, condition, what: str, timeout: float = 60) -> dict:
        """Read the kernel's messages until the widget's state meets ``condition``."""
        deadline = time.monotonic() + timeout
        while not condition(self.state.get(comm_id, {})):
            assert time.monotonic() < deadline, f"{what}: state {self.state.get(comm_id)}"
            try:
                self._see(self.kc.get_iopub_msg(timeout=1))
            except queue.Empty:
                pass
        return self.state[comm_id]


@pytest.fixture
def kernel():
    notebook = nbformat.v4.new_notebook()
    client = nbclient.NotebookClient(notebook, timeout=60, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    with client.setup_kernel():
        kc = client.km.blocking_client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=60)
            k = Kernel(kc)
            reply, _ = k.run(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n%load_ext mcpclient.notebook")
            assert reply["status"] == "ok", reply
            yield k
        finally:
            kc.stop_channels()


def explore(kernel: Kernel, line: str) -> str:
    reply, outputs = kernel.run(line)
    assert reply["status"] == "ok", reply
    shown = [m["content"]["data"] for m in outputs if m["msg_type"] == "execute_result"]
    assert shown and WIDGET in shown[0], outputs
    return shown[0][WIDGET]["model_id"]


def test_explore_opens_the_server_binds_the_client_and_runs_the_form_through_the_widget(kernel):
    widget = explore(kernel, f"%mcp explore {sys.executable} {SERVER}")
    state = kernel.until(widget, lambda s: s.get("tools"), "the tool list")
    assert [t["name"] for t in state["tools"]][:4] == ["cities", "wait", "picture", "hostile"]
    reply, outputs = kernel.run("type(client).__name__")
    assert outputs[-1]["content"]["data"]["text/plain"] == "'Client'"

    kernel.set(widget, tool="cities")
    kernel.press(widget, kind="run", values={"region": "1", "limit": "2", "capitals_only": ""})
    state = kernel.until(widget, lambda s: s.get("status") == "done", "the run")
    assert "<th>name</th><th>country</th><th>population</th><th>capital</th>" in state["result_html"]
    assert "<td>Paris</td>" in state["result_html"] and "<td>Oslo</td>" in state["result_html"]

    kernel.press(widget, kind="run", values={"region": "", "limit": "99"})
    state = kernel.until(widget, lambda s: s.get("status") == "invalid", "the form's problems")
    assert state["problems"] == {"region": "required", "limit": "must be at most 10, got 99"}


def test_cancel_reaches_the_running_call_and_the_bar_moves_with_the_servers_progress(kernel):
    widget = explore(kernel, f"%mcp explore --as api {sys.executable} {SERVER}")
    kernel.set(widget, tool="wait")
    kernel.until(widget, lambda s: [f["name"] for f in s.get("fields", [])] == ["seconds", "steps"], "the form")
    kernel.press(widget, kind="run", values={"seconds": "120", "steps": "120"})
    state = kernel.until(widget, lambda s: s.get("message", "").startswith("step "), "a progress report")
    assert state["status"] == "running" and 0 < state["progress"] < 1
    kernel.press(widget, kind="cancel")
    kernel.until(widget, lambda s: s.get("status") == "cancelled", "the cancel")
    reply, outputs = kernel.run("api.call_tool('wait', {'seconds': 0.1, 'steps': 1}).text")
    assert outputs[-1]["content"]["data"]["text/plain"] == "'waited 1 steps'"  # the client lives on


def test_copy_as_code_then_mcp_code_inserts_the_call_as_the_next_cell_and_it_runs(kernel):
    widget = explore(kernel, f"%mcp explore {sys.executable} {SERVER}")
    kernel.until(widget, lambda s: s.get("tool") == "cities", "the first tool")
    kernel.press(widget, kind="code", values={"region": "2", "capitals_only": "y"})
    state = kernel.until(widget, lambda s: s.get("code"), "the code")
    expected = "result = client.call_tool('cities', {'region': 'asia', 'capitals_only': True})\nresult"
    assert state["code"] == expected
    reply, _ = kernel.run("%mcp code")
    assert reply["status"] == "ok"
    assert [(p["source"], p["text"], p["replace"]) for p in reply["payload"]] == [("set_next_input", expected, False)]
    reply, outputs = kernel.run(expected)
    html = outputs[-1]["content"]["data"]["text/html"]
    assert "Tokyo" in html and "Osaka" not in html


def test_a_name_of_yours_is_never_overwritten_and_close_unbinds_what_mcp_opened(kernel):
    kernel.run("client = 'mine'")
    reply, _ = kernel.run(f"%mcp explore {sys.executable} {SERVER}")
    assert reply["status"] == "error" and reply["ename"] == "UsageError"
    assert "already holds a value of yours" in reply["evalue"]
    explore(kernel, f"%mcp explore --as other {sys.executable} {SERVER}")
    kernel.run("%mcp close")
    reply, outputs = kernel.run("('other' in dir(), client)")
    assert outputs[-1]["content"]["data"]["text/plain"] == "(False, 'mine')"


def test_a_server_that_cannot_be_named_or_opened_is_a_usage_error(kernel):
    reply, _ = kernel.run("%mcp explore no-such-config-name")
    assert reply["ename"] == "UsageError" and "no server named 'no-such-config-name'" in reply["evalue"]
    reply, _ = kernel.run(f"%mcp explore {sys.executable} -c pass")
    assert reply["ename"] == "UsageError" and reply["evalue"].startswith("cannot open ")


def test_the_server_box_opens_what_is_typed_and_says_why_when_it_cannot(kernel):
    widget = explore(kernel, "%mcp explore")
    kernel.press(widget, kind="connect", target="no-such-config-name")
    state = kernel.until(widget, lambda s: s.get("status") == "error", "the refusal")
    assert "no server named 'no-such-config-name'" in state["message"]
    kernel.press(widget, kind="connect", target=f"{sys.executable} {SERVER}")
    state = kernel.until(widget, lambda s: s.get("tools"), "the tools of the typed server")
    assert state["server"] == "sdk-explorer-server 1.0.0" and state["status"] == "idle"
    reply, outputs = kernel.run("client.server_info.name")
    assert outputs[-1]["content"]["data"]["text/plain"] == "'sdk-explorer-server'"
