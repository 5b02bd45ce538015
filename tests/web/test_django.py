"""The Django example (mcpclient.contrib.django app, MCPCLIENT_SERVERS settings) under
gunicorn, and its system check reporting an unreachable server."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.web._servers import EXAMPLES, ROOT, Gunicorn, alive, load, mcp_servers

pytest.importorskip("django")
pytest.importorskip("gunicorn")


def test_the_django_example_under_gunicorn_preload_gthread_one_server_per_worker():
    seen: set[int] = set()
    with Gunicorn("django_view:application", "-w", "2", "-k", "gthread", "--threads", "4", "--preload") as server:
        answers = load(server.port, [f"/add?a={i}&b=2" for i in range(160)])
        assert [status for status, _ in answers] == [200] * 160
        assert [body["sum"] for _, body in answers] == [str(i + 2) for i in range(160)]
        for pid in {body["worker"] for _, body in answers}:
            assert len(mcp_servers(pid)) == 1
            seen |= mcp_servers(pid)
        status, health = load(server.port, ["/healthz/mcp"])[0]
        assert status == 200 and health["ok"] is True and health["opened"] == 1
    assert seen and not [pid for pid in seen if alive(pid)]


def run_check(server: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MCP_SERVER": server}
    return subprocess.run([sys.executable, str(EXAMPLES / "django_view.py"), "check"], capture_output=True,
                          text=True, timeout=60, env=env, cwd=ROOT)


def test_the_system_check_reports_an_unreachable_server_and_passes_a_working_one(tmp_path):
    broken = run_check(str(tmp_path / "no-such-server"))
    assert broken.returncode != 0 and "mcpclient.E001" in broken.stderr and "'default' is unreachable" in broken.stderr
    working = run_check(f"{sys.executable} {EXAMPLES / 'servers' / 'demo_server.py'}")
    assert working.returncode == 0, working.stderr
    assert "no issues" in working.stdout
