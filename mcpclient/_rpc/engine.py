"""The JSON-RPC 2.0 engine under every Client: the pending calls and their waiting.

One daemon reader thread reads ``transport.receive()``: it only parses and routes. A reply
wakes the caller waiting on its pending slot; a server request or notification goes to the
bounded dispatch pool, so a slow user handler never stalls replies. When the connection dies,
every pending call fails at once with the reason; after ``close()`` calls fail immediately.

Over a transport that reads inline (stdio), the pipe has one reader at a time, whoever holds
the read token: after a reply empties the pending table the reader thread lends it out, and a
caller that finds it free reads its own reply, for at most ``INLINE_READ_BUDGET``, routing what
comes before it in order. That saves two thread switches a call. The reader thread takes the
pipe back when a caller hands it over or no caller has read for ``INLINE_LEND``. A caller
reading alone from a server whose replies come within ``SPIN_WORTH`` first looks for its
reply without sleeping, for up to ``SPIN_READ``, which saves the wake-up of a sleeping
thread. What a transport can do besides its three methods (``PipeTransport``: inline reads,
spinning, batched writes; ``ExchangeTransport``: concurrent sends with options, abandon,
renew) is read once, when the engine is made.

The engine's mechanisms each have a module: the pending slots (``slots``), the reader thread
and its lending of the pipe (``reader``), the stdio write batching (``batching``); this one
holds the calls, their waiting and inline reads, and the routing and dispatch of what comes in.
"""

from __future__ import annotations

import copy
import functools
import itertools
import logging
import os
import threading
import time
import weakref
from typing import Any, Callable, cast

from .._core import bounded as _bounded
from .._core.call_checks import check_progress_callback, warn_if_on_event_loop
from .._core.cancel import Cancel, CancelToken, is_cancelled, watch_event
from .._core.exceptions import (
    ClientClosedError,
    MCPError,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    RPCError,
    TransportError,
)
from .._core.options import NO_OPTIONS, CallOptions
from .._core.waiting import Lifetime
from ..transports.base import (
    NOTHING,
    RESENDABLE,
    ExchangeTransport,
    Failure,
    PipeTransport,
    SendOptions,
    Transport,
    reads_inline,
    writes_batched,
)
from .batching import Outbox
from .dispatch import REPLY_SEND_TIMEOUT, Dispatcher, NotificationHandler, RequestHandler, hashable
from .reader import connection_error, read_loop, reply_taker
from .slots import ProgressCallback, _events, _Slot, _ThreadEvents

__all__ = ["Engine", "ProgressCallback", "_Slot", "_ThreadEvents", "_events", "send_options"]

log = logging.getLogger(__name__)

#: How long close() waits for the reader thread once the transport is closed.
READER_JOIN_TIMEOUT = 5.0
#: How long close() waits for in-flight handlers after cancelling them.
DISPATCH_GRACE = 2.0
#: How long a call waits for its own queued progress callbacks once the reply is in.
PROGRESS_DRAIN_TIMEOUT = 2.0
#: Over a transport that reads inline: how long a caller reads for its own reply before it
#: hands the pipe to the reader thread and waits on its slot (a cancel waits at most this).
INLINE_READ_BUDGET = 0.02
#: Over a ``PipeTransport`` (stdio), on a machine with more than one CPU: how long
#: a call waiting alone at most looks for its reply without sleeping before it waits in the
#: kernel (see ``_read_inline``). 0 turns it off.
SPIN_READ = 0.0001
#: Spinning goes on while replies come this fast on average (a running mean of the last few
#: spins, a miss counting as ``SPIN_READ``): about what a sleep and a wake-up cost in CPU, so
#: that spinning for a reply costs no more than sleeping for it would.
SPIN_WORTH = 0.00005
#: While replies come slower than that, one call in this many spins, to notice a server
#: that became fast again.
SPIN_PROBE = 32

#: How ``notifications/cancelled`` is sent: within the time of a reply to the server.
_CANCEL_NOTICE = CallOptions(REPLY_SEND_TIMEOUT)

_live_engines: weakref.WeakSet[Engine] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    # Threads do not survive fork: a client inherited by a child can never receive a reply.
    for engine in list(_live_engines):
        engine._forget_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


#: Held by the thread spinning for its reply (``Engine._read_inline``): two threads spinning
#: at once, for two clients, would take the GIL from each other while their replies wait.
_spin_turn = threading.Lock()


