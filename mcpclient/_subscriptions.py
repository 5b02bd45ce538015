"""Change notifications: resource subscriptions and list changes, in either era.

Legacy servers take ``resources/subscribe`` and push ``list_changed`` notifications on their
own. Modern servers (2026-07-28) send nothing unasked: the client opens a long-lived
``subscriptions/listen`` request naming what it wants, on a thread of its own, and reopens it
(with backoff) when it drops or when the set of subscriptions changes.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from ._exceptions import ClientClosedError, ConnectionClosed, MCPError, RequestCancelled
from ._rpc.cancel import CancelToken

if TYPE_CHECKING:
    from ._conversation import Conversation

__all__ = ["Listener"]

log = logging.getLogger("mcpclient")

#: Backoff between attempts to reopen a dropped listen stream, in seconds.
RECONNECT_DELAYS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)


class Listener:
    """Keeps one ``subscriptions/listen`` stream open with the current filter (modern era)."""

    def __init__(self, session: Conversation) -> None:
        self._conversation = session
        self._lock = threading.Lock()
        self._filter: dict[str, Any] = {}
        self._token: CancelToken | None = None
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, **changes: Any) -> None:
        """Change the filter (``toolsListChanged=True``, ``resourceSubscriptions=[...]``)."""
        with self._lock:
            new = dict(self._filter)
            for key, value in changes.items():
                if value:
                    new[key] = value
                else:
                    new.pop(key, None)
            if new == self._filter and self._thread is not None:
                return
            self._filter = new
            token, self._token = self._token, None
            if self._thread is None and new and not self._stopped.is_set():
                self._thread = threading.Thread(target=self._run, name="mcpclient-listen", daemon=True)
                self._thread.start()
        if token is not None:
            token.cancel("subscriptions changed")  # the thread reopens with the new filter

    def stop(self) -> None:
        self._stopped.set()
        with self._lock:
            token, self._token = self._token, None
            thread = self._thread
        if token is not None:
            token.cancel("client closed")
        if thread is not None and thread is not threading.current_thread():
            thread.join(2.0)

    def _run(self) -> None:
        failures = 0
        while not self._stopped.is_set():
            with self._lock:
                notifications = dict(self._filter)
                if not notifications:
                    self._thread = None  # so that update() starts a new one for a new filter
                    return
                token = self._token = CancelToken()
            try:
                self._conversation.call(
                    "subscriptions/listen", {"notifications": notifications}, timeout=None, cancel=token
                )
                failures = 0
                log.info("the server ended the subscription stream; reopening it")
            except RequestCancelled:
                failures = 0
                continue
            except (ClientClosedError, ConnectionClosed):
                return
            except MCPError as exc:
                delay = RECONNECT_DELAYS[min(failures, len(RECONNECT_DELAYS) - 1)]
                failures += 1
                log.warning("the subscription stream failed (%s); reopening in %.1fs", exc, delay)
                if self._stopped.wait(delay):
                    return
