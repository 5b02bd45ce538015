"""The same 10,000-call job on the engines data teams run, for real on this machine.

Each engine gets a SharedClient as a task argument (pickled as its spec). Every worker opens
one server for all its tasks, every answer is right, and no server is left once the engine has
shut down. Four workers (as the issue asks; on two cores they take turns, so nothing is timed
here); workers and servers on loopback only.

The server is the stdlib demo server (as in the Celery test): it answers about ten times as
fast as the official SDK's, so the job costs the engine's time, not the server's (the SDK
server's travel to a spawned worker is tested in test_pickle.py).

Celery runs the same job in tests/web/test_celery.py (its prefork pool, a module-level
SharedClient opened by the worker signals: a Celery task's arguments are JSON by default, so
a client does not travel as one).

Bounded: every engine waits for its results at most ``RESULTS`` seconds (then fails, naming
it), under a pytest timeout above that; nothing asserts a speed. On 2 busy cores (load 10+),
each takes: the process pools 5 to 8 s, loky 9 to 17 s, Dask 14 to 25 s, Ray 28 to 41 s (20
to 29 s of it ``ray.init``; 12 s in all on a quiet machine). Ray runs on two CPUs, not four
(its start-up is what load breaks: see ``ray_cluster``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Iterable

import psutil
import pytest

from mcpclient import SharedClient
from tests.conftest import DEMO_SERVER
from tests.helpers import wait_for
from tests.scale import _work
from tests.scale.conftest import alive

JOB = 10_000
CHUNK = 500
WORKERS = 4
STARTS = list(range(0, JOB, CHUNK))
#: How long an engine may take to hand back the job's results, in seconds (the job takes
#: under 30 s on a loaded 2-core machine; this only bounds a hang).
RESULTS = 240

pytestmark = pytest.mark.timeout(RESULTS + 60)

log = logging.getLogger(__name__)


@pytest.fixture
def shared(scale_path):
    mcp = SharedClient(DEMO_SERVER, timeout=30)
    yield mcp
    assert mcp.opened == 0  # the parent never opened one: only the workers did
    mcp.close()


def check_job(answers: Iterable[dict[str, Any]]) -> set[int]:
    """Every answer right, one server per worker for all its tasks; returns the pids used."""
    answers = list(answers)
    assert sorted(a["start"] for a in answers) == STARTS
    for answer in answers:
        assert answer["sums"] == [answer["start"] + i + 1 for i in range(CHUNK)], answer["start"]
    servers: dict[int, set[int]] = {}
    for answer in answers:
        servers.setdefault(answer["worker"], set()).add(answer["server"])
        assert answer["opened"] == 1
    assert 1 <= len(servers) <= WORKERS and all(len(pids) == 1 for pids in servers.values()), servers
    return {pid for pids in servers.values() for pid in pids} | set(servers)


def ended(pids: set[int]) -> None:
    wait_for(lambda: not alive(pids), timeout=60)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_process_pool(shared, method):
    with ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context(method)) as pool:
        pids = check_job(pool.map(_work.add_chunk, [shared] * len(STARTS), STARTS, [CHUNK] * len(STARTS),
                                  timeout=RESULTS))
    ended(pids)


def test_joblib_loky(shared):
    joblib = pytest.importorskip("joblib")
    from joblib.externals.loky import get_reusable_executor

    try:
        answers = joblib.Parallel(n_jobs=WORKERS, backend="loky", timeout=RESULTS)(
            joblib.delayed(_work.add_chunk)(shared, start, CHUNK) for start in STARTS
        )
        pids = check_job(answers)
    finally:
        get_reusable_executor().shutdown(wait=True)  # loky keeps its workers for the next Parallel
    ended(pids)


def test_dask_local_cluster(shared):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=WORKERS, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
        silence_logs=40,
    ) as cluster, distributed.Client(cluster) as dask:
        futures = dask.map(functools.partial(_work.add_chunk, shared, count=CHUNK), STARTS, pure=False)
        distributed.wait(futures, timeout=RESULTS)
        pids = check_job(dask.gather(futures))
    ended(pids)


#: How long Ray may take to start, in seconds, all attempts together (an attempt is begun only
#: if one as long as the last still fits).
RAY_START = 240
#: Starts of Ray whose raylet gave up on its agents, before the test is skipped (see ray_cluster).
RAY_ATTEMPTS = 3
#: Ray's CPUs: two workers (the CI machine's two cores), each opening its own server.
RAY_CPUS = 2


class RayletEnded(Exception):
    """Ray's raylet ended before its node registered: waiting longer cannot help."""


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray for this module, started once and always shut down.

    Small and quiet: ``RAY_CPUS`` CPUs, no dashboard, no worker logs sent to the driver, no
    usage report, on loopback. Ray waits a fixed 30 s for its node to register; the node
    lookup is made to wait longer (up to ``RAY_START`` s) while the raylet runs, and to stop
    at once when it has ended.

    Ray 2.60's raylet gives its two agents (Python processes that import much of Ray) a fixed
    15 s to write their port files, then aborts ("Timed out waiting for file"); no setting
    changes that (``RAY_agent_register_timeout_ms`` is not read for it, and the listen port
    is not passed to the raylet). On two cores the agents took 4 to 6 s quiet and 3 to 9 s
    beside a busy pytest process (as in CI), but 27 s beside eight busy loops, where 3 of 4
    starts failed (all 3 beside sixteen). Such a start is tried again, ``RAY_ATTEMPTS`` times
    in all; then the test is skipped with the raylet's message: nothing of mcpclient has run
    by then, so it says nothing of mcpclient. Any other failure to start fails the test.
    """
    ray = pytest.importorskip("ray")
    patch = pytest.MonkeyPatch()
    patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    end = time.monotonic() + RAY_START
    services = ray._private.services
    patch.setattr(services, "get_node", _while_raylet_runs(services.get_node, end))
    aborted: list[str] = []
    try:
        while True:
            started = time.monotonic()
            try:
                ray.init(num_cpus=RAY_CPUS, include_dashboard=False, log_to_driver=False,
                         configure_logging=False, _node_ip_address="127.0.0.1")
                break
            except RayletEnded as ended_early:
                ray.shutdown()
                _end_ray_processes(ray)
                reason = _agents_too_slow(str(ended_early))
                if reason is None:
                    raise
                log.warning("Ray did not start (attempt %d, %.0f s): %s", len(aborted) + 1,
                            time.monotonic() - started, reason)
                aborted.append(reason)
                if len(aborted) == RAY_ATTEMPTS or 2 * time.monotonic() - started >= end:  # no time for another
                    pytest.skip(f"Ray could not start on this machine ({len(aborted)} attempts; load "
                                f"{os.getloadavg()[0]:.1f}): its raylet gave its agents a fixed 15 s "
                                f"and aborted: {reason}")
        log.info("ray.init took %.1f s", time.monotonic() - started)
        yield ray
    finally:
        ray.shutdown()
        patch.undo()


def _while_raylet_runs(get_node: Any, end: float) -> Any:
    """Ray's node lookup, tried again until ``end`` while the raylet runs; ``RayletEnded``
    (naming its log directory) once it has ended."""
    def get_node_while_raylet_runs(*args: Any, **kwargs: Any) -> Any:
        raylet = _raylet()
        while True:
            try:
                return get_node(*args, **kwargs)
            except RuntimeError:
                if raylet is None or not alive({raylet[0]}):
                    raise RayletEnded(raylet[1] if raylet else "") from None
                if time.monotonic() >= end:
                    raise
                time.sleep(0.5)

    return get_node_while_raylet_runs


def _raylet() -> tuple[int, str] | None:
    """This process's running raylet: its pid and log directory."""
    for child in psutil.Process().children():
        try:
            if child.name() == "raylet" and child.status() != psutil.STATUS_ZOMBIE:
                logs = [arg.split("=", 1)[1] for arg in child.cmdline() if arg.startswith("--log_dir=")]
                return child.pid, logs[0] if logs else ""
        except psutil.Error:
            continue
    return None


