"""The terminal approver through a real pseudo-terminal: a person answers y or n to a call of
a real SDK server's tool whose name and description are out to fool them (escapes that clear
the screen and hide text, a forged "Allow this call? [y/N] y")."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[2]
CHILD = str(Path(__file__).resolve().parent / "approve_at_terminal.py")
#: The real prompt: at the start of a line (the forged one is inside the description's line).
PROMPT = re.compile(r"(?m)^Allow this call\? \[y/N\] ")

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX"),
              pytest.mark.timeout(90)]


def asked() -> tuple[object, str]:
    """The child, started on a pty and waiting at the real prompt, and all it showed before."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    child = pexpect.spawn(sys.executable, [CHILD], env=env, encoding="utf-8", timeout=30, cwd=str(ROOT),
                          dimensions=(50, 400))
    child.expect(PROMPT)
    return child, child.before


def finish(child: object) -> tuple[str, dict[str, int]]:
    child.expect(r"OUTCOME ([^\r\n]*)\r?\n")  # type: ignore[attr-defined]
    outcome = child.match.group(1)  # type: ignore[attr-defined]
    child.expect(r"COUNTS ([^\r\n]*)\r?\n")  # type: ignore[attr-defined]
    counts = json.loads(child.match.group(1))  # type: ignore[attr-defined]
    child.expect(pexpect.EOF)  # type: ignore[attr-defined]
    child.close()  # type: ignore[attr-defined]
    assert child.exitstatus == 0  # type: ignore[attr-defined]
    return outcome, counts


def test_the_prompt_shows_the_servers_text_inert() -> None:
    child, shown = asked()
    try:
        assert "\x1b" not in shown and "\x9b" not in shown and "\x07" not in shown
        lines = [line for line in shown.replace("\r", "").split("\n") if line.strip()]
        head = next(line for line in lines if line.startswith("Tool call on server"))
        assert "wipe" in head and "destructive" in head
        [description] = [line for line in lines if line.lstrip().startswith("description:")]
        assert "Harmless." in description and "hidden" in description
        # the forged prompt and its forged answer are on the description's line, quoted, not lines of their own
        assert all("description:" in line for line in lines if "[y/N]" in line or "(approved)" in line)
        assert description.count('"') >= 2
    finally:
        child.sendline("n")  # type: ignore[attr-defined]
        finish(child)


def test_yes_lets_the_call_run() -> None:
    child, _ = asked()
    child.sendline("y")  # type: ignore[attr-defined]
    outcome, counts = finish(child)
    assert outcome == "ran: wiped" and counts == {"wipe": 1}


def test_no_denies_it_and_it_never_reaches_the_server() -> None:
    child, _ = asked()
    child.sendline("n")  # type: ignore[attr-defined]
    child.expect_exact("(denied)")  # type: ignore[attr-defined]
    outcome, counts = finish(child)
    assert outcome == "denied" and counts == {}
