"""The policy gate against a real server (official SDK): rules, approvers, every calling path."""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from pathlib import Path

import pytest

import mcpclient
from mcpclient import ClientGroup, Plugins, ToolCallDenied
from mcpclient.policy import MaxSize, OneOf, Policy, Rule, Under, WebApprovals, load_policy
from mcpclient.prompting import Prompter

from ..conftest import SERVERS
from ..helpers import RELEASED_WITHIN

POLICY_SERVER = [sys.executable, str(SERVERS / "sdk_policy_server.py")]


def counts(client: mcpclient.Client) -> dict[str, int]:
    """How many calls of each tool reached the server (the server counts them)."""
    result: dict[str, int] = json.loads(client.call_tool("calls").text)
    return result


def connect(policy: Policy, **options: object) -> mcpclient.Client:
    return mcpclient.connect(POLICY_SERVER,
                             plugins=mcpclient.Plugins(policy=policy), protocol="legacy", timeout=30, **options)


ALLOW_READS = Rule("allow", annotations={"readOnlyHint": True}, name="reads")


def test_a_denied_call_raises_and_never_reaches_the_server() -> None:
    with connect(Policy([ALLOW_READS, Rule("deny", tool="write_*", name="no writes")])) as client:
        with pytest.raises(ToolCallDenied) as caught:
            client.call_tool("write_file", {"path": "/tmp/x", "content": "hi"})
        assert caught.value.rule == "no writes" and caught.value.tool == "write_file"
        assert isinstance(caught.value, PermissionError)
        assert client.call_tool("read_file", {"path": "a"}).text == "read a"
        assert counts(client) == {"read_file": 1}


def test_annotations_are_read_with_the_spec_defaults() -> None:
    # delete_all has no annotations: destructive by default; write_file says so; fetch is read-only.
    policy = Policy([Rule("deny", annotations={"destructiveHint": True}), Rule("allow")])
    with connect(policy) as client:
        for tool, arguments in (("delete_all", {}), ("write_file", {"path": "p", "content": ""})):
            with pytest.raises(ToolCallDenied):
                client.call_tool(tool, arguments)
        client.call_tool("fetch", {"url": "http://127.0.0.1/"})
        assert counts(client) == {"fetch": 1}


def test_open_world_rule() -> None:
    with connect(Policy([Rule("deny", annotations={"openWorldHint": True}, tool="fetch"), Rule("allow")])) as client:
        with pytest.raises(ToolCallDenied):
            client.call_tool("fetch", {"url": "http://127.0.0.1/"})


def test_the_first_rule_that_matches_decides() -> None:
    policy = Policy([Rule("allow", tool="write_file"), Rule("deny", tool="write_*")], default="deny")
    with connect(policy) as client:
        client.call_tool("write_file", {"path": "p", "content": "x"})
        with pytest.raises(ToolCallDenied) as caught:
            client.call_tool("delete_all")
        assert caught.value.rule == "default"


