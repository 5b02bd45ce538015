"""The README's "From the shell" section, as a new reader meets it.

* its ``mcpclient`` lines run in order at a terminal, from the repository root, with nothing
  approved yet: the only line that asks for consent is the one that says it will (a project's
  config file needs it), and each exits 0;
* it names every command ``mcpclient --help`` lists.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def _shell_lines() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", _section("From the shell"), re.S)
    assert block, "no bash block under 'From the shell'"
    return [line for line in block.group(1).splitlines() if line.startswith("mcpclient ")]


@pytest.fixture
def reader_env(tmp_path) -> dict[str, str]:
    """A shell where ``mcpclient`` and ``python`` mean this checkout, and nothing is approved."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mcpclient").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mcpclient "$@"\n')
    (bin_dir / "mcpclient").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": str(tmp_path / "config"), "PYTHONUNBUFFERED": "1"}


#: The questions mcpclient asks before it starts a project's server: ``mcpclient trust``'s,
#: and the one any other command asks at a terminal.
TRUST_QUESTION = "whenever you name them, until an entry changes? [y/N] "
START_QUESTION = "Start it? [y] this once"


@pytest.mark.timeout(240)
def test_the_shell_lines_run_in_order_and_only_the_trust_line_asks(reader_env):
    lines = _shell_lines()
    assert any("-c examples/mcp.json" in line for line in lines)
    for line in lines:
        child = pexpect.spawn("bash", ["-c", line], env=reader_env, cwd=str(ROOT), encoding="utf-8", timeout=60,
                              dimensions=(50, 200))
        asked = child.expect_exact([TRUST_QUESTION, START_QUESTION, pexpect.EOF])
        if asked == 0:
            assert line.startswith("mcpclient trust "), line
            child.sendline("y")
            child.expect(pexpect.EOF)
        assert asked != 1, f"{line!r} asks for consent, and the README does not say so before it:\n{child.before}"
        child.close()
        assert child.exitstatus == 0, f"{line!r} exited {child.exitstatus}:\n{child.before}"
        if "--json" in line:
            assert '"text": "3"' in child.before, child.before


def test_the_readme_names_every_command_of_the_help():
    help_text = subprocess.run([sys.executable, "-m", "mcpclient", "--help"], capture_output=True, text=True,
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60, check=True).stdout
    commands = re.findall(r"^    (\w+)(?:\s|$)", help_text, re.M)
    assert {"tools", "call", "trust", "lock", "doctor", "stubs", "record"} <= set(commands), help_text
    section = _section("From the shell")
    missing = [name for name in commands if f"`{name}`" not in section]
    assert missing == [], f"the README's 'From the shell' does not name {missing}"