def _cpus() -> int:
    """How many CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (no sched_getaffinity on macOS)
        return os.cpu_count() or 1


def _pipe_ways(pipe: PipeTransport | None, shared_writes: bool) -> tuple[bool, bool, bool]:
    """What the engine does with a ``PipeTransport`` (none of it with another transport):
    whether a request sent while another thread writes is handed to that writer (not when
    sends go out side by side, ``shared_writes``), whether a caller reads its own reply inline,
    and whether it spins while it does (not on a machine with one CPU)."""
    if pipe is None:
        return False, False, False
    batched = not shared_writes and writes_batched(type(pipe))
    inline = reads_inline(type(pipe))
    spin = inline and pipe.spin_reads and SPIN_READ > 0 and _cpus() > 1
    return batched, inline, spin


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return max(0.0, deadline - time.monotonic())


class Engine:
    """Pairs requests with replies over a Transport and dispatches what the server sends.

    ``on_request(method, params, token)`` answers a server request: it returns the result,
    or raises ``RPCError`` for an error reply. ``on_notification(method, params)`` receives
    every notification. Both run on the dispatch pool, never on the reader thread.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        max_dispatch: int = 16,
        max_queue: int | None = None,
    ) -> None:
        self._transport = transport
        #: The transport as the interface it honours, or None (read once: ``isinstance``).
        pipe = transport if isinstance(transport, PipeTransport) else None
        self._exchanges = transport if isinstance(transport, ExchangeTransport) else None
        self._ids = itertools.count(1)
        self._pending: dict[Any, _Slot] = {}
        self._lock = threading.Lock()
        # An exchange's send may last until its reply: such sends go out side by side.
        self._write_lock = None if self._exchanges is not None else threading.Lock()
        # What the engine does with a pipe (see _pipe_ways): requests handed to the thread
        # writing now (see _send and batching.Outbox), a caller reading its own reply, spinning.
        self._batched, self._inline, self._spin = _pipe_ways(pipe, self._write_lock is None)
        self._outbox = Outbox(cast(PipeTransport, transport))
        self._inline_reader = cast(PipeTransport, transport)  # (used only where _inline says so)
        self._dead: MCPError | None = None
        self._closed = False
        #: Ended at ``close()`` and at the connection's death, with the error calls then get:
        #: the ``ends`` of every wait made for this connection (``_core.waiting.Until``).
        self.lifetime = Lifetime()
        #: Runs what the server sends: its requests and notifications, progress callbacks.
        self._dispatch = Dispatcher(
            on_request=on_request, on_notification=on_notification, send=self._send,
            closed=lambda: self._closed, max_dispatch=max_dispatch, max_queue=max_queue,
        )
        self._in_handler = self._dispatch.handler_flag  # read on every call
        # The thread gets a weak reference, never the engine itself: a Client dropped without
        # close() must stay collectable (its finalizer then closes the transport).
        self._read_token = threading.Lock()  # held by the one thread reading the transport
        self._reader_wake = threading.Event()  # a caller hands the pipe back to the reader thread
        self._inline_reads = 0  # how many calls read inline: the reader thread's sign of life
        self._spin_wait = 0.0  # how long spinning calls waited for their replies, on average
        self._spin_skip = 0  # calls to let go by before the next spin (see SPIN_PROBE)
        self._reader = threading.Thread(
            target=read_loop,
            args=(weakref.ref(self), transport, self._inline, self._read_token, self._reader_wake),
            name="mcpclient-reader",
            daemon=True,
        )
        if self._exchanges is not None:
            self._exchanges.deliver_replies_to(reply_taker(weakref.ref(self)))  # weakly, for the same reason
        self._started = False
        self._forked = False
        _live_engines.add(self)

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> None:
        if not self._started:
            self._started = True
            self._reader.start()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def dead(self) -> MCPError | None:
        """The error that ended the connection, or None while it lives."""
        return self._dead

    def close(self) -> None:
        """Fail pending calls, cancel handlers, close the transport; always returns."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._dead is None:
                self._dead = ClientClosedError()
            # _dead is set before the table is swapped: see Engine.request.
            pending, self._pending = list(self._pending.values()), {}
            tokens = self._dispatch.tokens()
            dead = self._dead or ClientClosedError()
        for slot in pending:
            slot.error = ClientClosedError()
            slot.event.set()
        self.lifetime.end(dead)  # (a forked child's was replaced, and ended, in _forget_parent)
        if self._forked:
            # The transport, its process or session and the threads are the parent's: closing
            # them here would kill the parent's server or end its session. (Nor is the reader
            # wake touched: its lock may have been held by a parent thread at fork time.)
            _live_engines.discard(self)
            return
        self._reader_wake.set()  # a reader thread that lent the pipe out ends at once
        for token in tokens:
            token.cancel("client closed")
        try:
            self._transport.close()
        except Exception:  # close() must return whatever the transport does
            log.warning("error while closing the transport", exc_info=True)
        if self._started and threading.current_thread() is not self._reader:
            self._reader.join(READER_JOIN_TIMEOUT)
            if self._reader.is_alive():
                log.warning("the reader thread did not stop within %.1fs", READER_JOIN_TIMEOUT)
        self._dispatch.wait_idle(DISPATCH_GRACE)
        self._dispatch.shutdown()
        _live_engines.discard(self)

    def abort(self, error: MCPError) -> None:
        """End the connection with ``error``: pending and later calls fail with it; then close."""
        self._mark_dead(error)
        self.close()

    def _forget_parent(self) -> None:
        """In a forked child: fail every later call; the connection stays the parent's.

        Only the forking thread exists in the child, so a lock another thread held at fork
        time would stay held forever: the locks are replaced before anything takes them.
        """
        self._lock = threading.Lock()
        self._write_lock = None if self._write_lock is None else threading.Lock()
        self._outbox.reset()
        self._dispatch.forget_parent()
        self._forked = True
        self.lifetime = Lifetime()  # the parent's may hold a lock a parent thread had
        self._mark_dead(
            TransportError(
                "this client was created in another process and cannot be used after fork(); "
                "create a new Client in this process"
            ),
            forked=True,
        )

    def _mark_dead(self, error: MCPError, *, forked: bool = False) -> None:
        """Fail every pending call with ``error``; later calls fail with it too."""
        with self._lock:
            if self._dead is None:
                self._dead = error
            # _dead is set before the table is swapped: see Engine.request.
            pending, self._pending = list(self._pending.values()), {}
            tokens = self._dispatch.tokens()
            dead = self._dead or error
        self.lifetime.end(dead)
        if forked:
            # The locks and threads we would use belong to the parent; touch nothing else.
            return
        for slot in pending:
            slot.error = error
            slot.event.set()
        self._reader_wake.set()
        for token in tokens:
            token.cancel("connection closed")

    def _raise_dead(self) -> None:
        error = self._dead
        if error is not None:
            raise copy.copy(error)

    def answered(self, request_id: Any) -> bool:
        """Whether the request ``request_id`` no longer waits for its reply: the reply came (or
        the call ended), though its caller may not have woken yet. One dict lookup, no lock."""
        return request_id not in self._pending

    # -- outgoing ---------------------------------------------------------------------------

    def request(
        self, method: str, params: dict[str, Any] | None, options: CallOptions = NO_OPTIONS, *,
        cancel_on_timeout: bool = True,
    ) -> dict[str, Any]:
        """Send a request and block for its result.

        ``options`` are the call's (``_core.options.CallOptions``): ``timeout`` bounds the wait
        for the reply; with ``on_progress`` it is an idle timeout that each progress
        notification renews, while the call's ``deadline`` (``max_total``) still caps it.
        ``on_progress(progress, total, message)`` runs on a dispatch thread. ``cancel`` (a
        CancelToken or threading.Event) abandons the call from another thread.
        ``on_sent(request_id)`` learns the id before the request is written (for telemetry).
        ``headers`` and ``resendable`` go down with it to an ``ExchangeTransport``'s ``send``
        (``SendOptions``).

        Raises ``RPCError`` for an error reply, ``RequestTimeout`` when the time runs out
        (then ``notifications/cancelled`` is sent unless ``cancel_on_timeout`` is false),
        ``RequestCancelled`` when cancelled, ``ConnectionClosed`` or ``ClientClosedError``
        when the connection ends first.

        Called from a handler of this engine (a server request, a notification), the handler's
        worker is parked in the dispatch pool while the call waits, so that what the call
        needs dispatched (the server's requests from inside it, its progress) gets a thread.
        """
        if self._in_handler.active:
            with self._dispatch.parked():
                return self.request(method, params, options, cancel_on_timeout=cancel_on_timeout)
        warn_if_on_event_loop(method)
        slot = self._begin(method, params, options, cancel_on_timeout)
        request_id = slot.message["id"]
        try:
            self._send_request(slot)
            if self._inline and self._read_token.acquire(False):
                self._read_inline(slot)
            if slot.reply is None and slot.error is None:  # (a reply read inline is there)
                self._wait(slot)
        except BaseException as exc:
            self._interrupted(exc, slot)
            raise
        finally:
            if slot.reply is None:  # the reader pops the slot of every reply it routes
                self._pending.pop(request_id, None)
            if slot.unfollow is not None:
                slot.unfollow()
            _events.free = slot.event
        return self._answer(slot)

    def _begin(
        self, method: str, params: dict[str, Any] | None, options: CallOptions, cancel_on_timeout: bool
    ) -> _Slot:
        """The request's slot, with its message, in the pending table and following the cancel."""
        on_progress, cancel = options.on_progress, options.cancel
        if on_progress is not None:
            check_progress_callback(on_progress)
        if cancel is not None and is_cancelled(cancel):  # cancelled already: never sent
            raise _not_sent(method)
        request_id = next(self._ids)
        if options.on_sent is not None:
            options.on_sent(request_id)
        slot = _Slot(method, _events.take(), options)
        slot.cancel_on_timeout = cancel_on_timeout
        if on_progress is not None:
            params = self._follow_progress(slot, request_id, params)
        slot.message = message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        # No lock on the pending table: one dict store, then a look at _dead. Whoever ends the
        # connection sets _dead before swapping the table for an empty one, so either it finds
        # this slot in the table and wakes it, or this look sees _dead (the GIL, or the
        # free-threaded build's per-dict locks, make each step atomic).
        pending = self._pending
        pending[request_id] = slot
        if self._dead is not None:
            pending.pop(request_id, None)
            self._raise_dead()
        if cancel is not None:
            slot.unfollow = self._follow_cancel(cancel, slot, request_id)
        return slot

    def _follow_progress(self, slot: _Slot, request_id: int, params: dict[str, Any] | None) -> dict[str, Any]:
        """Ask for the call's progress (its ``progressToken`` is the request id): ``params``
        with the token, and the slot ready for the notices, which renew its timeout."""
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta["progressToken"] = request_id
        params["_meta"] = meta
        slot.on_progress = slot.options.on_progress
        slot.progress_idle = threading.Condition()
        if slot.options.timeout is not None:
            slot.renew = functools.partial(self._renew, request_id, slot.options)
        return params

    def _follow_cancel(self, cancel: Cancel, slot: _Slot, request_id: int) -> Callable[[], None]:
        """Wake the slot at the cancel, and end the request's work in the transport (a send
        still blocked on it, an HTTP exchange, ends too); returns what stops following."""
        wake = functools.partial(_wake_and_abandon, slot.event, self._exchanges, request_id)
        if isinstance(cancel, CancelToken):
            cancel.add_callback(wake)
            return functools.partial(cancel.remove_callback, wake)
        return watch_event(cancel, wake).stop  # a plain Event: the process's watcher thread looks at it

    def _interrupted(self, exc: BaseException, slot: _Slot) -> None:
        """The call ended with ``exc``: a KeyboardInterrupt and the like tell the server (what
        the engine raises says for itself what was sent)."""
        if not isinstance(exc, MCPError) and not self._outbox.withdraw(slot):
            self._cancel_in_background(slot.message["id"], f"interrupted ({type(exc).__name__})")

    def _wait(self, slot: _Slot) -> None:
        """Wait on the slot until the reply comes, the call is cancelled, or its time is out."""
        wait_event = slot.event.wait
        while slot.reply is None and slot.error is None:
            deadline = slot.deadline
            woke = wait_event(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if slot.reply is None and slot.error is None:
                self._woken(slot, woke)

    def _woken(self, slot: _Slot, woke: bool) -> None:
        """The wait on ``slot`` ended without its reply: send it ourselves if it came back
        unsent, raise at the cancel or the deadline (unless progress renewed it), else go on
        (a wake-up with none of these was spurious: a late ``set()`` on the thread's event)."""
        if slot.unsent:  # handed to a writer the pipe did not take: send it ourselves
            self._send_unsent(slot)
            return
        cancel = slot.options.cancel
        if cancel is not None and is_cancelled(cancel):
            raise self._cancelled(slot, delivered=not self._outbox.withdraw(slot))
        if woke:  # a spurious wake-up: re-arm, then look again (the wait does)
            slot.event.clear()
            return
        deadline = slot.deadline
        if deadline is not None and time.monotonic() >= deadline:
            self._expire(slot)

    def _send_unsent(self, slot: _Slot) -> None:
        """Send a request that another thread's write handed back (``_Slot.unsent``), within
        its deadline, unless the call ended meanwhile."""
        slot.unsent = False
        slot.event.clear()  # then look again at what may have set it meanwhile
        if slot.error is not None:
            return
        cancel = slot.options.cancel
        if cancel is not None and is_cancelled(cancel):
            raise _not_sent(slot.method)
        if slot.deadline is not None and time.monotonic() >= slot.deadline:
            raise _unsent_timeout(slot.method, slot.options.timeout)
        self._send_request(slot, hand_over=False)

    def _expire(self, slot: _Slot) -> None:
        """The slot's deadline passed: move it on if progress came since (within the call's
        deadline), else raise ``RequestTimeout`` (the server is told, unless it never went out)."""
        now = time.monotonic()
        timeout, cap = slot.options.timeout, slot.options.deadline
        if slot.touched and timeout is not None:  # progress came: the timeout runs from the last notice
            renewed = slot.touched + timeout if cap is None else min(slot.touched + timeout, cap)
            if renewed > now:
                slot.deadline = renewed
                return
        if self._outbox.withdraw(slot):  # still in a stalled writer's hands: it never went out
            raise _unsent_timeout(slot.method, timeout)
        capped = cap is not None and now >= cap
        raise self._timed_out(slot, slot.options.max_total if capped else None)

    def _answer(self, slot: _Slot) -> dict[str, Any]:
        """The call's result, once its wait ended: its error raised, its progress seen."""
        if slot.error is not None:
            raise copy.copy(slot.error) if isinstance(slot.error, MCPError) else slot.error
        if slot.on_progress is not None and not self._dispatch.on_lane:
            # On the lane thread (a call made from a progress callback or notification
            # handler) our own callbacks queue behind the one running: they run once it returns.
            _wait_for_progress(slot)
        reply: dict[str, Any] = slot.reply  # type: ignore[assignment]  # set: the wait ended on it
        result = reply.get("result")
        if type(result) is dict and "error" not in reply:
            return result  # the usual reply (_read_reply's last line, without its call)
        return _read_reply(reply, slot.method, slot.message["id"])

    def _send_request(self, slot: _Slot, hand_over: bool = True) -> None:
        """Send the slot's request (see ``_send``; ``hand_over``: it may go with another thread's
        write), with the call's ``SendOptions``; a send that ran out of time or was cancelled
        raises what the caller of ``request`` gets for it."""
        options = slot.options
        sending = None if options.headers is None and not options.resendable else send_options(options)
        try:
            self._send(slot.message, slot.deadline, slot if hand_over else None, sending)
        except RequestTimeout as exc:
            if not exc.delivered:  # nothing of it went out (a torn write, a token provider too slow): no cancel
                raise _unsent_timeout(slot.method, options.timeout, str(exc)) from None
            # It reached the server, whose answer did not come in time (HTTP): cancel it.
            raise self._timed_out(slot) from None
        except RequestCancelled as exc:
            # The cancel ended the send itself (an HTTP exchange): the server is told only if the
            # request may have reached it.
            raise self._cancelled(slot, delivered=exc.delivered) from None

    def _cancelled(self, slot: _Slot, *, delivered: bool) -> RequestCancelled:
        """The error of a cancelled request; the server is told when it may have reached it."""
        if not delivered:
            return _not_sent(slot.method)
        self._cancel_in_background(slot.message["id"], "cancelled by the caller")
        return RequestCancelled(f"{slot.method!r} was cancelled by the caller", method=slot.method, delivered=True)

    def _read_inline(self, slot: _Slot) -> None:
        """With the read token held: read and route until ``slot`` is answered (or woken by a
        cancel or the end of the connection), at most ``INLINE_READ_BUDGET`` or its deadline.

        What comes before the reply (notifications, progress, other callers' replies) is
        routed here, in order, as the reader thread would. The reply itself is taken out of the
        table as ``_take_reply`` takes it (``_pop_reply``), without setting the slot's event:
        no one else waits on it.
        Then the token is released, and the reader thread woken if calls are still waiting,
        this one's included when its reply has not come: it reads for them, and this call
        waits on its slot.
        """
        transport = self._inline_reader
        start = time.monotonic()
        end = start + INLINE_READ_BUDGET
        deadline, request_id = slot.deadline, slot.message["id"]
        if deadline is not None and deadline < end:
            end = deadline
        is_set = slot.event.is_set
        # Only a call waiting alone spins: with others waiting it would hold the GIL they need.
        spin = self._spin and len(self._pending) == 1
        if spin and self._spin_skip:
            self._spin_skip -= 1
            spin = False
        spun = False
        try:
            while not is_set():
                wait = end - time.monotonic()
                if wait <= 0:
                    break
                try:
                    if spin and _spin_turn.acquire(False):  # one thread of the process at a time
                        spin, spun = False, True
                        try:
                            message = transport.receive_within(wait, SPIN_READ)
                        finally:
                            _spin_turn.release()
                    else:
                        spin = False
                        message = transport.receive_within(wait)
                except ProtocolError as exc:
                    log.warning("skipping a malformed message from the server: %s", exc)
                    continue
                except Exception as exc:  # the connection ended (or the transport broke)
                    self._end(connection_error(exc, self._closed))
                    break
                if message is NOTHING:
                    break
                if (
                    type(message) is dict and message.get("id") == request_id and "method" not in message
                    and self._pop_reply(message) is slot  # (None once the table was swapped: dead)
                ):
                    slot.reply = message
                    break
                self._take_in(message)
        finally:
            if spun:  # spin again while replies come within SPIN_WORTH on average
                took = min(time.monotonic() - start, SPIN_READ)  # (a miss took longer: SPIN_READ)
                self._spin_wait += (took - self._spin_wait) * 0.25
                self._spin_skip = 0 if self._spin_wait < SPIN_WORTH else SPIN_PROBE
            self._inline_reads += 1
            self._read_token.release()
            if self._pending:  # after the release: see _lend
                self._reader_wake.set()

    def _take_in(self, message: Any) -> None:
        """Route one message read from the transport, on whichever thread read it: what goes
        wrong is logged and skipped, so a reader survives anything a server sends."""
        try:
            self._route(message)
        except Exception:
            log.exception("error while handling a message from the server; skipped")

    def _end(self, error: MCPError) -> None:
        if not self._closed:
            log.debug("connection ended: %s", error)
        self._mark_dead(error)

    def _renew(self, request_id: Any, options: CallOptions, now: float) -> None:
        """Progress came at ``now``: the transport's bound on the exchange moves with the call's."""
        deadline = now + options.timeout  # type: ignore[operator]  # (renewed only with a timeout)
        cap = options.deadline
        if self._exchanges is not None:
            self._exchanges.renew(request_id, deadline if cap is None or deadline < cap else cap)

    def _timed_out(self, slot: _Slot, max_total: float | None = None) -> RequestTimeout:
        """Tell the server to drop a request that took too long (unless the slot says not to);
        the error for its caller.

        ``max_total`` is given when that cap ended a call its progress kept alive, so the
        message names what really ran out.
        """
        method, timeout, cancel = slot.method, slot.options.timeout, slot.cancel_on_timeout
        limit: float | None = timeout
        what = f"no reply to {method!r} within {timeout}s"
        if max_total is not None:
            what, limit = f"{method!r} was still running after max_total={max_total:.3g}s", max_total
        if cancel:
            self._cancel_in_background(slot.message["id"], f"timed out after {limit}s")
        told = "; the server was told to cancel it" if cancel else ""
        return RequestTimeout(f"{what}{told}", method=method, timeout=limit, delivered=True)

    def notify(self, method: str, params: dict[str, Any] | None = None, options: CallOptions = NO_OPTIONS) -> None:
        """Send a notification (``options``: its ``timeout`` bounds the write; ``headers`` as for
        ``request``); raises like ``request`` when it cannot be sent."""
        self._raise_dead()
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        timeout = options.timeout
        self._send(message, None if timeout is None else time.monotonic() + timeout, None, send_options(options))

    def _cancel_in_background(self, request_id: Any, reason: str) -> None:
        """Tell the server to drop ``request_id``: ``notifications/cancelled`` from a daemon
        thread, best effort, so the caller is released at its deadline or cancel whatever the
        server does (a stalled HTTP server holds a POST until its timeout; a stdio server that
        stopped reading, a write).

        The request's own send has returned (or was withdrawn, and then nothing is sent), and
        this thread is started after it, so the notice never overtakes the request: over stdio
        it waits for the write lock behind a writer still sending the request. The request's
        work in flight in the transport ends at once, on this thread (``abandon`` never blocks;
        for a 2026-07-28 or stateless HTTP server that is the cancellation itself).
        ``close()`` ends a notice still being sent, as it ends every send.
        """
        if self._closed or self._dead is not None:
            return
        if self._exchanges is not None:
            self._exchanges.abandon(request_id)
        try:
            threading.Thread(
                target=self._send_cancelled, args=(request_id, reason), name="mcpclient-cancel", daemon=True
            ).start()
        except RuntimeError as exc:  # no thread to be had: the notice is best effort
            log.debug("could not send notifications/cancelled for %r: %s", request_id, exc)

    def _send_cancelled(self, request_id: Any, reason: str) -> None:
        try:
            self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason}, _CANCEL_NOTICE)
        except MCPError as exc:
            log.debug("could not send notifications/cancelled for %r: %s", request_id, exc)

    def _send(
        self, message: dict[str, Any], deadline: float | None, slot: _Slot | None = None,
        options: SendOptions | None = None,
    ) -> None:
        """Write one message, within ``deadline``, one writer at a time (unless the transport
        is an ``ExchangeTransport``, whose sends go out side by side); ``options`` go down to
        an ``ExchangeTransport``'s ``send``.

        Over a ``PipeTransport``, a request (one with its ``slot``) sent while
        another thread writes is handed to that writer instead of waiting for its turn: the
        writer sends it, with whatever else was handed over meanwhile, in one system call
        once its own message is out (``Outbox.write_handed``); what the pipe does not take at once
        goes back to its caller, which sends it itself (``_Slot.unsent``). A message with
        options is never handed over: framed bytes have no room for them.
        """
        lock = self._write_lock
        if lock is not None and not lock.acquire(False):  # taken: wait for it, within the deadline
            if slot is not None and self._batched and options is None and self._outbox.hand_over(message, slot):
                return
            wait = _remaining(deadline)
            if not lock.acquire(timeout=-1 if wait is None else wait):
                raise RequestTimeout("timed out waiting to write", method=message.get("method"))
        try:
            if self._batched:  # (which needs the write lock)
                self._outbox.writing = True  # from here until write_handed finds nothing more
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if options is None or self._exchanges is None:
                self._transport.send(message, timeout=left)
            else:
                self._exchanges.send(message, timeout=left, options=options)
        except MCPError:
            if self._dead is not None:
                self._raise_dead()
            raise
        except TimeoutError as exc:
            raise RequestTimeout(f"timed out writing to the server: {exc}") from exc
        except (OSError, ValueError) as exc:
            raise TransportError(f"could not send to the server: {exc}") from exc
        finally:
            if lock is not None:
                try:
                    if self._batched:
                        self._outbox.write_handed()
                finally:
                    lock.release()

    # -- incoming ---------------------------------------------------------------------------

    def _route(self, message: Any) -> None:
        if type(message) is dict and "method" not in message:  # the usual message: a reply
            if not self._take_reply(message):
                self._route_reply(message)
        elif isinstance(message, Failure):  # the transport failed one call, not the connection
            self._fail_one(message)
        elif isinstance(message, list):  # a JSON-RPC batch (allowed in 2025-03-26)
            for item in message:
                self._route_one(item)
        else:
            self._route_one(message)

    def _take_reply(self, message: dict[str, Any]) -> bool:
        """Wake the caller of the usual reply (to our own id, as we sent it); False otherwise.

        Runs on the reader thread, or on a transport's thread (``deliver_replies_to``).
        """
        slot = self._pop_reply(message)
        if slot is None:
            return False
        slot.reply = message
        slot.event.set()
        return True

    def _pop_reply(self, message: dict[str, Any]) -> _Slot | None:
        """The slot of the usual reply (to our own id, as we sent it), out of the pending
        table; None for anything else. One dict pop, as in ``Engine.request``, needs no lock."""
        request_id = message.get("id")
        if type(request_id) is not int or ("result" not in message and "error" not in message):
            return None
        return self._pending.pop(request_id, None)

    def _route_one(self, message: Any) -> None:
        if not isinstance(message, dict):
            log.warning("skipping a message that is not a JSON object: %r", _excerpt(message))
            return
        method = message.get("method")
        if method is None:
            self._route_reply(message)
        elif not isinstance(method, str):
            log.warning("skipping a message whose method is not a string: %r", _excerpt(message))
        elif "id" in message:
            self._dispatch.request(message, method)
        else:
            self._dispatch_notification(message, method)

    def _route_reply(self, message: dict[str, Any]) -> None:
        if "result" not in message and "error" not in message:
            log.warning("skipping a message that is neither request, reply nor notification: %r", _excerpt(message))
            return
        request_id = message.get("id")
        # No lock: one dict pop (see Engine.request); the caller's slot leaves the table here.
        if type(request_id) is int:  # the usual case: our own id, as we sent it
            slot = self._pending.pop(request_id, None)
        else:
            if isinstance(request_id, str) and len(request_id) < 20 and request_id.isascii() and request_id.isdigit():
                request_id = int(request_id)  # servers that stringify our ids (but int() refuses "²")
            slot = self._pending.pop(request_id, None) if hashable(request_id) else None
            if slot is None and isinstance(request_id, float) and request_id.is_integer():
                slot = self._pending.pop(int(request_id), None)
        if slot is None:
            log.debug("dropping a reply to unknown or abandoned request id %r", _excerpt(request_id))
            return
        slot.reply = message
        slot.event.set()

    def _fail_one(self, failure: Failure) -> None:
        with self._lock:
            slot = self._pending.pop(failure.request_id, None) if hashable(failure.request_id) else None
        if slot is None:
            log.debug("a failure for unknown or abandoned request id %r: %s", _excerpt(failure.request_id), failure.error)
            return
        slot.error = failure.error
        slot.event.set()

    def _dispatch_notification(self, message: dict[str, Any], method: str) -> None:
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if method == "notifications/progress":
            self._route_progress(params)
        self._dispatch.notification(method, params)

    def _route_progress(self, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        slot = self._pending.get(token) if hashable(token) else None
        progress = params.get("progress")
        if slot is None or slot.on_progress is None or not isinstance(progress, (int, float)):
            return
        slot.touched = time.monotonic()  # progress renews an idle timeout
        if slot.renew is not None:
            slot.renew(slot.touched)
        if slot.last_progress is not None and progress <= slot.last_progress:
            return  # progress only increases; a stale one arrived late
        slot.last_progress = progress
        total = params.get("total")
        message = params.get("message")
        self._dispatch.progress(
            slot,
            float(progress),
            float(total) if isinstance(total, (int, float)) else None,
            message if isinstance(message, str) else None,
        )

def _wait_for_progress(slot: _Slot) -> None:
    """Let the progress callbacks queued before the reply run before the call returns.

    They came before the reply, so a caller expects to have seen them all; the wait is bounded
    in case the lane is busy (for instance with the handler that made this very call).
    """
    assert slot.progress_idle is not None
    with slot.progress_idle:
        slot.progress_idle.wait_for(lambda: slot.progress_queued == 0, PROGRESS_DRAIN_TIMEOUT)


def send_options(options: CallOptions) -> SendOptions | None:
    """What of a call's options goes down to the transport with its message; None when nothing does."""
    if options.headers:
        return SendOptions(headers=options.headers, resendable=options.resendable)
    return RESENDABLE if options.resendable else None


def _not_sent(method: str) -> RequestCancelled:
    return RequestCancelled(f"{method!r} was cancelled before it was sent", method=method)


def _unsent_timeout(method: str, timeout: float | None, why: str = "") -> RequestTimeout:
    because = f": {why}" if why else ""
    return RequestTimeout(f"{method!r} could not be sent within {timeout}s{because}", method=method, timeout=timeout)


def _wake_and_abandon(event: threading.Event, exchanges: ExchangeTransport | None, request_id: Any) -> None:
    event.set()
    if exchanges is not None:
        exchanges.abandon(request_id)


def _read_reply(reply: Any, method: str, request_id: Any) -> dict[str, Any]:
    if "error" in reply:
        error = reply["error"]
        if "result" in reply or not isinstance(error, dict):
            raise ProtocolError(f"the server sent a malformed reply to {method!r}: {_bounded.excerpt(reply, 200)}")
        code = error.get("code")
        raise RPCError(
            code if isinstance(code, int) and not isinstance(code, bool) else 0,
            str(error.get("message", "")),
            error.get("data"),
            method=method,
            request_id=request_id,
        )
    result = reply.get("result")
    if not isinstance(result, dict):
        raise ProtocolError(f"the server's result for {method!r} is not an object: {_bounded.excerpt(result, 200)}")
    return result


def _excerpt(value: Any, limit: int = 200) -> str:
    return _bounded.excerpt(value, limit)
