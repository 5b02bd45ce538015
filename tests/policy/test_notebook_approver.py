"""The notebook approver in a real Jupyter kernel: the cell blocks on a call of the official SDK
server's destructive tool while the test, playing the front end on the kernel's own channels,
sees the widgets open on IOPub and clicks a button through the widget comm, as JupyterLab's
ButtonView does (a ``comm_msg`` whose content is ``{"event": "click"}``)."""

from __future__ import annotations

import json
import queue
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("nbclient")
pytest.importorskip("nbformat")
ipykernel = pytest.importorskip("ipykernel")
pytest.importorskip("ipywidgets")

from tests.helpers import front_end_kernel  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(ROOT / "tests" / "servers" / "sdk_policy_server.py")
HOSTILE = "<script>alert(1)</script>\x1b[2J<img src=x onerror=alert(2)>"

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="the stdio server is POSIX-tested only"),
    pytest.mark.skipif(tuple(int(p) for p in ipykernel.__version__.split(".")[:2]) < (7, 3),
                       reason="the buttons take a click during a running cell from ipykernel 7.3"),
    pytest.mark.timeout(120),
]


def cell(timeout: float, call_timeout: float | None = None) -> str:
    limit = "" if call_timeout is None else f", timeout={call_timeout!r}"
    return f"""
import sys, json
sys.path.insert(0, {str(ROOT)!r})
import mcpclient
from mcpclient.policy import NotebookApprovals, Policy, Rule, ToolCallDenied
policy = Policy([Rule("allow", annotations={{"readOnlyHint": True}})], approver=NotebookApprovals(timeout={timeout!r}))
with mcpclient.connect([sys.executable, {SERVER!r}], policy=policy, protocol="legacy", timeout=30) as client:
    try:
        print("OUTCOME ran:", client.call_tool("write_file", {{"path": "p", "content": {HOSTILE!r}}}{limit}).text)
    except ToolCallDenied as exc:
        print("OUTCOME denied:", exc.reason)
    print("COUNTS", client.call_tool("calls").text)
"""


