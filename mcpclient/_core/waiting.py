"""One way to wait: every blocking wait ends at its call's deadline, its cancel, or the end of
what it serves, whichever comes first.

An ``Until`` is made from three things:

* the call's time: ``timeout`` seconds from now, or an absolute ``deadline``
  (``time.monotonic()``); neither means no limit;
* the caller's ``cancel``: a ``CancelToken``, or a plain ``threading.Event`` (seen through the
  process's watcher thread, ``cancel.watch_event``, within 50 ms);
* the ``ends`` of what the wait serves: ``Lifetime`` objects, such as a connection's, which
  the engine ends at ``close()`` and at the connection's death, with the error its calls get.

Its waits end at the first of these and raise the matching error: ``RequestTimeout`` for the
deadline, ``RequestCancelled`` for the cancel, the lifetime's own error (``ClientClosedError``,
``ConnectionClosed``) for an end. They return normally when what they wait for comes first:

* ``wait(signal, timeout=None)``: until ``signal`` is set (True), or the waiter's own
  ``timeout`` passes (False: an approver's own limit, a poll's pause that a signal cuts short);
* ``sleep(seconds)``: a pause that a stop ends early;
* ``hold(lock)``: a ``WaitLock``, whose waiters a stop releases;
* ``call(fn, *args)``: a foreign blocking call (``input()``, a store's network call) run on a
  daemon thread, abandoned at a stop (it runs on, its outcome dropped); ``finish(job)`` waits
  for a ``Job`` started earlier, which a later wait may take up again.

Nothing polls: a ``Signal``, a ``CancelToken``, a lifetime and a released ``WaitLock`` wake
the waiter through callbacks. A plug-in gets its ``Until`` from the seam
(``Session.until(options)``), never builds one with a clock of its own.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import threading
import time
from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar

from .cancel import Cancel, CancelToken, watch_event
from .exceptions import MCPError, RequestCancelled, RequestTimeout

__all__ = ["Job", "Lifetime", "Signal", "Until", "WaitLock"]

T = TypeVar("T")
Callback = Callable[[], None]


class _Callbacks:
    """Functions to call when something happens; thread-safe."""

    __slots__ = ("_lock", "_callbacks")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._callbacks: list[Callback] = []

    def add(self, callback: Callback) -> None:
        with self._lock:
            self._callbacks.append(callback)

    def remove(self, callback: Callback) -> None:
        with self._lock:
            try:
                self._callbacks.remove(callback)
            except ValueError:
                pass

    def snapshot(self) -> list[Callback]:
        with self._lock:
            return list(self._callbacks)


class Signal:
    """Something a waiter waits for: set once (or set, cleared, set again), with callbacks.

    ``set()`` runs every callback on the setting thread; a callback added once it is set runs
    at once. ``clear()`` re-arms it (a waiter looks again at what it waits for after clearing).
    Thread-safe. Wait for one with ``Until.wait``.
    """

    __slots__ = ("_is_set", "_callbacks")

    def __init__(self) -> None:
        self._is_set = False
        self._callbacks = _Callbacks()

    def set(self) -> None:
        self._is_set = True
        for callback in self._callbacks.snapshot():
            callback()

    def clear(self) -> None:
        self._is_set = False

    def is_set(self) -> bool:
        return self._is_set

    def add_callback(self, callback: Callback) -> None:
        """Run ``callback()`` each time this is set (at once if it is set now)."""
        self._callbacks.add(callback)
        if self._is_set:
            callback()

    def remove_callback(self, callback: Callback) -> None:
        self._callbacks.remove(callback)

    def __repr__(self) -> str:
        return f"<Signal {'set' if self._is_set else 'clear'}>"


class Lifetime(Signal):
    """The life of what waits serve (a connection): ended once, with the error waits then raise."""

    __slots__ = ("_error",)

    def __init__(self) -> None:
        super().__init__()
        self._error: MCPError | None = None

    @property
    def error(self) -> MCPError | None:
        """Why it ended (``ClientClosedError``, ``ConnectionClosed``...); None while it lasts."""
        return self._error

    def end(self, error: MCPError) -> None:
        """End it with ``error`` and wake its waiters; once: a later end changes nothing."""
        with self._callbacks._lock:
            if self._error is not None:
                return
            self._error = error
        self.set()

    def __repr__(self) -> str:
        return f"<Lifetime {'ended: ' + str(self._error) if self._error is not None else 'running'}>"


class WaitLock:
    """A lock whose waiters a stop releases: take it with ``Until.hold(lock)``.

    ``try_acquire()`` takes it only if it is free; ``release()`` frees it and wakes the
    waiters. Not reentrant. Thread-safe.
    """

    __slots__ = ("_lock", "_released")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._released = _Callbacks()

    def try_acquire(self) -> bool:
        return self._lock.acquire(False)

    def release(self) -> None:
        self._lock.release()
        for callback in self._released.snapshot():
            callback()

    def locked(self) -> bool:
        return self._lock.locked()


class Job(Generic[T]):
    """``fn(*args)`` run on a daemon thread of its own: ``done`` is set when it returns or raises.

    For a blocking call nothing can interrupt (``input()``, a foreign client's network call):
    a waiter abandoned by a stop leaves it running, and its outcome is kept here for whoever
    takes it up (``Until.finish(job)``). It runs in a copy of the starting thread's context
    (``contextvars``), so what that holds (a trace's span, a notebook cell's output) goes with it.
    """

    def __init__(self, fn: Callable[..., T], *args: Any, name: str = "mcpclient-wait") -> None:
        self.done = Signal()
        self._result: T | None = None
        self._error: BaseException | None = None
        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(self._run, fn, args), name=name, daemon=True).start()

    def _run(self, fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        try:
            self._result = fn(*args)
        except BaseException as exc:  # handed to the waiter, who raises it
            self._error = exc
        self.done.set()

    def outcome(self) -> T:
        """What ``fn`` returned, or raise what it raised (call once ``done`` is set)."""
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]


class Until:
    """The bounds of a wait: a deadline, a cancel, and the ends of what it serves (module docstring).

    ``timeout`` (seconds from now) and ``deadline`` (``time.monotonic()``) bound it, the nearer
    of the two; ``cancel`` is the caller's; ``ends`` are lifetimes; ``method`` and ``what`` name
    the wait in its errors. Immutable; one Until may serve waits on several threads at once.
    """

    __slots__ = ("deadline", "cancel", "ends", "timeout", "method", "what")

    def __init__(
        self,
        timeout: float | None = None,
        *,
        deadline: float | None = None,
        cancel: Cancel | None = None,
        ends: Iterable[Lifetime] = (),
        method: str | None = None,
        what: str = "the wait",
    ) -> None:
        if timeout is not None:
            end = time.monotonic() + timeout
            deadline = end if deadline is None else min(deadline, end)
        #: When the time runs out (``time.monotonic()``), or None: no limit.
        self.deadline = deadline
        self.cancel = cancel
        self.ends: tuple[Lifetime, ...] = tuple(ends)
        #: The limit the errors name (the caller's ``timeout``, else what was left at the start).
        self.timeout = timeout if timeout is not None else (
            None if deadline is None else max(0.0, deadline - time.monotonic()))
        self.method = method
        self.what = what

    def __repr__(self) -> str:
        left = self.remaining()
        return f"<Until {self.what}: {'no limit' if left is None else f'{left:.3g}s left'}>"

    # -- what is left -----------------------------------------------------------------------

    def remaining(self) -> float | None:
        """Seconds left (never below zero), or None without a limit."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def within(self, timeout: float | None, *, what: str | None = None) -> Until:
        """This wait narrowed to at most ``timeout`` more seconds (None: no narrower); the
        same cancel and ends."""
        narrowed = Until(timeout, deadline=self.deadline, cancel=self.cancel, ends=self.ends,
                         method=self.method, what=what or self.what)
        if narrowed.deadline == self.deadline:  # the call's time is the nearer: its limit is named
            narrowed.timeout = self.timeout
        return narrowed

    def also(self, *ends: Lifetime, what: str | None = None) -> Until:
        """This wait, ended also by ``ends`` (what else it serves: an open that ``close()``
        abandons); the same time and cancel."""
        joined = self.within(None, what=what)
        joined.ends = (*self.ends, *ends)
        return joined

    def stopped(self) -> MCPError | None:
        """The error a wait would raise now, or None: an end first, then the cancel, then the time."""
        for end in self.ends:
            error = end.error
            if error is not None:
                return copy.copy(error)
        cancel = self.cancel
        if cancel is not None and (cancel.cancelled if isinstance(cancel, CancelToken) else cancel.is_set()):
            reason = cancel.reason if isinstance(cancel, CancelToken) else None
            return RequestCancelled(f"{self.what} was cancelled{f' ({reason})' if reason else ''}",
                                    method=self.method)
        if self.deadline is not None and time.monotonic() >= self.deadline:
            limit = f" ({self.timeout:.3g}s)" if self.timeout is not None else ""
            return RequestTimeout(f"{self.what} did not end within its time{limit}", method=self.method,
                                  timeout=self.timeout)
        return None

    def check(self) -> None:
        """Raise what ``stopped()`` says, if anything."""
        error = self.stopped()
        if error is not None:
            raise error

    def on_stop(self, callback: Callback) -> Callback:
        """Run ``callback()`` at the cancel or an end (not the deadline, which no thread
        marks); returns what undoes it. For a waiter that must hear of a stop its own way
        (``ApprovalRequest.ended``)."""
        undo: list[Callback] = []
        cancel = self.cancel
        if isinstance(cancel, CancelToken):
            cancel.add_callback(callback)
            undo.append(lambda: cancel.remove_callback(callback))
        elif cancel is not None:
            undo.append(watch_event(cancel, callback).stop)
        for end in self.ends:
            end.add_callback(callback)
            undo.append(_remover(end, callback))
        if not undo:
            return _nothing
        if len(undo) == 1:
            return undo[0]

        def undo_all() -> None:
            for step in undo:
                step()

        return undo_all

    # -- the waits ------------------------------------------------------------------------

    def wait(self, signal: Signal | CancelToken, timeout: float | None = None) -> bool:
        """Wait until ``signal`` is set (True), or ``timeout`` seconds of the waiter's own pass
        first (False); raises at a stop (module docstring). ``timeout`` None: no own limit."""
        if isinstance(signal, CancelToken):
            return self._park(lambda: signal.cancelled, signal, timeout)
        return self._park(signal.is_set, signal, timeout)

    def sleep(self, seconds: float) -> None:
        """Pause ``seconds``; raises at a stop, which ends the pause early."""
        self._park(_never, None, max(0.0, seconds))

    @contextlib.contextmanager
    def hold(self, lock: WaitLock) -> Iterator[None]:
        """Hold ``lock`` for the block, once it is free; raises at a stop while waiting for it
        (and at once if the wait is over already: nothing is done for an ended call)."""
        self.check()
        self._park(lock.try_acquire, _Released(lock), None)
        try:
            yield
        finally:
            lock.release()

    def call(self, fn: Callable[..., T], *args: Any, name: str = "mcpclient-wait") -> T:
        """``fn(*args)`` on a daemon thread, waited for; raises at a stop, leaving it running."""
        return self.finish(Job(fn, *args, name=name))

    def finish(self, job: Job[T]) -> T:
        """What ``job`` returns (or raise what it raises), waited for; raises at a stop."""
        self._park(job.done.is_set, job.done, None)
        return job.outcome()

    def _park(self, ready: Callable[[], bool], source: Any, timeout: float | None) -> bool:
        """Block until ``ready()`` (True), ``timeout`` (False) or a stop (raise); ``source``
        (``add_callback``/``remove_callback``) wakes the waiter when ``ready`` may have changed."""
        if ready():
            return True
        self.check()
        own_end = None if timeout is None else time.monotonic() + timeout
        wake = threading.Event()
        undo = self.on_stop(wake.set)
        if source is not None:
            source.add_callback(wake.set)
        try:
            while True:
                if ready():
                    return True
                self.check()
                now = time.monotonic()
                if own_end is not None and now >= own_end:
                    return False
                ends = [end for end in (self.deadline, own_end) if end is not None]
                # The one blocking wait of the primitive: everything that ends it sets ``wake``.
                wake.wait(min(ends) - now if ends else None)
                wake.clear()  # then look again at everything, so no wake-up is lost
        finally:
            if source is not None:
                source.remove_callback(wake.set)
            undo()


class _Released:
    """A ``WaitLock``'s releases as a source of wake-ups."""

    __slots__ = ("_lock",)

    def __init__(self, lock: WaitLock) -> None:
        self._lock = lock

    def add_callback(self, callback: Callback) -> None:
        self._lock._released.add(callback)

    def remove_callback(self, callback: Callback) -> None:
        self._lock._released.remove(callback)


def _remover(end: Lifetime, callback: Callback) -> Callback:
    return lambda: end.remove_callback(callback)


def _never() -> bool:
    return False


def _nothing() -> None:
    return None
