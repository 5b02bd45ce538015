"""Daemon threads for the HTTP transports' work that may block: streams, token fetches."""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable

__all__ = ["ThreadPool"]

log = logging.getLogger(__name__)


class ThreadPool:
    """Runs each task on an idle daemon thread, starting a new one when none is idle.

    Unbounded on purpose: a task may block for as long as a server keeps a stream open, so a
    bounded pool could starve. Idle threads exit after ``idle_timeout`` seconds, and all of
    them once ``shutdown`` is called and their task ends.
    """

    def __init__(self, name: str, idle_timeout: float = 30.0) -> None:
        self._name = name
        self._idle_timeout = idle_timeout
        self._tasks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._idle = 0
        self._threads = 0
        self._shutdown = False
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., None], *args: Any) -> bool:
        """Run ``fn(*args)`` on a worker; False (and nothing runs) once shut down."""
        with self._lock:
            if self._shutdown:
                return False
            self._tasks.put((fn, args))
            if self._idle:
                self._idle -= 1
                return True
            self._threads += 1
        threading.Thread(target=self._work, name=self._name, daemon=True).start()
        return True

    def shutdown(self) -> None:
        """Let every worker exit once its current task ends; later tasks are dropped."""
        with self._lock:
            self._shutdown = True
            for _ in range(self._threads):
                self._tasks.put(None)

    def _work(self) -> None:
        while True:
            try:
                task = self._tasks.get(timeout=self._idle_timeout)
            except queue.Empty:
                with self._lock:
                    if self._tasks.empty():
                        self._idle = max(0, self._idle - 1)
                        self._threads -= 1
                        return
                continue
            if task is None:
                return
            fn, args = task
            try:
                fn(*args)
            except Exception:  # a task must not kill the worker
                log.exception("an HTTP transport task failed")
            with self._lock:
                self._idle += 1