def test_a_path_under_a_root_after_normalising(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir()
    outside = tmp_path / "secret"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    policy = Policy([ALLOW_READS, Rule("allow", tool="write_file", arguments=[Under("path", root)])], default="deny")
    with connect(policy) as client:
        client.call_tool("write_file", {"path": str(root / "a.txt"), "content": ""})
        client.call_tool("write_file", {"path": (root / "sub" / ".." / "b.txt").as_uri(), "content": ""})
        for path in (str(root / ".." / "secret" / "x"), str(root / "link" / "x"), "~/x", str(tmp_path / "database"),
                     str(root) + "\x00/x"):
            with pytest.raises(ToolCallDenied):
                client.call_tool("write_file", {"path": path, "content": ""})
        assert counts(client) == {"write_file": 2}


def test_a_value_in_a_set_and_a_size_limit() -> None:
    policy = Policy([ALLOW_READS, Rule("allow", tool="write_file",
                                       arguments=[OneOf("path", ["a", "b"]), MaxSize("content", 5)])], default="deny")
    with connect(policy) as client:
        client.call_tool("write_file", {"path": "a", "content": "12345"})
        with pytest.raises(ToolCallDenied):
            client.call_tool("write_file", {"path": "a", "content": "123456"})
        with pytest.raises(ToolCallDenied):
            client.call_tool("write_file", {"path": "c", "content": ""})
        assert counts(client) == {"write_file": 1}


def test_ask_without_an_approver_denies() -> None:
    with connect(Policy([ALLOW_READS], default="ask")) as client:
        with pytest.raises(ToolCallDenied, match="no approver"):
            client.call_tool("delete_all")


def test_the_approver_sees_inert_text_and_decides() -> None:
    seen = []

    def approver(request: mcpclient.policy.ApprovalRequest) -> bool:
        seen.append(request.lines())
        return request.arguments.get("content") == "ok"

    with connect(Policy([ALLOW_READS], approver=approver)) as client:
        client.call_tool("write_file", {"path": "p", "content": "ok"})
        with pytest.raises(ToolCallDenied, match="not approved"):
            client.call_tool("write_file", {"path": "p\x1b]52;c;x\u202e\nforged", "content": "no"})
        assert counts(client) == {"write_file": 1}
    shown = "\n".join(seen[1])
    assert "\x1b" not in shown and "\u202e" not in shown and "\\u001b" in shown and "\\u202e" in shown
    assert all("\n" not in line for line in seen[1])
    assert "destructive" in seen[1][0]


def test_the_terminal_approver_asks_and_takes_no_for_an_answer() -> None:
    answers = iter(["", "y"])
    written: list[str] = []
    prompter = Prompter(read=lambda prompt: next(answers), write=written.append)
    with connect(Policy([ALLOW_READS], approver=prompter.approve_tool)) as client:
        with pytest.raises(ToolCallDenied):
            client.call_tool("delete_all")
        client.call_tool("delete_all")
        assert counts(client) == {"delete_all": 1}
    assert any("delete_all" in line for line in written)


def test_web_approvals_are_answered_from_another_thread_or_denied_at_the_deadline() -> None:
    approvals = WebApprovals(timeout=1.0)
    with connect(Policy([ALLOW_READS], approver=approvals)) as client:
        def admin() -> None:
            while not approvals.pending():
                time.sleep(0.01)
            pending = approvals.pending()[0]
            assert any("write_file" in line for line in pending.lines)
            assert approvals.answer(pending.id, True)

        thread = threading.Thread(target=admin)
        thread.start()
        client.call_tool("write_file", {"path": "p", "content": ""})
        thread.join(5)
        started = time.monotonic()
        with pytest.raises(ToolCallDenied):
            client.call_tool("write_file", {"path": "p", "content": ""})
        assert time.monotonic() - started < RELEASED_WITHIN
        assert approvals.pending() == []
        assert counts(client) == {"write_file": 1}


def test_every_path_goes_through_the_gate() -> None:
    from mcpclient.integrations._core import bind
    from mcpclient.llm.openai import run_chat_tool_calls

    policy = Policy([ALLOW_READS, Rule("deny", tool="delete_all")])
    with connect(policy) as client:
        with pytest.raises(ToolCallDenied):
            client.request("tools/call", {"name": "delete_all", "arguments": {}})
        tool = next(t for t in mcpclient.tools(client) if t.name == "delete_all")
        with pytest.raises(ToolCallDenied):
            tool.execute("{}")
        # the LLM tool formats: a failed call the model reads
        [reply] = run_chat_tool_calls(client, {"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "delete_all", "arguments": "{}"}}]})
        assert "refused by the policy" in reply["content"]
        # the adapters' common core: a ToolError, which each adapter reports as a failed call
        bound = next(b for b in bind(client) if b.name == "delete_all")
        with pytest.raises(mcpclient.ToolError, match="refused by the policy"):
            bound.call({})
        assert counts(client) == {}
    with ClientGroup({"fs": POLICY_SERVER},
                     plugins=Plugins(policy=Policy([ALLOW_READS, Rule("deny", server="fs", tool="delete_all")])),
                     protocol="legacy") as group:
        with pytest.raises(ToolCallDenied) as caught:
            group.call_tool("fs__delete_all")
        assert caught.value.server == "fs"
        assert counts(group["fs"]) == {}


def test_in_a_langchain_agent_a_denied_call_is_a_failed_tool_call() -> None:
    pytest.importorskip("langchain_core")
    from mcpclient.integrations import langchain as mcp_langchain

    with connect(Policy([ALLOW_READS, Rule("deny", tool="delete_all")])) as client:
        tool = next(t for t in mcp_langchain.tools(client) if t.name == "delete_all")
        message = tool.invoke({"type": "tool_call", "name": "delete_all", "args": {}, "id": "c1"})
        assert message.status == "error" and "refused by the policy" in message.content
        assert counts(client) == {}


def test_a_server_rule_of_an_unbound_policy_never_allows_on_the_servers_word() -> None:
    policy = Policy([Rule("allow", server="policy-test-server"), Rule("deny", server="policy-test-server")],
                    default="allow")
    with connect(policy) as client:
        with pytest.raises(ToolCallDenied):  # the allow rule is skipped, the deny rule holds
            client.call_tool("delete_all")


def test_every_decision_is_logged_cleaned_and_audited(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    audit = tmp_path / "audit.jsonl"
    with caplog.at_level(logging.INFO, logger="mcpclient.policy"):
        with connect(Policy([ALLOW_READS, Rule("deny", tool="delete_all", name="no")], audit=audit)) as client:
            client.call_tool("read_file", {"path": "secret-value"})
            with pytest.raises(ToolCallDenied):
                client.call_tool("delete_all")
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(e["tool"], e["decision"], e["rule"]) for e in entries[:2]] == [("read_file", "allow", "reads"),
                                                                           ("delete_all", "deny", "no")]
    assert "secret-value" not in audit.read_text()
    assert oct(os.stat(audit).st_mode & 0o777) == "0o600"
    assert any("denied the call of \"delete_all\"" in r.getMessage() for r in caplog.records)


def test_the_policy_in_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"fs": {"command": POLICY_SERVER[0], "args": POLICY_SERVER[1:]}},
                                "policy": {"default": "deny", "audit": "audit.jsonl", "rules": [
                                    {"action": "allow", "annotations": {"readOnlyHint": True}},
                                    {"action": "allow", "server": "fs", "tool": "write_file",
                                     "arguments": {"path": {"in": ["ok"]}, "content": {"maxSize": 3}}}]}}))
    policy = load_policy(path)
    assert policy is not None and policy.audit == str(tmp_path / "audit.jsonl")
    with ClientGroup.from_config(path, plugins=Plugins(policy=policy), protocol="legacy") as group:
        group.call_tool("fs__write_file", {"path": "ok", "content": "abc"})
        with pytest.raises(ToolCallDenied):
            group.call_tool("fs__write_file", {"path": "ok", "content": "abcd"})
    assert (tmp_path / "audit.jsonl").exists()


