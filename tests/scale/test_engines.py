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
each takes: the process pools 5 to 8 s, loky 9 to 17 s, Dask 14 to 25 s, Ray 50 to 55 s (33
to 40 s of it ``ray.init``).
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Iterable

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


#: How long Ray's own processes may take to register at start-up, in seconds.
RAY_START = 240


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray for this module, started once and always shut down.

    Small and quiet: ``WORKERS`` CPUs, no dashboard, no usage report (no network but
    loopback). Patient at start-up: on two busy cores Ray's own processes (the GCS, the
    raylet and its Python agents) take 30 to 250 s to register, and Ray 2.60 waits a fixed
    30 s for its raylet (no setting changes it), so its node lookup is made to keep trying
    for ``RAY_START`` s (Ray's processes are the same; only its wait is longer).
    """
    ray = pytest.importorskip("ray")
    patch = pytest.MonkeyPatch()
    patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    patch.setenv("RAY_raylet_start_wait_time_s", str(RAY_START))  # what older Rays read
    services = ray._private.services
    if hasattr(services, "get_node"):
        patch.setattr(services, "get_node", _patient(services.get_node, RAY_START))
    started = time.monotonic()
    try:
        ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False, configure_logging=False,
                 _node_ip_address="127.0.0.1")
        log.info("ray.init took %.1f s", time.monotonic() - started)
        yield ray
    finally:
        ray.shutdown()
        patch.undo()


def _patient(get_node: Any, limit: float) -> Any:
    """Ray's node lookup, trying again for up to ``limit`` s while the node has not registered."""
    def get_node_patiently(*args: Any, **kwargs: Any) -> Any:
        end, waited = time.monotonic() + limit, False
        while True:
            try:
                return get_node(*args, **kwargs)
            except RuntimeError:
                if time.monotonic() >= end:
                    raise
                if not waited:
                    log.info("Ray's node has not registered yet: waiting up to %.0f s", limit)
                    waited = True
                time.sleep(0.5)

    return get_node_patiently


@pytest.mark.slow
@pytest.mark.timeout(RAY_START + RESULTS + 60)
def test_ray_local(ray_cluster, shared):
    """The job on a local Ray (``ray.init`` on this machine, ``WORKERS`` CPUs)."""
    task = ray_cluster.remote(_work.add_chunk)
    pids = check_job(ray_cluster.get([task.remote(shared, start, CHUNK) for start in STARTS], timeout=RESULTS))
    ray_cluster.shutdown()  # Ray's workers (and their servers) end with it; the fixture's is then a no-op
    ended(pids)
