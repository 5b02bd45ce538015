"""One open thing per process: what ``SharedClient`` and ``SharedGroup`` are built on.

A web app or task worker creates its shared client once, at import time, usually in a process
that will fork (gunicorn's master with ``--preload``, Celery's prefork pool, uWSGI). A
``Client`` cannot cross a fork (its reader thread stays behind), so the holder keeps the pid
that opened its value and opens a new one the first time it is used in any other process.

Why a lock with a timeout: opening starts a server and waits for its handshake. Every request
thread arriving meanwhile must wait for that one open (two threads must never start two
servers), but a hung open must not hold every request thread of the worker forever: a thread
that has waited ``lock_timeout`` gives up with ``RequestTimeout``.

Why an at-fork hook as well as the pid check: a lock held by a parent thread at fork time stays
held forever in the child (only the forking thread is copied). The hook gives the child fresh
locks before any of its threads can take them. The pid check alone decides what is stale.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import weakref
from typing import Callable, Generic, TypeVar

from .._core.exceptions import RequestTimeout

__all__ = ["ProcessLocal"]

log = logging.getLogger("mcpclient")

T = TypeVar("T")

_live: weakref.WeakSet[ProcessLocal[object]] = weakref.WeakSet()


class ProcessLocal(Generic[T]):
    """A value opened lazily once per process, dropped and reopened on demand.

    ``open()`` makes a value, ``close(value)`` ends one this process opened, and
    ``release(value)`` lets go of one inherited through fork() without touching what it
    connects to (that belongs to the parent).
    """

    def __init__(
        self,
        open: Callable[[], T],
        close: Callable[[T], None],
        release: Callable[[T], None],
        *,
        lock_timeout: float | None,
        what: str,
    ) -> None:
        self._open = open
        self._close = close
        self._release = release
        self.lock_timeout = lock_timeout
        self.what = what
        self._lock = threading.Lock()
        self._value: T | None = None
        self._pid = os.getpid()
        self._inherited: list[T] = []
        #: How many values this process opened; the last error seen (type and first line).
        self.opened = 0
        self.last_error: str | None = None
        self.last_error_at: float | None = None
        _live.add(self)  # type: ignore[arg-type]

    def current(self) -> T | None:
        """The value open in this process, or None; never opens."""
        value = self._value
        return value if value is not None and self._pid == os.getpid() else None

    def get(self) -> T:
        """The value of this process, opened first if there is none (one thread opens)."""
        value = self.current()
        if value is not None:
            return value
        timeout = -1 if self.lock_timeout is None else self.lock_timeout
        if not self._lock.acquire(timeout=timeout):
            raise RequestTimeout(
                f"waited {self.lock_timeout} s for another thread opening {self.what}; giving up",
                timeout=self.lock_timeout,
            )
        try:
            self._forget_parent()
            if self._value is None:
                try:
                    self._value = self._open()
                except BaseException as exc:
                    self.note_error(exc)
                    raise
                self.opened += 1
            return self._value
        finally:
            self._lock.release()

    def discard(self, value: T, error: BaseException | None = None) -> None:
        """``value`` is broken (its server died): close it; the next ``get`` opens anew.

        A no-op for the value if another thread already replaced it.
        """
        if error is not None:
            self.note_error(error)
        with self._lock:
            if self._value is value and self._pid == os.getpid():
                self._value = None
            else:
                return
        self._safe_close(value)

    def close(self) -> None:
        """Close this process's value, if any (the next ``get`` opens again); idempotent."""
        with self._lock:
            self._forget_parent()
            value, self._value = self._value, None
        if value is not None:
            self._safe_close(value)

    def note_error(self, error: BaseException) -> None:
        first_line = (str(error).splitlines() or [""])[0]
        self.last_error = f"{type(error).__name__}: {first_line}"[:300]
        self.last_error_at = time.time()

    def _safe_close(self, value: T) -> None:
        try:
            self._close(value)
        except Exception:  # closing must not fail the request that found the server dead
            log.warning("error while closing %s", self.what, exc_info=True)

    def _forget_parent(self) -> None:
        """In a process other than the opener's (call with the lock held): let go of the
        inherited value without closing the parent's server, and start counting afresh."""
        pid = os.getpid()
        if self._pid == pid:
            return
        if self._value is not None:
            self._inherited.append(self._value)
            self._value = None
        self._pid = pid
        self.opened = 0
        self.last_error = self.last_error_at = None
        inherited, self._inherited = self._inherited, []
        for value in inherited:
            try:
                self._release(value)
            except Exception:
                log.debug("could not release a value inherited through fork()", exc_info=True)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()


def _after_fork_in_child() -> None:
    for holder in list(_live):
        holder._after_fork_in_child()


def _close_all_at_exit() -> None:
    """At interpreter exit, close what this process opened (inherited values are skipped)."""
    for holder in list(_live):
        if holder.current() is not None:
            holder.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_all_at_exit)