def test_a_typo_in_the_config_policy_is_an_error() -> None:
    from mcpclient.config import ConfigError
    from mcpclient.plugins._policy_config import policy_from_dict

    with pytest.raises(ConfigError, match="tools"):
        policy_from_dict({"rules": [{"action": "allow", "tools": "read_*"}]})
    with pytest.raises(ConfigError, match="action"):
        policy_from_dict({"rules": [{"action": "permit"}]})


def test_a_project_policy_cannot_allow() -> None:
    from mcpclient.plugins._policy_config import policy_from_dict

    policy = policy_from_dict({"default": "allow", "audit": "/tmp/x", "rules": [{"action": "allow"},
                                                                               {"action": "deny", "tool": "x"}]},
                              allow_rules=False)
    assert [r.action for r in policy.rules] == ["deny"] and policy.default == "ask" and policy.audit is None


def test_the_gate_holds_in_the_2026_era() -> None:
    policy = Policy([ALLOW_READS, Rule("deny", tool="delete_all")])
    with mcpclient.connect(POLICY_SERVER,
                           plugins=mcpclient.Plugins(policy=policy), protocol="2026-07-28", timeout=30) as client:
        assert client.protocol_version == "2026-07-28"
        with pytest.raises(ToolCallDenied):
            client.call_tool("delete_all")
        assert counts(client) == {}


def test_the_policy_beside_the_servers_of_a_vscode_settings_file(tmp_path: Path) -> None:
    from mcpclient.config import ConfigError

    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"mcp": {"servers": {}, "policy": {"default": "deny"}}}))
    policy = load_policy(path)
    assert policy is not None and policy.default == "deny"
    path.write_text(json.dumps({"policy": {"default": "allow"}, "mcp": {"servers": {}, "policy": {"default": "deny"}}}))
    with pytest.raises(ConfigError, match="two policies"):
        load_policy(path)
