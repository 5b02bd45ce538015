"""Two suspects of issue 44 about the policy gate, each proved and fixed:

* a ``tools/call`` whose ``name`` is not a string (or whose arguments are not an object) passed
  the gate unjudged, and a lenient server made a tool of it: ``["delete_all"]`` ran
  ``delete_all`` past a ``deny`` rule (tests/security/lenient_stdio.py, which resolves names as
  some hand-written servers do, records what ran);
* a call approved once under "ask" ran again unasked when re-sent with a ``requestState`` (or
  ``inputResponses``) key, the mark of a call's next round (the official SDK server counts).

An approval still covers the next rounds of its own call when the server asks for input
(2026-07-28, the SDK server's ``elicit``): the person is asked once.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import ToolCallDenied
from mcpclient.policy import ApprovalRequest, Policy, Rule
from mcpclient.types import ElicitationResult

from ..conftest import SDK_SERVER, SERVERS

pytestmark = pytest.mark.timeout(90)

LENIENT = [sys.executable, str(Path(__file__).with_name("lenient_stdio.py"))]
POLICY_SERVER = [sys.executable, str(SERVERS / "sdk_policy_server.py")]


def ran(record: Path) -> list[str]:
    return record.read_text().splitlines() if record.exists() else []


def test_a_call_the_gate_cannot_name_is_refused_unsent(tmp_path: Path) -> None:
    record = tmp_path / "ran.log"
    policy = Policy([Rule("deny", tool="delete_*", name="no deletes")], default="allow")
    with mcpclient.connect([*LENIENT, "--record", str(record)],
                           plugins=mcpclient.Plugins(policy=policy), timeout=30) as client:
        assert client.call_tool("read_file", {"path": "a"}).text == "ran read_file"  # the server runs calls
        for name in (["delete_all"], {"name": "delete_all"}, 7, None):
            with pytest.raises(ToolCallDenied) as caught:
                client.request("tools/call", {"name": name, "arguments": {}})
            assert caught.value.reason == "its name is not a string", name
        with pytest.raises(ToolCallDenied, match="its arguments are not an object"):
            client.request("tools/call", {"name": "read_file", "arguments": ["a"]})
        for name in ("Delete-All", "DELETE_ALL", " delete_all"):  # not listed: judged leniently
            with pytest.raises(ToolCallDenied) as caught:
                client.call_tool(name)
            assert caught.value.rule == "no deletes", name
    assert ran(record) == ['read_file {"path": "a"}']


class Approver:
    """Says yes to the first request only, and counts what it was asked."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []
        self._lock = threading.Lock()

    def __call__(self, request: ApprovalRequest) -> bool:
        with self._lock:
            self.asked.append(request)
            return len(self.asked) == 1


def counts(client: mcpclient.Client) -> dict[str, int]:
    result: dict[str, int] = json.loads(client.call_tool("calls").text)
    return result


@pytest.mark.parametrize("round_key", [{"requestState": "again"}, {"inputResponses": {}}])
def test_an_approval_is_not_replayed_by_a_next_round_key(round_key: dict[str, Any]) -> None:
    approver = Approver()
    policy = Policy([Rule("allow", annotations={"readOnlyHint": True})], default="ask", approver=approver)
    write = {"name": "write_file", "arguments": {"path": "p", "content": "x"}}
    with mcpclient.connect(POLICY_SERVER,
                           plugins=mcpclient.Plugins(policy=policy), protocol="legacy", timeout=30) as client:
        client.request("tools/call", write)
        with pytest.raises(ToolCallDenied, match="not approved"):
            client.request("tools/call", {**write, **round_key})
        assert len(approver.asked) == 2
        assert counts(client) == {"write_file": 1}


def test_an_approved_call_is_asked_once_through_its_rounds_of_input() -> None:
    approver = Approver()
    policy = Policy([], default="ask", approver=approver)
    with mcpclient.connect(SDK_SERVER,
                           plugins=mcpclient.Plugins(policy=policy), protocol="2026-07-28", timeout=30) as client:
        client.set_elicitation_handler(lambda request: ElicitationResult(action="accept", content={"name": "Ada"}))
        result = client.call_tool("elicit", {"message": "who?"})
    assert result.text == 'accept {"age": 30, "name": "Ada"}'  # the form's default filled in
    assert [request.tool for request in approver.asked] == ["elicit"]
