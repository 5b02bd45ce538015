"""One open thing per process: what ``SharedClient`` and ``SharedGroup`` are built on.

A web app or task worker creates its shared client once, at import time, usually in a process
that will fork (gunicorn's master with ``--preload``, Celery's prefork pool, uWSGI). A
``Client`` cannot cross a fork (its reader thread stays behind), so the holder keeps the pid
that opened its value and opens a new one the first time it is used in any other process.

Why an open of its own: opening starts a server and waits for its handshake. Every request
thread arriving meanwhile must wait for that one open (two threads must never start two
servers), but each waits only as long as its own call may (``get(until)``: the call's
deadline, its cancel), and ``close()`` ends the wait of all. So the open runs on a thread of
its own (a ``Job``): a caller whose time runs out leaves, the open goes on for those still
waiting and those who come, and ends by its own handshake timeout. Every thread that waited
for an open gets its outcome: a failed open fails them all, and the next caller, after it,
opens again.

Why an at-fork hook as well as the pid check: a lock held by a parent thread at fork time stays
held forever in the child (only the forking thread is copied), and an open in progress there
never ends in the child (its thread is not copied). The hook gives the child a fresh lock and
no open before any of its threads can look. The pid check alone decides what is stale.
"""

from __future__ import annotations

import atexit
import copy
import logging
import os
import threading
import time
import weakref
from typing import Callable, Generic, TypeVar

from .._core.exceptions import ClientClosedError
from .._core.waiting import Job, Lifetime, Until

__all__ = ["ProcessLocal", "error_line"]

log = logging.getLogger("mcpclient")

T = TypeVar("T")

_live: weakref.WeakSet[ProcessLocal[object]] = weakref.WeakSet()


def error_line(error: BaseException, redact: Callable[[str], str] = str) -> str:
    """``error`` as a health check shows it: "Type: first line", through ``redact``, cut at 300."""
    first_line = (redact(str(error)).splitlines() or [""])[0]
    return f"{type(error).__name__}: {first_line}"[:300]


class _Opening(Generic[T]):
    """One open in progress: its thread, and its life, which ``close()`` ends."""

    __slots__ = ("job", "life")

    def __init__(self, open: Callable[[_Opening[T]], T]) -> None:
        self.life = Lifetime()
        self.job: Job[T] = Job(open, self, name="mcpclient-open")


class ProcessLocal(Generic[T]):
    """A value opened lazily once per process, dropped and reopened on demand.

    ``open()`` makes a value, ``close(value)`` ends one this process opened, and
    ``release(value)`` lets go of one inherited through fork() without touching what it
    connects to (that belongs to the parent). ``lock_timeout`` (None: none) is the longest a
    thread waits for another thread's open, on top of its own call's bounds.
    """

    def __init__(
        self,
        open: Callable[[], T],
        close: Callable[[T], None],
        release: Callable[[T], None],
        *,
        lock_timeout: float | None,
        what: str,
        redact: Callable[[str], str] = str,
    ) -> None:
        self._open = open
        self._redact = redact  # what the last error may show (the owner's credentials hidden)
        self._close = close
        self._release = release
        self.lock_timeout = lock_timeout
        self.what = what
        self._lock = threading.Lock()  # held for a look or a change, never while opening
        self._value: T | None = None
        self._opening: _Opening[T] | None = None
        self._pid = os.getpid()
        self._inherited: list[T] = []
        #: How many values this process opened; the last error seen (type and first line).
        self.opened = 0
        self.last_error: str | None = None
        _live.add(self)  # type: ignore[arg-type]

    def current(self) -> T | None:
        """The value open in this process, or None; never opens."""
        value = self._value
        return value if value is not None and self._pid == os.getpid() else None

    @property
    def opening(self) -> bool:
        """Whether an open is in progress in this process (its value may come)."""
        return self._opening is not None and self._pid == os.getpid()

    def get(self, until: Until | None = None) -> T:
        """The value of this process, opened first if there is none (on a thread of its own,
        once, for every thread that waits meanwhile).

        The wait ends at ``until`` (the caller's deadline and cancel: ``RequestTimeout``,
        ``RequestCancelled``), after ``lock_timeout`` for an open another thread began, and at ``close()``
        (``ClientClosedError``); what the open raised is raised to every thread that waited
        for it.
        """
        value = self.current()
        if value is not None:
            return value
        with self._lock:
            self._forget_parent()
            if self._value is not None:
                return self._value
            opening = self._opening
            joined = opening is not None
            if opening is None:
                opening = self._opening = _Opening(self._open_now)
        what = f"waiting for another thread opening {self.what}" if joined else f"opening {self.what}"
        wait = (until or Until()).also(opening.life, what=what)
        if joined and self.lock_timeout is not None:
            wait = wait.within(self.lock_timeout)
        try:
            return wait.finish(opening.job)
        except Exception as exc:
            raise _own(exc) from None

    def _open_now(self, opening: _Opening[T]) -> T:
        """The open's thread: open, and keep the value unless ``close()`` came meanwhile."""
        try:
            value = self._open()
        except BaseException as exc:
            self.note_error(exc)
            with self._lock:
                if self._opening is opening:
                    self._opening = None
            raise
        with self._lock:
            kept = self._opening is opening and self._pid == os.getpid()
            if kept:
                self._opening = None
                self._value = value
                self.opened += 1
        if not kept:  # closed while it opened: its waiters were told so
            self._safe_close(value)
            raise ClientClosedError(f"{self.what} was closed while it was opening")
        return value

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
        """Close this process's value, if any, and end an open in progress (its waiters get
        ``ClientClosedError``; what it opens is closed); the next ``get`` opens again. Idempotent."""
        with self._lock:
            self._forget_parent()
            value, self._value = self._value, None
            opening, self._opening = self._opening, None
        if opening is not None:
            opening.life.end(ClientClosedError(f"{self.what} was closed while it was opening"))
        if value is not None:
            self._safe_close(value)

    def note_error(self, error: BaseException) -> None:
        self.last_error = error_line(error, self._redact)

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
        self.last_error = None
        inherited, self._inherited = self._inherited, []
        for value in inherited:
            try:
                self._release(value)
            except Exception:
                log.debug("could not release a value inherited through fork()", exc_info=True)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        self._opening = None  # its thread was not copied: it would never end here


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


def _own(error: Exception) -> Exception:
    """A copy of ``error`` for one waiter (several threads raise what one open raised), with
    the open's traceback."""
    try:
        mine = copy.copy(error)
    except Exception:
        return error
    return mine.with_traceback(error.__traceback__)
