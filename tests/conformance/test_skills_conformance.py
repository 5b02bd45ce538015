"""The conformance suite's skills-extension client scenarios (SEP-2640), run against client.py.

Each scenario's mock server serves one skill and judges what the client reads: nothing on
listing (no-prefetch), and nothing past a SKILL.md whose digest, size or frontmatter differs
from the listing (verify-*). Both eras: the CLI's default spec version makes the harness
speak the legacy handshake; 2026-07-28 (forced, since extension scenarios are not on the spec
timeline) the modern one.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conformance.test_conformance import CLIENT, HERE, conformance_cmd, read_checks

pytestmark = pytest.mark.node

SCENARIOS = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
]
ERAS = {"legacy": [], "modern": ["--spec-version", "2026-07-28", "--force"]}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("era", sorted(ERAS))
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_skills_scenario_passes_with_executed_checks(scenario, era, tmp_path):
    if " " in sys.executable or " " in str(CLIENT):
        pytest.skip("the conformance CLI splits --command on spaces; move the checkout to a path without them")
    cmd = conformance_cmd() + [
        "client",
        "--command", f"{sys.executable} {CLIENT}",
        "--scenario", scenario,
        "--timeout", "60000",
        "-o", str(tmp_path),
        *ERAS[era],
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=110, cwd=HERE)
    client_log = "".join(p.read_text(encoding="utf-8") for p in tmp_path.rglob("stderr.txt"))
    output = f"exit {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-3000:]}\nclient:\n{client_log[-3000:]}"
    checks = read_checks(tmp_path)
    executed = [c for c in checks if c.get("status") in ("SUCCESS", "FAILURE")]
    failed = [c for c in checks if c.get("status") not in ("SUCCESS", "INFO")]
    assert executed, f"no check of {scenario!r} was executed ({[c.get('status') for c in checks]})\n{output}"
    assert not failed, f"{scenario!r}: {[(c.get('id'), c.get('status'), c.get('errorMessage')) for c in failed]}\n{output}"
    assert proc.returncode == 0, output
    if scenario != "sep-2640-client-no-prefetch":
        assert "failed verification" in client_log, "the client never loaded the tampered skill\n" + output
