"""Celery's prefork pool with a filesystem broker: each pool process opens one MCP server at
start (worker_process_init) and closes it at shutdown (worker_process_shutdown)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.helpers import wait_for
from tests.web._servers import ROOT, alive, children, mcp_servers

pytest.importorskip("celery")


#: The engines' job (tests/scale/test_engines.py): 10,000 calls in chunks, over four pool processes.
JOB, CHUNK, WORKERS = 10_000, 500, 4


def test_prefork_pool_processes_each_open_one_server_and_leave_none_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("MCP_CELERY_DIR", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "web"))
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests' / 'web'}"}
    import celery_app

    # Queued before the worker starts: kombu's filesystem transport can lose a message whose
    # file the consumer reads between the producer's open and write, so nothing is written
    # while a consumer polls. The pool processes then run the tasks side by side.
    starts = list(range(0, JOB, CHUNK))
    pending = [celery_app.add_chunk.delay(start, CHUNK) for start in starts] + [celery_app.add.delay(i, 1) for i in range(8)]
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "celery_app", "worker", "--pool=prefork", f"--concurrency={WORKERS}",
         "--loglevel=warning", "--without-heartbeat", "--without-mingle", "--without-gossip"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        # worker_process_init: every pool process opens its server before any task.
        pool = wait_for(lambda: (found := {p for p in children(worker.pid) if mcp_servers(p)}) and len(found) == WORKERS
                        and found, timeout=60)
        with ThreadPoolExecutor(8) as collect:
            results = list(collect.map(lambda result: result.get(timeout=120), pending))
        chunks, singles = results[:len(starts)], results[len(starts):]
        assert [r["start"] for r in chunks] == starts
        assert all(r["sums"] == [r["start"] + i + 1 for i in range(CHUNK)] for r in chunks)
        assert [r["sum"] for r in singles] == [str(i + 1) for i in range(8)]
        assert {r["worker"] for r in results} <= pool and all(r["opened"] == 1 for r in results)
        servers = {s for p in pool for s in mcp_servers(p)}
        assert {r["server"] for r in results} <= servers and len(servers) == WORKERS
        assert all(len(mcp_servers(p)) == 1 for p in pool)
    finally:
        worker.send_signal(signal.SIGTERM)  # warm shutdown: the pool processes end
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(5)
    stderr = worker.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
    assert worker.returncode == 0, stderr[-2000:]
    assert not [pid for pid in servers if alive(pid)], "MCP servers left after the worker stopped"
