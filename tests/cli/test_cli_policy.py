"""``mcpclient call`` applies the config file's policy: the real CLI, in a child process,
against the official-SDK policy server (tests/servers/sdk_policy_server.py), which writes each
call it gets to ``calls.log`` (``--markers``): a refused call is seen never to arrive."""

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


POLICY = {"default": "deny", "audit": "audit.jsonl", "rules": [
    {"action": "ask", "tool": "fetch", "name": "ask to fetch"},
    {"action": "allow", "annotations": {"readOnlyHint": True}, "name": "reads"},
    {"action": "deny", "tool": "delete_*", "name": "no deletes"},
    {"action": "allow", "server": "fs", "tool": "write_file", "name": "fs writes"}]}


def server(tmp_path: Path) -> dict[str, object]:
    return {"command": SERVER[0], "args": [*SERVER[1:], "--markers", str(tmp_path)]}


def config(tmp_path: Path, name: str = "mcp.json", policy: object = POLICY) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"mcpServers": {"fs": server(tmp_path)}, "policy": policy}))
    return path


def cli(path: Path | None, *words: str, cwd: Path = ROOT, command: tuple[str, ...] = (),
        **env: str) -> subprocess.CompletedProcess[str]:
    """``mcpclient call -c path WORDS [-- COMMAND]``: no terminal, so nobody is there to approve."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **env}
    config_words = ["-c", str(path)] if path is not None else []
    server_words = ["--", *command] if command else []
    return subprocess.run([sys.executable, "-m", "mcpclient", "call", *config_words, *words,
                           "--protocol", "legacy", "--no-progress", "-t", "30", *server_words],
                          capture_output=True, text=True, env=environ, cwd=str(cwd), stdin=subprocess.DEVNULL,
                          timeout=90)


def reached(tmp_path: Path) -> list[str]:
    """The calls that reached a server of this test, as the server wrote them down."""
    log = tmp_path / "calls.log"
    return log.read_text().split() if log.exists() else []


def audit(tmp_path: Path) -> list[tuple[str, str, str]]:
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    return [(e["tool"], e["decision"], e["rule"]) for e in map(json.loads, lines)]


def test_a_denied_tool_exits_7_with_the_rule_and_is_not_sent(tmp_path: Path) -> None:
    run = cli(config(tmp_path), "fs", "delete_all")
    assert run.returncode == EXIT_DENIED == 8, run.stderr
    assert "mcpclient: denied: the call of tool 'delete_all' was refused by the policy (no deletes" in run.stderr
    assert "it was not sent" in run.stderr and run.stdout == ""
    assert audit(tmp_path) == [("delete_all", "deny", "no deletes")]
    assert reached(tmp_path) == []


def test_allowed_tools_run_and_server_rules_match_the_configured_name(tmp_path: Path) -> None:
    path = config(tmp_path)
    run = cli(path, "fs", "read_file", "path=a")
    assert (run.returncode, run.stdout.strip()) == (0, "read a"), run.stderr
    run = cli(path, "fs", "write_file", "path=p", "content=hi")
    assert (run.returncode, run.stdout.strip()) == (0, "wrote 2 characters to p"), run.stderr
    assert audit(tmp_path) == [("read_file", "allow", "reads"), ("write_file", "allow", "fs writes")]
    assert reached(tmp_path) == ["read_file", "write_file"]


def test_ask_without_a_terminal_is_denied(tmp_path: Path) -> None:
    run = cli(config(tmp_path), "fs", "fetch", "url=http://127.0.0.1/")
    assert run.returncode == EXIT_DENIED, run.stderr
    assert "ask to fetch" in run.stderr and "no approver" in run.stderr
    assert reached(tmp_path) == []


def test_a_server_given_after_dashes_gets_the_config_files_policy(tmp_path: Path) -> None:
    # An unnamed server: the rules without a server condition hold; "fs writes" names fs, so
    # write_file falls to the default (deny).
    path = config(tmp_path)
    command = (*SERVER, "--markers", str(tmp_path))
    run = cli(path, "delete_all", command=command)
    assert run.returncode == EXIT_DENIED and "no deletes" in run.stderr, run.stderr
    run = cli(path, "write_file", "path=p", "content=x", command=command)
    assert run.returncode == EXIT_DENIED and "(default: denied by the rule)" in run.stderr, run.stderr
    run = cli(path, "read_file", "path=a", command=command)
    assert (run.returncode, run.stdout.strip()) == (0, "read a"), run.stderr
    assert reached(tmp_path) == ["read_file"]


def test_the_policy_of_the_usual_files_applies_without_dash_c(tmp_path: Path) -> None:
    path = config(tmp_path, "servers.json")
    run = cli(None, "fs", "delete_all", MCPCLIENT_CONFIG=str(path))
    assert run.returncode == EXIT_DENIED and "no deletes" in run.stderr, run.stderr
    assert reached(tmp_path) == []


def test_the_policy_beside_the_servers_of_a_vscode_settings_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"editor.fontSize": 12, "mcp": {"servers": {"fs": server(tmp_path)},
                                                               "policy": POLICY}}))
    run = cli(path, "fs", "delete_all")
    assert run.returncode == EXIT_DENIED and "no deletes" in run.stderr, run.stderr
    assert audit(tmp_path) == [("delete_all", "deny", "no deletes")]
    assert reached(tmp_path) == []


def test_a_policy_with_a_typo_stops_the_call_before_the_server_starts(tmp_path: Path) -> None:
    path = config(tmp_path, policy={"rules": [{"action": "deny", "tools": "delete_*"}]})
    run = cli(path, "fs", "delete_all")
    assert run.returncode == 2 and "tools" in run.stderr and "policy" in run.stderr, run.stderr
    assert reached(tmp_path) == [] and not (tmp_path / "calls.log").exists()


def test_a_project_files_policy_can_deny_but_not_allow(tmp_path: Path) -> None:
    # The servers are the user's (MCPCLIENT_CONFIG, outside the project), the policy the
    # checkout's (./mcp.json): its deny rule holds, its allow rule and default are dropped.
    user = tmp_path / "user"
    user.mkdir()
    servers = user / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"fs": server(tmp_path)}}))
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "mcp.json").write_text(json.dumps({"mcpServers": {}, "policy": {"default": "allow", "rules": [
        {"action": "allow", "tool": "write_file", "name": "project allows writes"},
        {"action": "deny", "tool": "delete_all", "name": "project denies deletes"}]}}))
    run = cli(None, "fs", "delete_all", cwd=checkout, MCPCLIENT_CONFIG=str(servers))
    assert run.returncode == EXIT_DENIED and "project denies deletes" in run.stderr, run.stderr
    run = cli(None, "fs", "write_file", "path=p", "content=x", cwd=checkout, MCPCLIENT_CONFIG=str(servers))
    assert run.returncode == EXIT_DENIED and "no approver" in run.stderr, run.stderr  # ask, not allow
    assert reached(tmp_path) == []


def test_a_servers_own_files_policy_applies_not_another_files(tmp_path: Path) -> None:
    # Two files of the user's: MCPCLIENT_CONFIG's (read first) allows everything, and the
    # Cursor file that defines fs denies its deletes. fs's calls are judged by the policy
    # written beside it.
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"fs": server(tmp_path)}, "policy": {
        "default": "allow", "rules": [{"action": "deny", "tool": "delete_*", "name": "fs: no deletes"}]}}))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"mcpServers": {"other": server(tmp_path)}, "policy": {"default": "allow"}}))
    run = cli(None, "fs", "delete_all", HOME=str(home), MCPCLIENT_CONFIG=str(other))
    assert run.returncode == EXIT_DENIED and "fs: no deletes" in run.stderr, (run.stdout, run.stderr)
    run = cli(None, "other", "delete_all", HOME=str(home), MCPCLIENT_CONFIG=str(other))
    assert (run.returncode, run.stdout.strip()) == (0, "deleted"), run.stderr
    assert reached(tmp_path) == ["delete_all"]  # other's, allowed by its own file
