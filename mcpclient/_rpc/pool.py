"""A bounded ThreadPoolExecutor whose workers are daemon threads.

The standard executor's workers are joined at interpreter exit, so one handler that ignores
cancellation (a stuck UI prompt, a hung model call) would hang the user's program on exit.
Ours are daemon threads and are not registered for that join: closing the client cancels the
handlers, gives them a grace period, and then lets the process exit regardless.
"""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import thread as _cf_thread

__all__ = ["DispatchPool"]


class DispatchPool(ThreadPoolExecutor):
    def _adjust_thread_count(self) -> None:
        try:
            self._start_daemon_worker()
        except (AttributeError, TypeError):  # pragma: no cover - a future CPython's internals
            super()._adjust_thread_count()

    def _start_daemon_worker(self) -> None:
        if self._idle_semaphore.acquire(timeout=0):
            return

        def weakref_cb(_: object, q: object = self._work_queue) -> None:
            q.put(None)  # type: ignore[attr-defined]

        if len(self._threads) >= self._max_workers:
            return
        ref = weakref.ref(self, weakref_cb)
        create_context = getattr(self, "_create_worker_context", None)
        if create_context is not None:  # CPython 3.14+
            args: tuple[object, ...] = (ref, create_context(), self._work_queue)
        else:
            args = (ref, self._work_queue, self._initializer, self._initargs)
        worker = threading.Thread(
            name=f"{self._thread_name_prefix}_{len(self._threads)}",
            target=_cf_thread._worker,
            args=args,
            daemon=True,
        )
        worker.start()
        self._threads.add(worker)  # type: ignore[attr-defined]  # a set at run time
