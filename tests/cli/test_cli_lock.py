"""``mcpclient lock`` and ``lock --check``'s exit codes: the real CLI, in a child process, as CI
runs it, against the official-SDK policy server (tests/servers/sdk_policy_server.py), whose
``--variant 2`` changes ``read_file``'s description and schema (docs/cli.md's exit codes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpclient.cli._main import EXIT_CONNECTION, EXIT_DRIFT, EXIT_OK, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_policy_server.py")]

pytestmark = pytest.mark.timeout(180)


def configure(tmp_path: Path, *extra: str, also: dict[str, object] | None = None) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"fs": {"command": SERVER[0], "args": [*SERVER[1:], *extra]},
                                               **(also or {})}}))
    return path


def lock(tmp_path: Path, *words: str) -> subprocess.CompletedProcess[str]:
    """``mcpclient lock -c tmp/mcp.json --file tmp/mcp.lock WORDS``, as a project's CI step runs it
    (in the project, whose own config file it trusts)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "mcpclient", "lock", "-c", str(tmp_path / "mcp.json"),
                           "--file", str(tmp_path / "mcp.lock"), "--protocol", "legacy", "-t", "30", "--trust-project", *words],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), stdin=subprocess.DEVNULL,
                          timeout=120)


def test_check_exits_0_on_a_match_and_6_on_drift_without_writing(tmp_path: Path) -> None:
    configure(tmp_path)
    run = lock(tmp_path)
    assert run.returncode == EXIT_OK, run.stderr
    assert run.stdout.splitlines()[-1] == f"wrote {tmp_path / 'mcp.lock'} (1 server(s))"
    assert 'tool "read_file" added' in run.stdout  # a first lock shows what it pins
    written = (tmp_path / "mcp.lock").read_bytes()
    run = lock(tmp_path, "--check")
    assert run.returncode == EXIT_OK and "1 server(s) match" in run.stdout, run.stderr
    configure(tmp_path, "--variant", "2")  # the server changed since it was locked
    run = lock(tmp_path, "--check")
    assert run.returncode == EXIT_DRIFT == 6, run.stderr
    assert "read_file" in run.stdout and "id_rsa" in run.stdout and "1 of 1 server(s) differ" in run.stdout
    assert (tmp_path / "mcp.lock").read_bytes() == written  # --check never writes
    run = lock(tmp_path, "fs")  # reviewed: lock it again
    assert run.returncode == EXIT_OK and "id_rsa" in run.stdout, run.stderr
    assert lock(tmp_path, "--check").returncode == EXIT_OK


def test_a_removed_tool_is_drift(tmp_path: Path) -> None:
    configure(tmp_path)
    assert lock(tmp_path).returncode == EXIT_OK
    data = json.loads((tmp_path / "mcp.lock").read_text())
    data["servers"]["fs"]["tools"]["format_disk"] = dict(data["servers"]["fs"]["tools"]["delete_all"])
    (tmp_path / "mcp.lock").write_text(json.dumps(data))
    run = lock(tmp_path, "--check")
    assert run.returncode == EXIT_DRIFT and "format_disk" in run.stdout and "removed" in run.stdout, run.stdout


def test_check_without_a_lockfile_is_drift_and_writes_none(tmp_path: Path) -> None:
    configure(tmp_path)
    run = lock(tmp_path, "--check")
    assert run.returncode == EXIT_DRIFT and "added" in run.stdout, run.stdout
    assert not (tmp_path / "mcp.lock").exists()


def test_a_file_that_is_not_a_lockfile_an_unknown_server_or_none_exit_2(tmp_path: Path) -> None:
    configure(tmp_path)
    (tmp_path / "mcp.lock").write_text('{"servers": {}}')  # no version: not ours
    run = lock(tmp_path, "--check")
    assert run.returncode == EXIT_USAGE and "not an mcpclient lockfile" in run.stderr, run.stderr
    (tmp_path / "mcp.lock").write_text("{half")
    assert lock(tmp_path, "--check").returncode == EXIT_USAGE
    (tmp_path / "mcp.lock").unlink()
    run = lock(tmp_path, "--check", "fss")
    assert run.returncode == EXIT_USAGE and "no server named 'fss'" in run.stderr, run.stderr
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    run = lock(tmp_path, "--check")
    assert run.returncode == EXIT_USAGE and "no servers" in run.stderr, run.stderr


def test_a_server_that_cannot_start_exits_3(tmp_path: Path) -> None:
    configure(tmp_path, also={"gone": {"command": str(tmp_path / "no-such-program")}})
    run = lock(tmp_path, "--check")
    assert run.returncode == EXIT_CONNECTION, (run.returncode, run.stdout, run.stderr)
    assert not (tmp_path / "mcp.lock").exists()
