"""Issue 45, case 1: a policy approver's wait is the call's wait.

Against the official SDK's policy server: the time an approver takes comes out of the call's
timeout (approved at 3.6 s of a 4 s call, the call ends at 4 s, not 7.6 s), a call cancelled
with a plain ``threading.Event`` ends at the cancel (not at the approver's own 300 s), and the
terminal approver, blocked in ``input()`` at a terminal nobody types at, lets its call go at
the call's timeout, its cancel and ``close()``, a second call waiting for its turn too, and
its script then exits normally.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path

import pytest

import mcpclient
from mcpclient import RequestTimeout, ToolCallDenied
from mcpclient.policy import Policy, Rule, WebApprovals

from ..helpers import BackgroundCall, require_mcp_sdk, wait_for

require_mcp_sdk()

pytestmark = pytest.mark.timeout(120)

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, str(HERE.parent / "servers" / "sdk_policy_server.py"), "--slow"]
WRITE = {"path": "p", "content": ""}
#: How soon after its event a wait must end (the promise is about a second).
SOON = 2.0


def connect(approvals: WebApprovals) -> mcpclient.Client:
    policy = Policy([Rule("allow", annotations={"readOnlyHint": True})], default="ask", approver=approvals)
    return mcpclient.connect(SERVER, plugins=mcpclient.Plugins(policy=policy), protocol="legacy", timeout=30)


def test_an_approval_at_3_6_s_of_a_4_s_call_leaves_it_0_4_s() -> None:
    approvals = WebApprovals()  # its own limit is 300 s
    with connect(approvals) as client:
        client.list_tools()  # the gate knows the tool's hints: it asks at once, listing nothing
        started = time.monotonic()
        call = BackgroundCall(client, "slow", {"seconds": 30}, timeout=4)
        [pending] = wait_for(approvals.pending, timeout=3.5)
        wait_for(lambda: time.monotonic() >= started + 3.6, timeout=4)
        assert approvals.answer(pending.id, True)
        error = call.released_within(started + 4, SOON)  # before the fix: 7.6 s (4 s more after the yes)
        assert isinstance(error, RequestTimeout), error


def test_a_call_cancelled_with_a_plain_event_ends_while_its_approver_waits() -> None:
    approvals = WebApprovals()  # its own limit is 300 s
    with connect(approvals) as client:
        event = threading.Event()
        call = BackgroundCall(client, "write_file", WRITE, cancel=event)
        wait_for(approvals.pending, timeout=20)
        cancelled = time.monotonic()
        event.set()
        error = call.released_within(cancelled, SOON)  # before the fix: at the approver's 300 s
        assert isinstance(error, ToolCallDenied) and "cancelled" in error.reason, error
        wait_for(lambda: approvals.pending() == [], timeout=SOON)  # its approver's thread lets go too
        assert client.call_tool("calls").text == "{}"  # never sent


# -- the terminal approver, blocked in input() ------------------------------------------------


pexpect = pytest.importorskip("pexpect") if sys.platform != "win32" else None
ENDED = re.compile(r"ENDED (\w+) ([0-9.]+) (\w+)")


def run_at_a_silent_terminal(case: str) -> tuple[dict[str, tuple[float, str]], str]:
    """``approve_by_input.py case`` on a pseudo-terminal nobody types at: each call's end
    (seconds after its event, the error's name); it must then exit normally."""
    child = pexpect.spawn(sys.executable, [str(HERE / "approve_by_input.py"), case], encoding="utf-8",
                          timeout=60, dimensions=(50, 300))
    try:
        child.expect("DONE")  # before the fix: never (input() holds each call for ever)
        shown = child.before
        ended = {m.group(1): (float(m.group(2)), m.group(3)) for m in ENDED.finditer(shown)}
        child.expect(pexpect.EOF, timeout=20)
        shown += child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 0 and child.signalstatus is None, (child.exitstatus, child.signalstatus, shown)
    return ended, shown


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_terminal_approver_lets_its_call_go_at_its_timeout() -> None:
    ended, shown = run_at_a_silent_terminal("timeout")
    seconds, error = ended["timeout"]
    assert seconds < SOON and error == "ToolCallDenied", shown


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_terminal_approver_lets_its_call_go_at_a_plain_events_cancel() -> None:
    ended, shown = run_at_a_silent_terminal("cancel")
    seconds, error = ended["cancel"]
    assert seconds < SOON and error == "ToolCallDenied", shown


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_close_ends_the_call_asking_at_the_terminal_and_the_one_waiting_for_its_turn() -> None:
    ended, shown = run_at_a_silent_terminal("close")
    assert set(ended) == {"asking", "waiting"}, shown
    for seconds, error in ended.values():
        assert seconds < SOON and error in ("ToolCallDenied", "ClientClosedError")
