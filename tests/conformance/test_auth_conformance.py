"""The official conformance suite's ``auth/*`` client scenarios against ``mcpclient.auth``.

Every scenario runs at every spec version it applies to (extension scenarios, which are not on
the spec timeline, run with ``--force`` at 2025-11-25 and 2026-07-28). A scenario passes when
the CLI exits 0 and reports at least one executed check, all of them SUCCESS or INFO. The
runs take about a second each and are independent, so the module runs them all at once on a
thread pool the first time a test asks, then each test reports its own.

``python tests/conformance/test_auth_conformance.py`` prints the table of checks.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests import node_tools  # noqa: E402
from tests.conformance.test_conformance import conformance_cmd  # noqa: E402  (the CLI with our Node preloads)

pytestmark = pytest.mark.node

HARNESS = Path(__file__).resolve().parent / "client.py"  # dispatches auth/* to auth_scenarios.py
FORCE = "--force"

STANDARD = ("2025-11-25", "2026-07-28")
SINCE_2026 = ("2026-07-28",)
EXTENSION = (("2025-11-25", FORCE), ("2026-07-28", FORCE))

#: scenario -> the spec versions to run it at (as listed by ``conformance list``).
MATRIX: dict[str, tuple] = {
    "auth/metadata-default": STANDARD,
    "auth/metadata-var1": STANDARD,
    "auth/metadata-var2": STANDARD,
    "auth/metadata-var3": STANDARD,
    "auth/basic-cimd": STANDARD,
    "auth/scope-from-www-authenticate": STANDARD,
    "auth/scope-from-scopes-supported": STANDARD,
    "auth/scope-omitted-when-undefined": STANDARD,
    "auth/scope-step-up": STANDARD,
    "auth/scope-retry-limit": STANDARD,
    "auth/token-endpoint-auth-basic": ("2025-06-18", *STANDARD),
    "auth/token-endpoint-auth-post": ("2025-06-18", *STANDARD),
    "auth/token-endpoint-auth-none": ("2025-06-18", *STANDARD),
    "auth/pre-registration": STANDARD,
    "auth/2025-03-26-oauth-metadata-backcompat": ("2025-03-26",),
    "auth/2025-03-26-oauth-endpoint-fallback": ("2025-03-26",),
    "auth/resource-mismatch": SINCE_2026,
    "auth/offline-access-scope": SINCE_2026,
    "auth/offline-access-not-supported": SINCE_2026,
    "auth/authorization-server-migration": SINCE_2026,
    "auth/iss-supported": SINCE_2026,
    "auth/iss-not-advertised": SINCE_2026,
    "auth/iss-supported-missing": SINCE_2026,
    "auth/iss-wrong-issuer": SINCE_2026,
    "auth/iss-unexpected": SINCE_2026,
    "auth/iss-normalized": SINCE_2026,
    "auth/metadata-issuer-mismatch": SINCE_2026,
    "auth/client-credentials-jwt": EXTENSION,
    "auth/client-credentials-basic": EXTENSION,
    "auth/enterprise-managed-authorization": EXTENSION,
    "auth/dpop": EXTENSION,
    "auth/dpop-nonce": EXTENSION,
    "auth/wif-jwt-bearer": EXTENSION,
}


def _runs() -> list[tuple[str, str, bool]]:
    runs = []
    for scenario, versions in MATRIX.items():
        for version in versions:
            if isinstance(version, tuple):
                runs.append((scenario, version[0], True))
            else:
                runs.append((scenario, version, False))
    return runs


RUNS = _runs()


class Result:
    def __init__(self, exit_code: int, checks: list[dict], output: str, seconds: float) -> None:
        self.exit_code = exit_code
        self.checks = checks
        self.output = output
        self.seconds = seconds

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks if c.get("status") == status)

    @property
    def executed(self) -> int:
        return self.count("SUCCESS") + self.count("FAILURE") + self.count("WARNING")

    @property
    def bad(self) -> list[dict]:
        return [c for c in self.checks if c.get("status") in ("FAILURE", "WARNING")]


def run_one(scenario: str, version: str, force: bool, timeout: float = 60.0) -> Result:
    """Run one scenario through the conformance CLI; its checks come from the saved checks.json."""
    command = f"{sys.executable} {HARNESS}"
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcp-auth-conf-") as out:
        argv = conformance_cmd() + [
            "client", "--command", command, "--scenario", scenario, "--spec-version", version,
            "--timeout", "30000", "-o", out,
        ]
        if force:
            argv.append(FORCE)
        env = {**os.environ, "MCP_CONFORMANCE_LOG": "WARNING"}
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(node_tools.NODE_DIR.parent.parent)
        )
        checks: list[dict] = []
        for path in Path(out).rglob("checks.json"):
            checks.extend(json.loads(path.read_text()))
    return Result(proc.returncode, checks, proc.stdout[-4000:] + proc.stderr[-4000:], time.monotonic() - started)


_results: dict[tuple[str, str, bool], concurrent.futures.Future] = {}
_lock = threading.Lock()
_pool: concurrent.futures.ThreadPoolExecutor | None = None


def result_for(run: tuple[str, str, bool]) -> Result:
    """Start every run on first use (in parallel), then wait for this one."""
    global _pool
    with _lock:
        if not _results:
            workers = int(os.environ.get("MCP_AUTH_CONFORMANCE_WORKERS", max(4, 2 * (os.cpu_count() or 2))))
            _pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="conformance")
            for item in RUNS:
                _results[item] = _pool.submit(run_one, *item)
    return _results[run].result()


@pytest.fixture(scope="module", autouse=True)
def _node_available():
    if node_tools.node22() is None or not node_tools.CONFORMANCE_JS.is_file():
        pytest.skip("Node 22 and the conformance suite are needed: run `npm ci` in tests/node")
    yield
    if _pool is not None:
        _pool.shutdown(wait=True)


@pytest.mark.parametrize("run", RUNS, ids=[f"{s.removeprefix('auth/')}@{v}" for s, v, _ in RUNS])
def test_auth_scenario_passes(run):
    result = result_for(run)
    details = "\n".join(f"  {c.get('status')} {c.get('id')}: {c.get('description') or c.get('errorMessage')}" for c in result.bad)
    assert result.executed > 0, f"no checks executed\n{result.output}"
    assert not result.bad, f"failed checks:\n{details}\n{result.output}"
    assert result.exit_code == 0, f"the CLI exited {result.exit_code}\n{result.output}"


def test_every_auth_scenario_of_the_suite_is_covered():
    listed = subprocess.run(node_tools.conformance_cmd() + ["list"], capture_output=True, text=True, timeout=60).stdout
    suite = {line.split()[1] for line in listed.splitlines() if line.strip().startswith("- auth/")}
    assert suite == set(MATRIX)


if __name__ == "__main__":
    began = time.monotonic()
    total_passed = 0
    for item in RUNS:
        res = result_for(item)
        ok = res.executed > 0 and not res.bad and res.exit_code == 0
        total_passed += ok
        print(f"{'PASS' if ok else 'FAIL'} {item[0]:45} {item[1]}{' (forced)' if item[2] else '':9} "
              f"executed={res.executed:3} passed={res.count('SUCCESS'):3} info={res.count('INFO'):3} "
              f"bad={len(res.bad)} exit={res.exit_code} {res.seconds:5.1f}s")
        for check in res.bad:
            print(f"      {check.get('status')} {check.get('id')}: {(check.get('description') or '')[:150]} {check.get('errorMessage') or ''}"[:300])
    print(f"{total_passed}/{len(RUNS)} passed in {time.monotonic() - began:.1f}s")
    if _pool is not None:
        _pool.shutdown()
