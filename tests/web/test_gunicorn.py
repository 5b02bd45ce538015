"""The Flask example under real gunicorn: pre-fork, with and without --preload, sync and
gthread workers; one MCP server per worker, none left behind, recovery from a dead server."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from tests.helpers import wait_for
from tests.web._servers import Gunicorn, alive, load, mcp_servers

pytest.importorskip("gunicorn")
pytest.importorskip("flask")

WORKERS = 2
MODES = [
    pytest.param(("sync", "1", True), id="sync-preload-warm"),
    pytest.param(("sync", "1", False), id="sync"),
    pytest.param(("gthread", "4", True), id="gthread-preload-warm"),
    pytest.param(("gthread", "4", False), id="gthread"),
]


def options(worker: str, threads: str, preload: bool) -> list[str]:
    return ["-w", str(WORKERS), "-k", worker, "--threads", threads, *(["--preload"] if preload else [])]


@pytest.mark.parametrize("mode", MODES)
def test_every_answer_is_right_and_each_worker_has_exactly_one_server(mode):
    worker, threads, preload = mode
    env = {"MCP_WARM": "1"} if preload else {}  # --preload users open at import, in the master
    seen: set[int] = set()
    with Gunicorn("flask_app:app", *options(worker, threads, preload), env=env) as server:
        master = server.proc.pid
        assert len(mcp_servers(master)) == (1 if preload else 0)
        seen |= mcp_servers(master)
        answers = load(server.port, [f"/add?a={i}&b=0.5" for i in range(240)])
        assert [status for status, _ in answers] == [200] * 240, answers[:3]
        assert [body["sum"] for _, body in answers] == [str(i + 0.5) for i in range(240)]
        workers = server.workers(WORKERS)
        assert {body["worker"] for _, body in answers} <= workers and len(workers) == WORKERS
        for pid in workers:
            servers = mcp_servers(pid)
            assert len(servers) <= 1, f"worker {pid} runs {len(servers)} MCP servers"
            seen |= servers
        served = {body["worker"] for _, body in answers}
        assert all(len(mcp_servers(pid)) == 1 for pid in served)
    assert seen and not [pid for pid in seen if alive(pid)], "MCP servers left after gunicorn stopped"


@pytest.mark.parametrize("mode", [MODES[0], MODES[2]])
def test_killing_a_workers_server_mid_load_fails_few_requests_and_the_worker_recovers(mode):
    worker, threads, preload = mode
    killed: dict[str, int] = {}
    done = threading.Event()
    after_kill: list[tuple[int, dict]] = []

    with Gunicorn("flask_app:app", *options(worker, threads, preload), env={"MCP_WARM": "1"}) as server:
        def on_done(index: int, answer: tuple[int, dict]) -> None:
            status, body = answer
            if index == 60 and status == 200 and not killed:
                victim = body["worker"]
                (pid,) = mcp_servers(victim)
                killed.update(worker=victim, server=pid)
                os.kill(pid, signal.SIGKILL)
                done.set()
            elif killed and status == 200 and body["worker"] == killed["worker"]:
                after_kill.append(answer)

        started = time.monotonic()
        answers = load(server.port, [f"/add?a={i}&b=1" for i in range(300)], on_done=on_done)
        assert time.monotonic() - started < 60 and done.is_set()
        statuses = [status for status, _ in answers]
        assert set(statuses) <= {200, 502}
        # Only calls in flight on the dead server fail: at most one per thread of that worker.
        assert statuses.count(502) <= int(threads), statuses.count(502)
        assert all(body["sum"] == str(i + 1) for i, (status, body) in enumerate(answers) if status == 200)
        assert after_kill, "the worker whose server was killed answered nothing afterwards"
        (replacement,) = wait_for(lambda: mcp_servers(killed["worker"]))
        assert replacement != killed["server"]
        assert all(len(mcp_servers(pid)) == 1 for pid in server.workers(WORKERS)
                   if pid in {body["worker"] for _, body in answers if body.get("worker")})
        servers = {replacement} | {s for pid in server.workers(WORKERS) for s in mcp_servers(pid)}
    assert not [pid for pid in servers if alive(pid)]


def test_a_reload_hup_replaces_the_workers_and_their_servers():
    with Gunicorn("flask_app:app", *options("gthread", "4", True), env={"MCP_WARM": "1"}) as server:
        load(server.port, [f"/add?a={i}&b=1" for i in range(40)])
        before = server.workers(WORKERS)
        old_servers = {s for pid in before for s in mcp_servers(pid)}
        assert old_servers
        server.proc.send_signal(signal.SIGHUP)  # gunicorn's reload: new workers, old ones stop
        wait_for(lambda: server.workers(WORKERS) and not (server.workers(WORKERS) & before), timeout=20)
        wait_for(lambda: not [pid for pid in old_servers if alive(pid)], timeout=10)
        answers = load(server.port, [f"/add?a={i}&b=1" for i in range(40)])
        assert [body["sum"] for _, body in answers] == [str(i + 1) for i in range(40)]
        assert {body["worker"] for _, body in answers}.isdisjoint(before)