def _agents_too_slow(log_dir: str) -> str | None:
    """The raylet's message if it aborted waiting for its agents' port files, else None."""
    for name in ("raylet.out", "raylet.err"):
        try:
            text = Path(log_dir, name).read_text(errors="replace") if log_dir else ""
        except OSError:
            continue
        for line in text.splitlines():
            if "Timed out waiting for file" in line:
                return line[line.index("Timed out waiting for file"):].strip()
    return None


def _end_ray_processes(ray: Any) -> None:
    """End what a failed start left (its Node object, which would end them, was never made)."""
    package = str(Path(ray.__file__).parent)
    leftovers = []
    for child in psutil.Process().children(recursive=True):
        try:
            if package in " ".join(child.cmdline()):
                leftovers.append(child)
        except psutil.Error:
            continue
    for child in leftovers:
        with contextlib.suppress(psutil.Error):
            child.terminate()
    _, stubborn = psutil.wait_procs(leftovers, timeout=10)
    for child in stubborn:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(stubborn, timeout=10)


@pytest.mark.slow
@pytest.mark.timeout(RAY_START + RESULTS + 60)
def test_ray_local(ray_cluster, shared):
    """The job on a local Ray (``ray.init`` on this machine, ``RAY_CPUS`` CPUs)."""
    task = ray_cluster.remote(_work.add_chunk)
    pids = check_job(ray_cluster.get([task.remote(shared, start, CHUNK) for start in STARTS], timeout=RESULTS))
    ray_cluster.shutdown()  # Ray's workers (and their servers) end with it; the fixture's is then a no-op
    ended(pids)
