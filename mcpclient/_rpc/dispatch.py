"""What the server sends, run: its requests and notifications, on the bounded dispatch pool.

The engine's reader routes each message (``Engine._route``); a reply wakes its caller there, and
everything else comes here. A server request runs concurrently with the others, on the pool
(``pool.DispatchPool``); its handler's result or error goes back as the reply. Notifications and
progress callbacks share one *lane*: they run one at a time, in the order the server sent them,
so a user's handler sees log lines, progress and list changes in order. What may wait is bounded
(``capacity``): past it a server request is refused as busy and a notification dropped (and
counted, ``dropped``), never queued without end. ``notifications/cancelled`` cancels the token
of the request it names at once, on the reader's thread.

A handler that makes a call to the same server is *parked* while it waits (``parked``), so the
pool lends a thread to what that call needs dispatched. ``close`` cancels every running handler,
waits a grace period for them (``wait_idle``), and lets them go.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import threading
import time
from typing import Any, Callable, Iterator

from .._core.cancel import CancelToken
from .._core.exceptions import MCPError, RPCError
from .pool import DispatchPool
from .slots import _Slot

__all__ = ["Dispatcher", "NotificationHandler", "RequestHandler", "error_reply", "hashable", "key"]

log = logging.getLogger(__name__)

#: How long a reply to a server request may take to write before it is given up.
REPLY_SEND_TIMEOUT = 10.0
#: Beyond the workers, how many dispatches may wait in the queue before new ones are refused.
DEFAULT_QUEUE_FACTOR = 64
#: How many dispatch threads there may be in all, as a multiple of ``max_dispatch``: past
#: ``max_dispatch`` only to stand in for handlers waiting on calls to this same server (see
#: ``DispatchPool``); once every one of them waits, a server request is refused as busy.
DISPATCH_THREADS_FACTOR = 8
#: A notification queued behind one whose handler has run this long gets a warning logged.
LANE_BLOCKED_WARNING = 5.0

RequestHandler = Callable[[str, "dict[str, Any]", CancelToken], Any]
NotificationHandler = Callable[[str, "dict[str, Any]"], None]
#: Writes one message to the server within a deadline (``Engine._send``); raises ``MCPError``.
Send = Callable[["dict[str, Any]", float], None]


class _LaneFlag(threading.local):
    """Whether the current thread is running the notification lane (``Dispatcher._drain_lane``)."""

    on_lane = False


class _HandlerFlag(threading.local):
    """Whether the current thread is running one of the dispatcher's handlers (not waiting in a
    call of its own: see ``Dispatcher.parked``)."""

    active = False


class Dispatcher:
    """Runs the server's requests and notifications for one engine.

    ``on_request(method, params, token)`` answers a server request: it returns the result, or
    raises ``RPCError`` for an error reply. ``on_notification(method, params)`` receives every
    notification. ``send(message, deadline)`` writes a reply; ``closed()`` says whether the
    client is closed (no reply is written then).
    """

    def __init__(
        self,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        send: Send,
        closed: Callable[[], bool],
        max_dispatch: int,
        max_queue: int | None = None,
    ) -> None:
        if max_dispatch < 1:
            raise ValueError("max_dispatch must be at least 1")
        self._on_request = on_request
        self._on_notification = on_notification
        self._send = send
        self._closed = closed
        queue = max_dispatch * DEFAULT_QUEUE_FACTOR if max_queue is None else max_queue
        self._capacity = threading.BoundedSemaphore(max_dispatch + queue)
        self._pool = DispatchPool(max_dispatch, max_dispatch * DISPATCH_THREADS_FACTOR, "mcpclient-dispatch")
        #: The server's requests running or queued, by id: ``notifications/cancelled`` names them.
        self._inbound: dict[Any, CancelToken] = {}
        self._busy = 0
        self._busy_cond = threading.Condition()
        self._handler = _HandlerFlag()
        self._dropped = 0
        self._lane: collections.deque[tuple[Callable[..., None], tuple[Any, ...]]] = collections.deque()
        self._lane_lock = threading.Lock()
        self._lane_busy = False
        self._lane_flag = _LaneFlag()
        self._lane_since = 0.0  # when the running lane item started
        self._lane_warned = False  # about the running item

    # -- what the engine asks -----------------------------------------------------------------

    @property
    def dropped(self) -> int:
        """How many notifications were dropped because the queue was full."""
        return self._dropped

    @property
    def on_lane(self) -> bool:
        """Whether this thread runs the notification lane (a notification or progress handler)."""
        return self._lane_flag.on_lane

    @property
    def handler_flag(self) -> _HandlerFlag:
        """The thread-local flag whose ``active`` says this thread runs one of the dispatcher's
        handlers, not parked (read on every call: ``Engine.request`` keeps it at hand)."""
        return self._handler

    @contextlib.contextmanager
    def parked(self) -> Iterator[None]:
        """While a handler waits on a call of its own: its worker is parked in the pool, so what
        the call needs dispatched (the server's requests from inside it, its progress) gets a
        thread."""
        flag = self._handler
        flag.active = False
        self._pool.park()
        try:
            yield
        finally:
            self._pool.unpark()
            flag.active = True

    def tokens(self) -> list[CancelToken]:
        """The cancel tokens of the server requests running or queued now."""
        return list(self._inbound.values())

    def wait_idle(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for the running handlers (but the caller's own) to end."""
        own = 1 if self._handler.active else 0
        deadline = time.monotonic() + grace
        with self._busy_cond:
            while self._busy > own:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning(
                        "%d handler(s) still running %.1fs after close; leaving them behind", self._busy - own, grace
                    )
                    return
                self._busy_cond.wait(left)

    def shutdown(self) -> None:
        self._pool.shutdown()

    def forget_parent(self) -> None:
        """In a forked child: replace what a parent thread may have held at fork time."""
        self._busy_cond = threading.Condition()
        self._busy = 0

    # -- what comes in ------------------------------------------------------------------------

    def notification(self, method: str, params: dict[str, Any]) -> None:
        """Queue a notification for ``on_notification`` on the lane (dropped, counted, when full)."""
        if method == "notifications/cancelled":
            token = self._inbound.get(key(params.get("requestId")))
            if token is not None:
                token.cancel(str(params.get("reason") or "cancelled by the server"), by_peer=True)
        if not self._capacity.acquire(blocking=False):
            self._dropped += 1
            if self._dropped == 1 or self._dropped % 1000 == 0:
                log.warning("dispatch pool full: dropped notification %r (%d dropped so far)", method, self._dropped)
            return
        self._submit_ordered(self._run_notification, method, params)

    def progress(self, slot: _Slot, progress: float, total: float | None, message: str | None) -> None:
        """Queue a call's progress callback on the lane, in order with the notifications."""
        if not self._capacity.acquire(blocking=False):
            return
        assert slot.progress_idle is not None
        with slot.progress_idle:
            slot.progress_queued += 1  # counted until the callback has run
        self._submit_ordered(self._run_progress, slot, progress, total, message)

    def request(self, message: dict[str, Any], method: str) -> None:
        """Run a server request on the pool; its reply (or a refusal) is sent from there."""
        request_id = message["id"]
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            self._reply_error(request_id, RPCError.INVALID_PARAMS, "params must be an object")
            return
        if not self._capacity.acquire(blocking=False):
            log.warning("dispatch pool full: refusing server request %r", method)
            self._reply_error(request_id, RPCError.INTERNAL_ERROR, "client is overloaded; try again later")
            return
        token = CancelToken()
        ident = key(request_id)
        if ident is not None:
            self._inbound[ident] = token
        refuse = functools.partial(self._refuse_busy, request_id, method)
        self._submit(self._run_request, request_id, method, params or {}, token, refuse=refuse)

    # -- running it ---------------------------------------------------------------------------

    def _refuse_busy(self, request_id: Any, method: str) -> None:
        """Answer a server request the pool cannot run: every dispatch thread waits on a call
        to this server, which may be waiting for exactly this request (see ``DispatchPool``)."""
        self._inbound.pop(key(request_id), None)
        self._capacity.release()
        if self._closed():
            return
        log.warning(
            "refusing server request %r: all %d dispatch threads wait on calls to this server", method,
            self._pool.most,
        )
        self._reply_error(
            request_id, RPCError.INTERNAL_ERROR,
            f"client busy: all {self._pool.most} of its handler threads wait on calls to this server; try again later",
        )

    def _submit_ordered(self, fn: Callable[..., None], *args: Any) -> None:
        """Run notifications and progress callbacks one at a time, in arrival order."""
        with self._lane_lock:
            self._lane.append((fn, args))
            if self._lane_busy:
                # (Only once an item has started: the lane's job may still wait for a worker.)
                blocked = time.monotonic() - self._lane_since if self._lane_since else 0.0
                if blocked > LANE_BLOCKED_WARNING and not self._lane_warned:
                    self._lane_warned = True
                    log.warning(
                        "a notification or progress handler has been running for %.1fs; %d notification(s) "
                        "wait behind it (they run in order, one at a time: hand long work to a thread)",
                        blocked, len(self._lane),
                    )
                return
            self._lane_busy = True
        self._submit(self._drain_lane)

    def _drain_lane(self) -> None:
        self._lane_flag.on_lane = True
        try:
            while True:
                with self._lane_lock:
                    if not self._lane:
                        self._lane_busy = False
                        self._lane_since = 0.0
                        return
                    fn, args = self._lane.popleft()
                    self._lane_since, self._lane_warned = time.monotonic(), False
                fn(*args)
        finally:
            self._lane_flag.on_lane = False

    def _submit(self, fn: Callable[..., None], *args: Any, refuse: Callable[[], None] | None = None) -> None:
        try:
            self._pool.submit(fn, *args, refuse=refuse)
        except RuntimeError:  # the pool was shut down by close()
            self._capacity.release()

    def _enter(self) -> None:
        self._handler.active = True
        with self._busy_cond:
            self._busy += 1

    def _leave(self) -> None:
        self._handler.active = False
        with self._busy_cond:
            self._busy -= 1
            self._busy_cond.notify_all()
        self._capacity.release()

    def _run_notification(self, method: str, params: dict[str, Any]) -> None:
        self._enter()
        try:
            self._on_notification(method, params)
        except Exception:
            log.exception("the notification handler raised for %r", method)
        finally:
            self._leave()

    def _run_progress(self, slot: _Slot, progress: float, total: float | None, message: str | None) -> None:
        self._enter()
        try:
            assert slot.on_progress is not None
            slot.on_progress(progress, total, message)
        except Exception:
            log.exception("the progress callback raised")
        finally:
            assert slot.progress_idle is not None
            with slot.progress_idle:
                slot.progress_queued -= 1
                slot.progress_idle.notify_all()
            self._leave()

    def _run_request(self, request_id: Any, method: str, params: dict[str, Any], token: CancelToken) -> None:
        self._enter()
        try:
            try:
                result = self._on_request(method, params, token)
                reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": result}
            except RPCError as exc:
                reply = error_reply(request_id, exc.code, exc.message, exc.data)
            except Exception as exc:
                log.exception("the handler for server request %r raised", method)
                reply = error_reply(
                    request_id, RPCError.INTERNAL_ERROR, f"client handler failed: {type(exc).__name__}: {exc}"
                )
            if token.by_peer:
                return  # the server cancelled it: no reply is expected
            if self._closed():
                return
            try:
                self._send(reply, time.monotonic() + REPLY_SEND_TIMEOUT)
            except MCPError as exc:
                log.warning("could not send the reply to server request %r: %s", method, exc)
        finally:
            self._inbound.pop(key(request_id), None)
            self._leave()

    def _reply_error(self, request_id: Any, code: int, message: str) -> None:
        try:
            self._send(error_reply(request_id, code, message), time.monotonic() + 1.0)
        except MCPError as exc:
            log.warning("could not send an error reply: %s", exc)


def error_reply(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def hashable(value: Any) -> bool:
    """Whether a JSON-RPC id can key a table (an int or a string, never a bool)."""
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def key(value: Any) -> Any:
    return value if hashable(value) else None
