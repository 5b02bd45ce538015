"""Requests raced on their own threads: the era probe asks two ways and takes the first answer.

``Engine.request`` blocks its caller, so to have ``server/discover`` and ``initialize`` in
flight at once each runs on a short-lived daemon thread, and the caller waits on one queue for
whichever ends first. An attempt that loses is abandoned: its cancel token is cancelled when it
has one (``initialize`` has none, since the specification forbids cancelling it: the thread then
ends with the request's own timeout or when the client closes).
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, NamedTuple

from .cancel import CancelToken

__all__ = ["Finished", "Race"]


class Finished(NamedTuple):
    """One attempt's end: its name, and its result or the exception it raised."""

    name: str
    result: dict[str, Any] | None
    error: BaseException | None
    elapsed: float


class Race:
    def __init__(self) -> None:
        self._done: queue.Queue[Finished] = queue.Queue()
        self._tokens: dict[str, CancelToken] = {}
        self._running = 0
        self._start = time.monotonic()

    def start(self, name: str, request: Callable[[CancelToken | None], dict[str, Any]], *, cancellable: bool) -> None:
        """Run ``request(token)`` on a thread; ``token`` is None when it must not be cancelled."""
        token = CancelToken() if cancellable else None
        if token is not None:
            self._tokens[name] = token
        self._running += 1

        def run() -> None:
            try:
                result, error = request(token), None
            except BaseException as exc:  # handed to the waiting caller, which raises or judges it
                result, error = None, exc
            self._done.put(Finished(name, result, error, time.monotonic() - self._start))

        threading.Thread(target=run, name=f"mcpclient-probe-{name.replace('/', '-')}", daemon=True).start()

    @property
    def running(self) -> int:
        return self._running

    def next(self, timeout: float | None) -> Finished | None:
        """The next attempt to end, or None if none ends within ``timeout``."""
        try:
            finished = self._done.get(timeout=timeout)
        except queue.Empty:
            return None
        self._running -= 1
        return finished

    def abandon(self, reason: str) -> None:
        """Give up the attempts still running (the cancellable ones are cancelled)."""
        for token in self._tokens.values():
            token.cancel(reason)