class FrontEnd:
    """The test's connection to the kernel: runs a cell, watches IOPub, clicks a button."""

    def __init__(self, kc: Any) -> None:
        self.kc = kc
        self.widgets: dict[str, dict[str, Any]] = {}  # comm id -> the widget's state
        self.text: list[str] = []

    def run(self, code: str, click: str | None) -> dict[str, Any]:
        """Run ``code``; click the button described ``click`` once it shows; the final IOPub state."""
        msg_id = self.kc.execute(code)
        clicked = click is None
        displayed = False  # a person can click once the buttons are on the page, not before
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
                self.widgets[content["comm_id"]] = dict(content["data"]["state"])
            elif kind == "comm_msg" and content["data"].get("method") == "update":
                self.widgets.setdefault(content["comm_id"], {}).update(content["data"]["state"])
            elif kind == "display_data" and "application/vnd.jupyter.widget-view+json" in content["data"]:
                displayed = True
            elif kind == "stream" and msg["parent_header"].get("msg_id") == msg_id:
                self.text.append(content["text"])
            elif kind == "error" and msg["parent_header"].get("msg_id") == msg_id:
                self.text.append("\n".join(content["traceback"]))
            elif (kind == "status" and msg["parent_header"].get("msg_id") == msg_id
                  and content["execution_state"] == "idle"):
                return self.kc.get_shell_msg(timeout=10)["content"]  # type: ignore[no-any-return]
            if not clicked and displayed and self.button(click) is not None:
                comm_id = self.button(click)
                self.kc.shell_channel.send(self.kc.session.msg(
                    "comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}))
                clicked = True
        raise AssertionError(f"the cell did not finish: {''.join(self.text)}")

    def button(self, description: str) -> str | None:
        for comm_id, state in self.widgets.items():
            if state.get("_model_name") == "ButtonModel" and state.get("description") == description:
                return comm_id
        return None

    def shown(self, model: str) -> list[dict[str, Any]]:
        return [state for state in self.widgets.values() if state.get("_model_name") == model]

    def outcome(self) -> tuple[str, dict[str, int]]:
        text = "".join(self.text)
        outcome = next(line for line in text.splitlines() if line.startswith("OUTCOME "))
        counts = next(line for line in text.splitlines() if line.startswith("COUNTS "))
        return outcome[len("OUTCOME "):], json.loads(counts[len("COUNTS "):])


@pytest.fixture(scope="module")
def kernel() -> Any:
    with front_end_kernel(ROOT) as kc:
        yield kc


def test_allow_clicked_lets_the_blocked_call_run(kernel: Any) -> None:
    front = FrontEnd(kernel)
    reply = front.run(cell(timeout=60), click="Allow")
    assert reply["status"] == "ok", front.text
    outcome, counts = front.outcome()
    assert outcome.startswith("ran: wrote ") and counts == {"write_file": 1}
    assert [label["value"] for label in front.shown("LabelModel")] == ["allowed"]
    assert all(button["disabled"] for button in front.shown("ButtonModel"))


def test_deny_clicked_refuses_the_call_and_it_never_reaches_the_server(kernel: Any) -> None:
    front = FrontEnd(kernel)
    reply = front.run(cell(timeout=60), click="Deny")
    assert reply["status"] == "ok", front.text
    assert front.outcome() == ("denied: not approved", {})
    assert [label["value"] for label in front.shown("LabelModel")] == ["denied"]


def test_nobody_clicks_and_the_call_is_denied_at_the_approvers_timeout(kernel: Any) -> None:
    front = FrontEnd(kernel)
    reply = front.run(cell(timeout=1), click=None)
    assert reply["status"] == "ok", front.text
    assert front.outcome() == ("denied: not approved", {})
    assert [label["value"] for label in front.shown("LabelModel")] == ["denied: nobody answered within 1 s"]


def test_the_calls_own_deadline_ends_the_wait(kernel: Any) -> None:
    front = FrontEnd(kernel)
    reply = front.run(cell(timeout=300, call_timeout=1.5), click=None)
    assert reply["status"] == "ok", front.text
    assert front.outcome() == ("denied: no answer came before the call's deadline", {})


def test_the_servers_and_the_callers_text_is_shown_sanitised(kernel: Any) -> None:
    front = FrontEnd(kernel)
    front.run(cell(timeout=60), click="Deny")
    [shown] = front.shown("HTMLModel")
    value = shown["value"]
    assert "Tool call on server" in value and "write_file" in value and "destructive" in value
    assert "<script" not in value and "<img" not in value and "&lt;img src=x onerror=alert(2)&gt;" in value
    assert "&lt;script&gt;" in value and "\x1b" not in value and "\\u001b[2J" in value


def request_to_approve() -> Any:
    from mcpclient.policy import ApprovalRequest

    return ApprovalRequest(server="fs", tool="write_file", arguments={"path": "p"}, annotations=None, rule="default")


def test_outside_a_kernel_the_call_is_denied_or_goes_to_the_fallback() -> None:
    from mcpclient.policy import NotebookApprovals

    assert NotebookApprovals()(request_to_approve()) is False  # no buttons can be shown, no fallback
    asked: list[str] = []
    approvals = NotebookApprovals(fallback=lambda request: asked.append(request.tool) is None)
    assert approvals(request_to_approve()) is True and asked == ["write_file"]


CLOSING_CELL = f"""
import sys, threading, time
sys.path.insert(0, {str(ROOT)!r})
import mcpclient
from mcpclient.policy import NotebookApprovals, Policy, Rule, ToolCallDenied
approvals = NotebookApprovals(timeout=300)
asked = threading.Event()
def approver(request):
    asked.set()
    return approvals(request)
client = mcpclient.connect([sys.executable, {SERVER!r}], protocol="legacy", timeout=30,
                           policy=Policy([], approver=approver))
def close_when_asked():
    asked.wait(30)
    global closed
    closed = time.monotonic()
    client.close()
threading.Thread(target=close_when_asked, daemon=True).start()
try:
    client.call_tool("write_file", {{"path": "p", "content": ""}})
except (ToolCallDenied, mcpclient.ClientClosedError) as exc:
    print("OUTCOME", type(exc).__name__, getattr(exc, "reason", ""))
print("ENDED AFTER CLOSE", time.monotonic() - closed < 3)
"""


def test_the_clients_close_ends_the_wait_at_once(kernel: Any) -> None:
    front = FrontEnd(kernel)
    reply = front.run(CLOSING_CELL, click=None)
    assert reply["status"] == "ok", front.text
    text = "".join(front.text)
    assert "OUTCOME ToolCallDenied the client closed before an answer came" in text, text
    assert "ENDED AFTER CLOSE True" in text
