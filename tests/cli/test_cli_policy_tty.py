"""``mcpclient call`` on a real pseudo-terminal asks the person before a call the config file's
policy says to ask about: the official-SDK server's hostile tool (its name and description hold
terminal escapes and a forged "Allow this call? [y/N] y"), answered y and n at the prompt."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpclient.cli._main import EXIT_DENIED
from tests.servers.sdk_policy_server import HOSTILE_TOOL

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_policy_server.py"), "--hostile"]
#: The real prompt: at the start of a line (the forged one is inside the description's line).
PROMPT = re.compile(r"(?m)^Allow this call\? \[y/N\] ")

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX"),
              pytest.mark.timeout(120)]


def config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({
        "mcpServers": {"acme": {"command": SERVER[0], "args": SERVER[1:]}},
        "policy": {"default": "deny", "audit": str(tmp_path / "audit.jsonl"), "rules": [
            {"action": "ask", "tool": "wipe*", "name": "ask before wiping"}]}}))
    return path


def asked(tmp_path: Path) -> tuple[Any, str]:
    """``mcpclient call -c mcp.json acme TOOL`` on a pty, waiting at the real prompt; what it showed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    child = pexpect.spawn(sys.executable, ["-m", "mcpclient", "call", "-c", str(config(tmp_path)), "acme",
                                           HOSTILE_TOOL, "--protocol", "legacy", "--no-progress", "-t", "30"],
                          env=env, encoding="utf-8", timeout=30, cwd=str(ROOT), dimensions=(50, 400))
    child.expect(PROMPT)
    return child, child.before


def finish(child: Any) -> tuple[int, str]:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, child.before.replace("\r", "")


def audit(tmp_path: Path) -> list[tuple[str, str, str]]:
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    return [(e["server"], e["decision"], e["rule"]) for e in map(json.loads, lines)]


def test_the_prompt_names_the_server_and_shows_the_tool_with_its_escapes_inert(tmp_path: Path) -> None:
    child, shown = asked(tmp_path)
    try:
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
        lines = [line for line in shown.replace("\r", "").split("\n") if line.strip()]
        [head] = [line for line in lines if line.startswith("Tool call on server")]
        # the configured name the rules matched, and the tool's name with its escape shown, not obeyed
        assert head.startswith('Tool call on server "acme": "wipe\\u001b[8m" (destructive, open-world; '
                               "rule: ask before wiping)"), head
        [description] = [line for line in lines if line.lstrip().startswith("description:")]
        assert "Harmless." in description and "hidden" in description and "\\u001b[2J" in description
        assert all("description:" in line for line in lines if "[y/N]" in line or "(approved)" in line)
    finally:
        child.sendline("n")
        finish(child)


def test_y_at_the_prompt_runs_the_call(tmp_path: Path) -> None:
    child, _ = asked(tmp_path)
    child.sendline("y")
    status, out = finish(child)
    assert status == 0, out
    assert out.strip().splitlines()[-1] == "wiped"  # the server's own answer: the call reached it
    assert audit(tmp_path) == [("acme", "allow", "ask before wiping")]


def test_n_at_the_prompt_refuses_it_unsent_and_exits_8(tmp_path: Path) -> None:
    child, _ = asked(tmp_path)
    child.sendline("n")
    status, out = finish(child)
    assert status == EXIT_DENIED == 8, out
    assert "(denied)" in out and "wiped" not in out
    assert "mcpclient: denied: the call of tool 'wipe\\x1b[8m' was refused by the policy" in out
    assert "(ask before wiping: not approved); it was not sent" in out
    assert audit(tmp_path) == [("acme", "deny", "ask before wiping")]
