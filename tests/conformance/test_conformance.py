"""The official MCP conformance suite's client scenarios, run against tests/conformance/client.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import node_tools

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "client.py"
SYNC_LISTEN = HERE / "sync_listen.cjs"
SPEC_VERSION = "2025-11-25"
SCENARIOS = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "json-schema-2020-12-preservation",
]


def conformance_cmd() -> list[str]:
    if node_tools.node22() is None or not node_tools.CONFORMANCE_JS.is_file():
        pytest.skip("Node 22 or @modelcontextprotocol/conformance missing: run `npm ci` in tests/node")
    cmd = node_tools.conformance_cmd()
    # Our preload goes right after loopback.cjs (see sync_listen.cjs for why).
    at = cmd.index(str(node_tools.LOOPBACK_CJS)) + 1
    return cmd[:at] + ["--require", str(SYNC_LISTEN)] + cmd[at:]


def read_checks(output_dir: Path) -> list[dict]:
    """Every check the suite saved in ``checks.json`` files under ``output_dir``."""
    checks: list[dict] = []
    for path in sorted(output_dir.rglob("checks.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            data = data.get("checks", [])
        checks.extend(item for item in data if isinstance(item, dict))
    return checks


def assert_scenario_passes(scenario: str, spec_version: str, output_dir: Path) -> list[dict]:
    """Run one client scenario against tests/conformance/client.py and judge its checks.

    Passes when at least one check was executed, none failed or warned, and the client
    exited cleanly. Returns the checks (for a test that wants to look closer).
    """
    if " " in sys.executable or " " in str(CLIENT):
        pytest.skip("the conformance CLI splits --command on spaces; move the checkout to a path without them")
    cmd = conformance_cmd() + [
        "client",
        "--command", f"{sys.executable} {CLIENT}",
        "--scenario", scenario,
        "--spec-version", spec_version,
        "--timeout", "60000",
        "-o", str(output_dir),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=170, cwd=HERE)
    output = f"exit {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-6000:]}"
    checks = read_checks(output_dir)
    statuses = [c.get("status") for c in checks]
    executed = [c for c in checks if c.get("status") in ("SUCCESS", "FAILURE")]
    failed = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
    assert executed, f"no check of {scenario!r} was executed ({statuses})\n{output}"
    assert not failed, f"{scenario!r}: {[(c.get('id'), c.get('errorMessage')) for c in failed]}\n{output}"
    assert all(c.get("status") == "SUCCESS" for c in executed)
    assert proc.returncode == 0, output
    assert "CLIENT EXITED WITH ERROR" not in proc.stderr and "TIMED OUT" not in proc.stderr, output
    return checks


@pytest.mark.timeout(180)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(scenario, tmp_path):
    assert_scenario_passes(scenario, SPEC_VERSION, tmp_path)
