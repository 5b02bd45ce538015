"""``TaskPush``: a task's status pushed by the server, where it offers that (2026-07-28).

The tasks extension lets a client name task ids in its ``subscriptions/listen`` filter
(``taskIds``); the server acknowledges those it will send ``notifications/tasks`` for, each
carrying the task's whole state. While a task's id stands in the acknowledgement of the stream
open now, its wait polls only as a rare safety net (``PUSHED_POLL_INTERVAL``); a task the server
left out, a stream being reopened or lost, and the legacy era are polled as before.
"""

from __future__ import annotations

import threading
from collections import Counter

from ...extensions import Session

__all__ = ["LISTEN_KEY", "PUSHED_POLL_INTERVAL", "TaskPush"]

#: The ``subscriptions/listen`` key naming the tasks whose status the client wants pushed.
LISTEN_KEY = "taskIds"
#: Seconds between the polls of a task whose status the server pushes: only in case a
#: notification went astray (the stream's end already falls back to polling).
PUSHED_POLL_INTERVAL = 60.0


class TaskPush:
    """The task ids waited for on one connection, asked of its listen stream."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._lock = threading.Lock()
        self._waiting: Counter[str] = Counter()  # task id -> waits in progress

    @property
    def offered(self) -> bool:
        """Whether the era has push at all (2026-07-28: a listen stream)."""
        return self._session.era == "modern"

    def watch(self, task_id: str) -> None:
        """A wait for ``task_id`` begins: ask for its notifications."""
        if not self.offered:
            return
        with self._lock:
            self._waiting[task_id] += 1
            ids = sorted(self._waiting)
        self._session.listen(LISTEN_KEY, ids)

    def unwatch(self, task_id: str) -> None:
        """A wait for ``task_id`` ended: its notifications are no longer needed by it."""
        if not self.offered:
            return
        with self._lock:
            self._waiting[task_id] -= 1
            if self._waiting[task_id] <= 0:
                del self._waiting[task_id]
            ids = sorted(self._waiting)
        self._session.listen(LISTEN_KEY, ids)

    def pushed(self, task_id: str) -> bool:
        """Whether the server agreed, on the stream open now, to push ``task_id``'s status."""
        honoured = self._session.listening(LISTEN_KEY)
        return isinstance(honoured, list) and task_id in honoured
