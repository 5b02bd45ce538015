"""The dispatch pool: its bound, the threads it lends to parked jobs, its cap, its end."""

from __future__ import annotations

import logging
import threading

import pytest

from mcpclient._rpc.pool import DispatchPool
from tests.helpers import wait_for


@pytest.fixture
def pools():
    made: list[DispatchPool] = []

    def make(workers: int, most: int) -> DispatchPool:
        pool = DispatchPool(workers, most, "mcpclient-test-pool")
        made.append(pool)
        return pool

    yield make
    for pool in made:
        pool.shutdown()


class Gate:
    """Jobs that wait on one Event, counting how many run at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.done = 0

    def job(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        self.release.wait(10)
        with self.lock:
            self.now -= 1
            self.done += 1


def test_no_more_than_workers_jobs_run_at_once(pools):
    pool, gate = pools(2, 16), Gate()
    for _ in range(6):
        pool.submit(gate.job)
    wait_for(lambda: gate.now == 2)
    assert pool.threads == 2
    gate.release.set()
    wait_for(lambda: gate.done == 6)
    assert gate.most == 2


def test_a_parked_job_lends_its_thread_to_the_next_and_the_loan_ends_after(pools):
    pool = pools(1, 4)
    parked, resume, ran = threading.Event(), threading.Event(), threading.Event()

    def waits_on_its_client() -> None:
        pool.park()
        parked.set()
        try:
            resume.wait(10)  # as a handler waits for the reply to its own call
        finally:
            pool.unpark()

    pool.submit(waits_on_its_client)
    parked.wait(5)
    pool.submit(ran.set)
    assert ran.wait(5), "the queued job did not run while the only worker was parked"
    assert pool.threads == 2
    resume.set()
    wait_for(lambda: pool.threads == 1)  # the lent thread ends once it is not needed


def test_once_every_thread_is_parked_a_request_is_refused_and_a_notification_waits(pools):
    pool = pools(1, 2)
    parked, resume = threading.Semaphore(0), threading.Event()

    def waits_on_its_client() -> None:
        pool.park()
        parked.release()
        try:
            resume.wait(10)
        finally:
            pool.unpark()

    pool.submit(waits_on_its_client)
    pool.submit(waits_on_its_client)
    assert parked.acquire(timeout=5) and parked.acquire(timeout=5)
    refused, ran = threading.Event(), threading.Event()
    pool.submit(lambda: None, refuse=refused.set)  # a server request: owed a reply
    assert refused.is_set(), "a request that could never start was not refused at once"
    pool.submit(ran.set)  # a notification: owed nothing, it waits
    assert not ran.wait(0.2)
    resume.set()
    assert ran.wait(5)


def test_a_queued_request_is_refused_when_the_last_running_worker_parks(pools):
    pool = pools(1, 1)
    parked, resume, refused = threading.Event(), threading.Event(), threading.Event()
    go = threading.Event()

    def parks_later() -> None:
        go.wait(10)
        pool.park()
        parked.set()
        try:
            resume.wait(10)
        finally:
            pool.unpark()

    pool.submit(parks_later)
    pool.submit(lambda: None, refuse=refused.set)  # queued behind a running job: not refused yet
    assert not refused.is_set()
    go.set()
    assert refused.wait(5)
    resume.set()


def test_a_job_that_raises_is_logged_and_the_worker_goes_on(pools, caplog):
    pool = pools(1, 1)
    ran = threading.Event()

    def boom() -> None:
        raise ValueError("boom")

    with caplog.at_level(logging.ERROR, logger="mcpclient"):
        pool.submit(boom)
        pool.submit(ran.set)
        assert ran.wait(5)
    assert any("dispatch job raised" in r.getMessage() for r in caplog.records)
    assert pool.threads == 1


def test_shutdown_drops_queued_jobs_ends_idle_threads_and_refuses_new_ones(pools):
    pool, gate = pools(1, 1), Gate()
    pool.submit(gate.job)
    wait_for(lambda: gate.now == 1)
    queued = threading.Event()
    pool.submit(queued.set)
    pool.shutdown()
    with pytest.raises(RuntimeError):
        pool.submit(queued.set)
    gate.release.set()
    wait_for(lambda: pool.threads == 0)
    assert not queued.is_set()


def test_workers_are_daemon_threads(pools):
    pool = pools(1, 1)
    seen: list[bool] = []
    done = threading.Event()
    pool.submit(lambda: (seen.append(threading.current_thread().daemon), done.set()))
    assert done.wait(5)
    assert seen == [True]


def test_the_bounds_are_checked():
    with pytest.raises(ValueError):
        DispatchPool(0, 4, "x")
    with pytest.raises(ValueError):
        DispatchPool(4, 2, "x")


def test_a_thread_that_will_not_start_leaves_the_job_queued_or_refused(pools, monkeypatch, caplog):
    pool = pools(2, 2)
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: (_ for _ in ()).throw(RuntimeError("can't start")))
    refused, ran = threading.Event(), threading.Event()
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        pool.submit(lambda: None, refuse=refused.set)  # no thread at all: refused, not lost
        pool.submit(ran.set)  # owed nothing: it waits for a thread
    assert refused.is_set() and not ran.is_set()
    assert any("could not start a dispatch thread" in r.getMessage() for r in caplog.records)
    monkeypatch.setattr(threading.Thread, "start", real_start)
    pool.submit(lambda: None)
    assert ran.wait(5)
    assert pool.threads >= 1
