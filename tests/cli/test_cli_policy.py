"""``mcpclient call`` applies the config file's policy: the real CLI, in a child process,
against the official-SDK policy server (tests/servers/sdk_policy_server.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpclient.cli._main import EXIT_DENIED

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_policy_server.py")]

pytestmark = pytest.mark.timeout(120)


def config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({
        "mcpServers": {"fs": {"command": SERVER[0], "args": SERVER[1:]}},
        "policy": {"default": "deny", "audit": "audit.jsonl", "rules": [
            {"action": "ask", "tool": "fetch", "name": "ask to fetch"},
            {"action": "allow", "annotations": {"readOnlyHint": True}, "name": "reads"},
            {"action": "deny", "tool": "delete_*", "name": "no deletes"},
            {"action": "allow", "server": "fs", "tool": "write_file", "name": "fs writes"}]}}))
    return path


def cli(path: Path, *words: str) -> subprocess.CompletedProcess[str]:
    """``mcpclient call -c path WORDS``: no terminal, so nobody is there to approve."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "mcpclient", "call", "-c", str(path), *words,
                           "--protocol", "legacy", "--no-progress", "-t", "30"],
                          capture_output=True, text=True, env=env, cwd=str(ROOT), stdin=subprocess.DEVNULL,
                          timeout=90)


def audit(tmp_path: Path) -> list[tuple[str, str, str]]:
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    return [(e["tool"], e["decision"], e["rule"]) for e in map(json.loads, lines)]


def test_a_denied_tool_exits_7_with_the_rule_and_is_not_sent(tmp_path: Path) -> None:
    run = cli(config(tmp_path), "fs", "delete_all")
    assert run.returncode == EXIT_DENIED == 8, run.stderr
    assert "mcpclient: denied: the call of tool 'delete_all' was refused by the policy (no deletes" in run.stderr
    assert "it was not sent" in run.stderr and run.stdout == ""
    assert audit(tmp_path) == [("delete_all", "deny", "no deletes")]


def test_allowed_tools_run_and_server_rules_match_the_configured_name(tmp_path: Path) -> None:
    path = config(tmp_path)
    run = cli(path, "fs", "read_file", "path=a")
    assert (run.returncode, run.stdout.strip()) == (0, "read a"), run.stderr
    run = cli(path, "fs", "write_file", "path=p", "content=hi")
    assert (run.returncode, run.stdout.strip()) == (0, "wrote 2 characters to p"), run.stderr
    assert audit(tmp_path) == [("read_file", "allow", "reads"), ("write_file", "allow", "fs writes")]


def test_ask_without_a_terminal_is_denied(tmp_path: Path) -> None:
    run = cli(config(tmp_path), "fs", "fetch", "url=http://127.0.0.1/")
    assert run.returncode == EXIT_DENIED, run.stderr
    assert "ask to fetch" in run.stderr and "no approver" in run.stderr
