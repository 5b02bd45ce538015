"""Cancellation as seen by handlers: a small, thread-safe flag with a reason."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import Callable, Iterator, Union

from .exceptions import RequestCancelled

log = logging.getLogger("mcpclient")

__all__ = ["Cancel", "CancelToken", "EventWatch", "is_cancelled", "linked_token", "watch_event"]


class CancelToken:
    """A thread-safe cancellation flag with a reason.

    Pass one as ``cancel=`` to a client call to cancel that call from another thread.

    Every sampling and elicitation handler receives one. It is cancelled when the client
    closes, or when the server sends ``notifications/cancelled`` for the request being handled.
    A handler that waits (on a user, a model, a queue) should wait on ``token.wait(timeout)``
    or check ``token.cancelled`` so that ``Client.close()`` returns promptly.
    """

    __slots__ = ("_event", "_lock", "_callbacks", "reason", "by_peer")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self.reason: str | None = None
        self.by_peer = False

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass; return whether cancelled."""
        return self._event.wait(timeout)

    def cancel(self, reason: str = "cancelled", *, by_peer: bool = False) -> None:
        """Cancel; the first reason given is kept. Safe to call from any thread."""
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self.by_peer = by_peer
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_callback(self, callback: Callable[[], None]) -> None:
        """Run ``callback()`` on cancellation (at once if already cancelled)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def remove_callback(self, callback: Callable[[], None]) -> None:
        with self._lock:
            try:
                self._callbacks.remove(callback)
            except ValueError:
                pass

    def raise_if_cancelled(self) -> None:
        """Raise ``RequestCancelled`` if cancelled."""
        if self._event.is_set():
            raise RequestCancelled(f"cancelled: {self.reason}")

    def __repr__(self) -> str:
        state = f"cancelled ({self.reason})" if self.cancelled else "active"
        return f"<CancelToken {state}>"


#: What a caller may pass as ``cancel=``: a ``CancelToken`` or a plain ``threading.Event``.
Cancel = Union[CancelToken, threading.Event]


def is_cancelled(cancel: Cancel | None) -> bool:
    """Whether ``cancel`` (a token, an event, or nothing) has been set."""
    if cancel is None:
        return False
    return cancel.cancelled if isinstance(cancel, CancelToken) else cancel.is_set()


@contextlib.contextmanager
def linked_token(cancel: Cancel | None) -> Iterator[CancelToken]:
    """A fresh token for handlers, cancelled (with the same reason) while ``cancel`` is.

    Handlers answering a server's input requests receive their own token, so that a handler
    cancelling it never cancels the caller's call; the caller's cancel still reaches them
    while the block runs: a ``CancelToken``'s through a callback, a plain ``Event``'s through
    the watcher thread (``watch_event``). Both stop following when the block ends.
    """
    token = CancelToken()
    if isinstance(cancel, CancelToken):
        follow = lambda: token.cancel(cancel.reason or "cancelled")  # noqa: E731
        cancel.add_callback(follow)
        try:
            yield token
        finally:
            cancel.remove_callback(follow)
    elif cancel is not None:
        watch = watch_event(cancel, lambda: token.cancel("cancelled by the caller"))
        try:
            yield token
        finally:
            watch.stop()
    else:
        yield token


#: How often the watcher thread looks at the plain Events it watches.
EVENT_POLL_INTERVAL = 0.05


class EventWatch:
    """One plain ``threading.Event`` watched for a call: ``callback()`` runs once it is set."""

    __slots__ = ("event", "callback")

    def __init__(self, event: threading.Event, callback: Callable[[], None]) -> None:
        self.event = event
        self.callback = callback

    def stop(self) -> None:
        """Stop watching (the callback may already be running, or have run)."""
        with _watch_lock:
            _watched.discard(self)


_watch_lock = threading.Lock()
_watched: set[EventWatch] = set()
_watcher: threading.Thread | None = None


def watch_event(event: threading.Event, callback: Callable[[], None]) -> EventWatch:
    """Run ``callback()`` (on the watcher thread) within ``EVENT_POLL_INTERVAL`` of ``event``
    being set; ``stop()`` the returned watch when the call ends.

    A plain ``Event`` given as ``cancel=`` has no callbacks, and a thread blocked sending (an
    HTTP request waiting for its headers) is not looking at it: one daemon thread for the
    whole process looks at every such Event for it, and ends when none is left.
    """
    global _watcher
    watch = EventWatch(event, callback)
    with _watch_lock:
        _watched.add(watch)
        if _watcher is None:
            _watcher = threading.Thread(target=_watch_events, name="mcpclient-cancel-watch", daemon=True)
            _watcher.start()
    return watch


def _watch_events() -> None:
    global _watcher
    while True:
        with _watch_lock:
            if not _watched:
                _watcher = None
                return
            fired = [watch for watch in _watched if watch.event.is_set()]
            _watched.difference_update(fired)
        for watch in fired:
            try:
                watch.callback()
            except Exception:  # a callback's failure must not stop the others
                log.exception("a cancel callback failed")
        time.sleep(EVENT_POLL_INTERVAL)


def _forget_watcher_after_fork() -> None:
    global _watch_lock, _watcher
    _watch_lock = threading.Lock()
    _watched.clear()
    _watcher = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_watcher_after_fork)
