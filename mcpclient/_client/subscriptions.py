"""Change notifications: resource subscriptions and list changes, in either era.

Legacy servers take ``resources/subscribe`` and push ``list_changed`` notifications on their
own. Modern servers (2026-07-28) send nothing unasked: the client opens a long-lived
``subscriptions/listen`` request naming what it wants, on a thread of its own, and reopens it
(with backoff) when it drops or when the set of subscriptions changes.

The server acknowledges each stream (``notifications/subscriptions/acknowledged``, carrying the
stream's request id as ``io.modelcontextprotocol/subscriptionId``) with the part of the filter
it agreed to honour. ``Listener.acknowledged`` waits for that answer to the current filter, so
``subscribe_resource`` returns once the server has agreed, and raises when it has not.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Callable

from .._core.cancel import CancelToken
from .._core.exceptions import ClientClosedError, ConnectionClosed, MCPError, RequestCancelled
from .._core.options import CallOptions
from .._core.waiting import Lifetime, Signal, Until

if TYPE_CHECKING:
    from .conversation import Conversation

__all__ = ["ACKNOWLEDGED", "Listener"]

log = logging.getLogger("mcpclient")

#: Backoff between attempts to reopen a dropped listen stream, in seconds.
RECONNECT_DELAYS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)

#: The server's answer to a listen request: what of its filter it will honour.
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
#: The ``_meta`` key naming the listen request a stream's messages belong to.
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


class Listener:
    """Keeps one ``subscriptions/listen`` stream open with the current filter (modern era)."""

    def __init__(self, conversation: Conversation) -> None:
        self._conversation = conversation
        self._lock = threading.Lock()
        self._filter: dict[str, Any] = {}
        self._token: CancelToken | None = None
        self._stopped = Lifetime()  # ended by stop() (close)
        self._thread: threading.Thread | None = None
        #: Set when an acknowledgement comes or the filter changes, then replaced by a fresh one
        #: (under ``_lock``): a waiter takes the one of the state it read, so no change is missed.
        self._changed = Signal()
        self._stream_id: Any = None  # the request id of the open listen stream
        self._stream_filter: dict[str, Any] | None = None  # the filter that stream asked for
        self._acked: dict[str, Any] | None = None  # what the server agreed to, for _stream_filter

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
            changed, self._changed = self._changed, Signal()
            token, self._token = self._token, None
            if self._thread is None and new and not self._stopped.is_set():
                self._thread = threading.Thread(target=self._run, name="mcpclient-listen", daemon=True)
                self._thread.start()
        changed.set()
        if token is not None:
            token.cancel("subscriptions changed")  # the thread reopens with the new filter

    def _until(self, timeout: float | None = None) -> Until:
        """A wait of the listener's: ended by ``timeout``, stop() (close) and the connection's death."""
        return Until(timeout, ends=(self._stopped, self._conversation.engine.lifetime),
                     what="the listen stream's acknowledgement")

    def acknowledged(self, timeout: float | None) -> dict[str, Any] | None:
        """What the server agreed to honour of the current filter, once it says so; None when
        ``timeout`` passes first, the listener stops or the connection ends."""
        until = self._until(timeout)
        while True:
            with self._lock:
                if self._acked is not None and self._stream_filter == self._filter:
                    return dict(self._acked)
                changed = self._changed
            try:
                until.wait(changed)
            except MCPError:
                return None

    def asked(self) -> dict[str, Any]:
        """The filter asked for now."""
        with self._lock:
            return dict(self._filter)

    def honoured(self) -> dict[str, Any] | None:
        """What the server acknowledged of the filter asked for now, on the stream open now;
        None until it has (a stream being reopened for a new filter, or lost, has no answer)."""
        with self._lock:
            if self._acked is None or self._stream_filter != self._filter:
                return None
            return dict(self._acked)

    def on_acknowledged(self, params: dict[str, Any]) -> None:
        """The server's acknowledgement of a stream (a dispatch thread); a stale stream's is ignored."""
        meta = params.get("_meta")
        sid = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        honoured = params.get("notifications")
        if not isinstance(honoured, dict):
            log.warning("the server's subscription acknowledgement has no notifications object: ignored")
            return
        with self._lock:
            if self._stream_filter is None or (sid is not None and sid != self._stream_id):
                return  # for a stream already replaced by one with a newer filter
            self._acked = honoured
            asked = self._stream_filter
            changed, self._changed = self._changed, Signal()
        changed.set()
        refused = [key for key, value in asked.items() if value is True and honoured.get(key) is not True]
        if refused:
            log.info("the server will not send %s (not acknowledged)", ", ".join(refused))

    def stop(self) -> None:
        self._stopped.end(ClientClosedError())  # wakes every wait of the listener
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
                if self._stopped.is_set():
                    return  # stop() ran before this token existed: it could not cancel it
                if not notifications:
                    self._thread = None  # so that update() starts a new one for a new filter
                    return
                token = self._token = CancelToken()
                self._stream_id, self._stream_filter, self._acked = None, None, None
            try:
                self._listen(notifications, token)
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
                try:
                    self._until().sleep(delay)
                except MCPError:  # stopped, or the connection ended
                    return

    def _listen(self, notifications: dict[str, Any], token: CancelToken) -> None:
        """One stream, to its end; its acknowledgement holds no longer than it (``honoured``)."""
        try:
            self._conversation.call("subscriptions/listen", {"notifications": notifications},
                                    CallOptions(cancel=token, on_sent=self._opening(token, notifications)))
        finally:
            with self._lock:
                if self._token is token or self._token is None:
                    self._stream_filter, self._acked = None, None

    def _opening(self, token: CancelToken, notifications: dict[str, Any]) -> Callable[[Any], None]:
        """Learn the id of the stream about to open (before it is written: before its acknowledgement)."""

        def sent(request_id: Any) -> None:
            with self._lock:
                if self._token is token:
                    self._stream_id, self._stream_filter = request_id, notifications

        return sent
