"""Every ``mcpclient ...`` example in ``mcpclient --help`` and docs/cli.md runs as written.

The examples are taken from the help epilog's ``examples:`` section and from docs/cli.md
(lines of fenced blocks and inline code spans that start with ``mcpclient ``), and each is run
with bash from the repository root, with ``mcpclient`` and ``python`` on PATH meaning this
checkout and this interpreter. They use only what the project ships (``examples/mcp.json``,
``examples/servers/demo_server.py``), with the servers of examples/mcp.json approved first
(``mcpclient trust``, as docs/cli.md tells a reader; a temporary config directory holds the
approval). Each must exit 0, or the code a trailing ``# exits N`` comment documents.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcpclient.cli._main import EPILOG

from tests.helpers import approve_examples

ROOT = Path(__file__).resolve().parent.parent
CLI_MD = ROOT / "docs" / "cli.md"


def _from_epilog() -> list[str]:
    section = EPILOG.split("\nexamples", 1)[1].split("\n\n", 1)[0]
    return [line.strip() for line in section.splitlines()[1:] if line.strip().startswith("mcpclient ")]


def _from_markdown(text: str) -> list[str]:
    commands: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            if line.startswith("mcpclient "):
                commands.append(line.strip())
            continue
        commands += [span for span in re.findall(r"`([^`]+)`", line) if span.startswith("mcpclient ")]
    return commands


EXAMPLES = sorted(set(_from_epilog())) + sorted(set(_from_markdown(CLI_MD.read_text())))


def test_the_examples_were_found():
    assert len(_from_epilog()) >= 8 and len(_from_markdown(CLI_MD.read_text())) >= 6


@pytest.fixture(scope="module")
def path_dir(tmp_path_factory) -> Path:
    """``mcpclient`` and ``python`` as a reader's shell would have them, for this checkout."""
    bin_dir = tmp_path_factory.mktemp("bin")
    (bin_dir / "mcpclient").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mcpclient "$@"\n')
    (bin_dir / "mcpclient").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    return bin_dir


@pytest.fixture(scope="module")
def approved_env(tmp_path_factory) -> dict[str, str]:
    """examples/mcp.json is a project file of this checkout: its servers approved, as docs/cli.md says."""
    return approve_examples(tmp_path_factory.mktemp("config"))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", EXAMPLES)
def test_an_example_runs_as_written(command, path_dir, approved_env):
    if "| jq" in command and shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    documented = re.search(r"#\s*exits (\d+)", command)
    expected = int(documented.group(1)) if documented else 0
    env = {**approved_env, "PATH": f"{path_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("MCPCLIENT_SERVER", None)
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=50, stdin=subprocess.DEVNULL)
    assert result.returncode == expected, f"{command}\nstdout: {result.stdout}\nstderr: {result.stderr}"
