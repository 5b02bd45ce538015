"""The bounded pool of daemon worker threads that runs what the server sends (handlers).

At most ``workers`` jobs run at once. A job that blocks in a call to the same client (a
handler that calls a tool, say) is *parked* (``park``/``unpark``) while it waits: it runs no
code, and the reply it waits for may need a handler of its own (the server elicits from
inside that tool), so the pool lends another thread in its place, as Java's ForkJoinPool
does for a worker in ``managedBlock``. Parked jobs so never starve the ones they wait for. The
threads, parked ones included, never number more than ``most``: once every one of them is
parked, a job that could never start is refused instead (its ``refuse`` callback runs: the
server gets an error reply), so no call waits on a pool that cannot move. Threads beyond
``workers`` end as soon as they have nothing to do.

The workers are daemon threads, and not registered for the interpreter's exit-time join (as a
``ThreadPoolExecutor``'s are): one handler that ignores cancellation (a stuck UI prompt, a hung
model call) would otherwise hang the user's program on exit. Closing the client cancels the
handlers, gives them a grace period, and then lets the process exit regardless.
"""

from __future__ import annotations

import collections
import logging
import threading
from typing import Any, Callable

__all__ = ["DispatchPool"]

log = logging.getLogger(__name__)

Refuse = Callable[[], None]


class _Job:
    __slots__ = ("fn", "args", "refuse")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], refuse: Refuse | None) -> None:
        self.fn = fn
        self.args = args
        self.refuse = refuse


class _Worker:
    """One thread's mailbox: the job handed to it while it was idle, or the word to end."""

    __slots__ = ("job", "end", "wake")

    def __init__(self, lock: threading.Lock) -> None:
        self.job: _Job | None = None
        self.end = False
        self.wake = threading.Condition(lock)


class DispatchPool:
    """Run ``fn(*args)`` jobs on at most ``workers`` threads at once, not counting parked ones.

    Thread-safe. ``submit`` never blocks (the engine bounds how many jobs may wait); a job's
    exception is logged. ``shutdown`` drops the jobs not started and ends idle threads.
    """

    def __init__(self, workers: int, most: int, name: str) -> None:
        if workers < 1 or most < workers:
            raise ValueError(f"a pool needs 1 <= workers <= most, got {workers} and {most}")
        self.workers = workers
        self.most = most
        self._name = name
        self._lock = threading.Lock()
        self._jobs: collections.deque[_Job] = collections.deque()
        self._idle: list[_Worker] = []
        self._threads = 0  # alive, idle and parked ones included
        self._running = 0  # running a job, not parked
        self._parked = 0
        self._started = 0  # for thread names
        self._shut = False
        self._start_failed = False  # the last thread start failed: count on the threads there are

    @property
    def threads(self) -> int:
        """How many worker threads are alive now (idle and parked ones included)."""
        return self._threads

    @property
    def parked(self) -> int:
        """How many jobs wait in a call to the same client now."""
        return self._parked

    def submit(self, fn: Callable[..., Any], *args: Any, refuse: Refuse | None = None) -> None:
        """Run ``fn(*args)`` on a worker, now or once one is free.

        ``refuse`` (for a job someone waits on: a server request) runs instead of the job,
        on the calling thread or a parking worker, if every thread the pool may have is
        parked (see the module's docstring). Raises ``RuntimeError`` after ``shutdown``.
        """
        with self._lock:
            if self._shut:
                raise RuntimeError("the dispatch pool is shut down")
            self._jobs.append(_Job(fn, args, refuse))
            refused = self._assign()
        _run_refusals(refused)

    def park(self) -> None:
        """The current job starts waiting on a call to the same client: lend a thread in its
        place. Call ``unpark`` when the wait ends, on every path."""
        with self._lock:
            self._parked += 1
            self._running -= 1
            refused = self._assign()
        _run_refusals(refused)

    def unpark(self) -> None:
        """The current job's wait has ended: it runs again (past ``workers`` for a while, if
        the threads lent meanwhile are running too: they end when they finish)."""
        with self._lock:
            self._parked -= 1
            self._running += 1
            self._trim()

    def shutdown(self) -> None:
        """Drop the jobs not started, end idle threads; running jobs finish on their own."""
        with self._lock:
            self._shut = True
            self._jobs.clear()
            idle, self._idle = self._idle, []
            for worker in idle:
                self._end(worker)

    # -- under the lock -----------------------------------------------------------------------

    def _assign(self) -> list[_Job]:
        """Hand queued jobs to idle or new threads while fewer than ``workers`` run; the jobs
        to refuse (taken off the queue) when every thread there may be is parked."""
        jobs = self._jobs
        while jobs and self._running < self.workers:
            if self._idle:
                worker = self._idle.pop()
                worker.job = jobs.popleft()
                self._running += 1
                worker.wake.notify()
            elif self._threads < self.most and self._start(jobs[0]):
                jobs.popleft()
            else:
                break
        may_start = self._threads < self.most and not self._start_failed
        if not jobs or self._running or self._idle or may_start:
            return []
        # Every thread is parked and no other may start: nothing queued can run until one of
        # them returns, which may be waiting for exactly such a job. Refuse those owed a reply.
        refused = [job for job in jobs if job.refuse is not None]
        if refused:
            kept = [job for job in jobs if job.refuse is None]
            jobs.clear()
            jobs.extend(kept)
        return refused

    def _start(self, job: _Job) -> bool:
        """Start a thread for ``job``; False if the system would not start one (the job stays
        queued for a thread that frees up, or is refused when none will)."""
        worker = _Worker(self._lock)
        worker.job = job
        thread = threading.Thread(
            target=self._work, args=(worker,), name=f"{self._name}_{self._started}", daemon=True
        )
        try:
            thread.start()
        except RuntimeError as exc:  # can't start new thread: out of memory or a ulimit
            if not self._start_failed:
                log.warning("could not start a dispatch thread (%s); %d run now", exc, self._threads)
            self._start_failed = True
            return False
        self._start_failed = False
        self._threads += 1
        self._running += 1
        self._started += 1
        return True

    def _trim(self) -> None:
        """End idle threads while more than ``workers`` threads are not parked."""
        while self._idle and self._threads - self._parked > self.workers:
            self._end(self._idle.pop(0))

    def _end(self, worker: _Worker) -> None:
        """Tell an idle thread to end; it is no longer counted."""
        worker.end = True
        self._threads -= 1
        worker.wake.notify()

    # -- a worker thread ------------------------------------------------------------------------

    def _work(self, worker: _Worker) -> None:
        job = worker.job
        worker.job = None
        while job is not None:
            try:
                job.fn(*job.args)
            except BaseException:  # the engine's jobs catch their own; this is the last net
                log.exception("a dispatch job raised")
            del job
            job = self._next(worker)

    def _next(self, worker: _Worker) -> _Job | None:
        """The next job for this thread, waiting idle for one; None when it is to end."""
        with self._lock:
            self._running -= 1
            if self._jobs and self._running < self.workers and not self._shut:
                self._running += 1
                return self._jobs.popleft()
            if self._shut or self._threads - self._parked > self.workers:
                self._threads -= 1  # a thread lent to a parked job, or the pool is done
                return None
            self._idle.append(worker)
            while worker.job is None and not worker.end:
                worker.wake.wait()
            job, worker.job = worker.job, None
            return job  # None: ended by _end, which no longer counts it


def _run_refusals(jobs: list[_Job]) -> None:
    for job in jobs:
        assert job.refuse is not None
        try:
            job.refuse()
        except Exception:
            log.exception("refusing a dispatch job failed")
