"""Tool calls from an MCP Apps view go through the policy gate: the view's ``tools/call``
(mcpclient/plugins/apps/bridge.py) is refused with the gate's reason and never reaches the
official-SDK policy server (tests/servers/sdk_policy_server.py ``--apps``), which writes down
every call it gets; an allowed call and one a person approves run. In both eras."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient.apps import AppResult
from mcpclient.plugins.apps.bridge import DENIED, Bridge
from mcpclient.policy import ApprovalRequest, Policy, Rule

from tests.conftest import SERVERS
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

pytestmark = pytest.mark.timeout(60)

URI = "ui://files/view.html"
ERAS = {"legacy": "legacy", "modern": "2026-07-28"}


def reached(markers: Path) -> list[str]:
    log = markers / "calls.log"
    return log.read_text().split() if log.exists() else []


class View:
    """The host side of the view shown for ``files_view``; its requests' work runs when asked."""

    def __init__(self, client: mcpclient.Client) -> None:
        self.posted: list[dict[str, Any]] = []
        self.pending: list[Any] = []
        result = client.call_tool("files_view")
        assert isinstance(result, AppResult)
        host = result.call.host
        self.bridge = Bridge(host, host.tool("files_view"), {}, result, client.read_ui_resource(URI),
                             self.posted.append, lambda kind, text: None, run=self.pending.append)
        self.next_id = 0

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.bridge.receive({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                             "params": {"name": name, "arguments": arguments}})
        while self.pending:
            self.pending.pop(0)()
        [reply] = [m for m in self.posted if m.get("id") == self.next_id]
        return reply


@pytest.mark.parametrize("era", sorted(ERAS))
def test_a_views_tool_call_goes_through_the_gate(era: str, tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return request.arguments.get("content") == "ok"

    policy = Policy([Rule("allow", annotations={"readOnlyHint": True}, name="reads"),
                     Rule("deny", tool="delete_all", name="no deletes")], default="ask", approver=approver)
    command = [sys.executable, str(SERVERS / "sdk_policy_server.py"), "--apps", "--markers", str(tmp_path)]
    with mcpclient.connect(command,
                           plugins=mcpclient.Plugins(policy=policy, apps=True), protocol=ERAS[era], timeout=30) as client:
        view = View(client)
        denied = view.call("delete_all", {})
        assert denied["error"]["code"] == DENIED and "result" not in denied
        assert "refused by the policy" in denied["error"]["message"] and "no deletes" in denied["error"]["message"]
        refused = view.call("write_file", {"path": "p", "content": "no"})  # ask: the person says no
        assert refused["error"]["code"] == DENIED and "not approved" in refused["error"]["message"]
        approved = view.call("write_file", {"path": "p", "content": "ok"})
        assert approved["result"]["content"] == [{"type": "text", "text": "wrote 2 characters to p"}]
        read = view.call("read_file", {"path": "a"})
        assert read["result"]["content"] == [{"type": "text", "text": "read a"}]
    assert [(r.tool, r.rule) for r in asked] == [("write_file", "default")] * 2
    assert reached(tmp_path) == ["files_view", "write_file", "read_file"]
