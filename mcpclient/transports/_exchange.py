"""HTTP exchanges that another thread can always end: close, cancel and deadlines.

An ``Exchange`` is one HTTP request and the reading of its reply, in every phase: waiting for
a pooled connection or connecting, sending, waiting for the response headers, reading the
body, and the backoff between retries. Whichever thread runs it (the caller's, for a POST
whose reply is JSON; a pool thread, for an SSE stream), another thread can end it with
``abort(reason)``: the thread running it then gets the error for that reason
(``ConnectionClosed``, ``RequestCancelled`` or ``RequestTimeout``) within moments.

How: an exchange holds the sockets it uses (``sockets``, a ``_sockets.Held``). Our urllib3
classes hand them over as they are connected or taken from the pool (the ``Requester`` makes
the exchange's ``Held`` current on its thread around the send). ``abort`` shuts them down
(``Held.shut_down``), which wakes a ``recv`` blocked in any thread. The arrow points one way:
this module uses ``_sockets``, never the other way round.

``Exchanges`` is a transport's registry of the exchanges in flight, keyed by request id so
a cancellation finds its exchange, and its deadline watchdog: one daemon thread per transport
that ticks (every ``TICK`` seconds, only while an exchange with a deadline is in flight) and
aborts those past their deadline. A socket read timeout is per read, so a server trickling a
byte a second would otherwise hold a call far past its timeout; the watchdog holds the
deadline for the whole reply, headers and body. Registering costs a few dict operations and
an uncontended lock per request, and no thread hand-off: the watchdog is woken only from idle.

Limits: a connect in progress is not interrupted (it is bounded by the connect timeout; the
exchange ends as soon as the socket connects). With a user-supplied ``requests.Session`` (its
own adapters) sockets are not registered: an exchange is then aborted through its response
once the headers arrived (when urllib3 still holds the socket), and callers are released by
running such POSTs on pool threads (see ``StreamableHTTPTransport``). SOCKS proxies use their
own pool classes and are likewise aborted only once headers arrived.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

import requests

from .._core.exceptions import ConnectionClosed, MCPError, RequestCancelled, RequestTimeout
from ._sockets import Held, shut

__all__ = ["CANCELLED", "CLOSED", "TIMEOUT", "Exchange", "Exchanges"]

#: Abort reasons.
CLOSED = "closed"
CANCELLED = "cancelled"
TIMEOUT = "timeout"
#: The watchdog's period while exchanges with a deadline are in flight, in seconds.
TICK = 0.1
#: How long the watchdog thread stays once no exchange has a deadline, in seconds.
IDLE_EXIT = 1.0


def _close_quietly(response: requests.Response) -> None:
    try:
        response.close()
    except Exception:  # the reader sees the stream end either way
        pass


class Exchange:
    """One HTTP request and its reply; ``abort`` ends it from any thread."""

    __slots__ = ("_also", "_woken", "deadline", "key", "reason", "response", "sent", "sockets", "what")

    def __init__(self, what: str = "the request", deadline: float | None = None, key: Any = None) -> None:
        self.what = what
        self.deadline = deadline
        self.key = key
        self.reason: str | None = None
        self.response: requests.Response | None = None
        #: The sockets it uses, and whether its attempt went out on a kept-alive connection.
        self.sockets = Held()
        #: Whether the request may have reached the server: false until it is handed to the
        #: connection (while a token is fetched, say), and again while a refused attempt
        #: (429, 503, a refused connection) waits to be retried. An abort then raises an error
        #: saying it was never delivered, and no one tells the server to cancel it.
        self.sent = False
        self._woken: threading.Event | None = None
        self._also: threading.Event | None = None  # see wait_for

    def done(self) -> None:
        """The reply is read: forget the sockets before the connection goes back to the pool."""
        self.sockets.forget()

    def abort(self, reason: str) -> bool:
        """End the exchange; its thread raises ``error()``. False if it had ended already."""
        if self.reason is not None:
            return False
        self.reason = reason
        woken = self._woken
        if woken is not None:
            woken.set()
        also = self._also
        if also is not None:
            also.set()
        if self.sockets.shut_down() == 0 and self.response is not None:
            # A user session: only the response knows its socket.
            connection = getattr(self.response.raw, "connection", None)
            if connection is not None and connection.sock is not None:
                shut(connection.sock)
            # Closing may wait for the lock of a thread blocked reading (a close-delimited
            # body): never on the aborting thread.
            threading.Thread(target=_close_quietly, args=(self.response,), name="mcpclient-abort", daemon=True).start()
        return True

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True at once if the exchange is (or gets) aborted."""
        woken = self._woken
        if woken is None:
            woken = self._woken = threading.Event()
        if self.reason is not None:
            return True
        return woken.wait(seconds)

    def wait_for(self, event: threading.Event, seconds: float | None) -> None:
        """Wait until ``event`` is set, the exchange is aborted or ``seconds`` pass.

        For work of the exchange that runs on another thread (a token fetch), which sets
        ``event`` when done: ``abort`` sets it too while this waits, so the caller looks at
        its work's own state and at ``reason`` after."""
        self._also = event
        try:
            if self.reason is None:  # (abort sets reason before it looks at _also)
                event.wait(seconds)
        finally:
            self._also = None

    def error(self) -> MCPError:
        """The error for the thread running an aborted exchange (see ``sent``)."""
        if self.reason == CANCELLED:
            if not self.sent:
                return RequestCancelled(f"{self.what} was cancelled before it was sent")
            return RequestCancelled(f"{self.what} was cancelled", delivered=True)
        if self.reason == TIMEOUT:
            if not self.sent:
                return RequestTimeout(f"{self.what} could not be sent in time")
            return RequestTimeout(f"{self.what}: no complete reply in time", delivered=True)
        return ConnectionClosed("the transport is closed")

    def check(self) -> None:
        """Raise ``error()`` if the exchange was aborted."""
        if self.reason is not None:
            raise self.error()


class Exchanges:
    """A transport's exchanges in flight, by request id, and their deadline watchdog."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._all: dict[Exchange, None] = {}
        self._by_key: dict[Any, Exchange] = {}
        self._timed: dict[Exchange, None] = {}
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._closed: str | None = None
        self._stopped = False
        self._idle = False  # the watchdog waits for a first deadline (rather than ticking)
        # Requests abandoned before their exchange opened (a cancel racing the send): the
        # last few, so the exchange is aborted as it opens.
        self._abandoned: collections.deque[Any] = collections.deque(maxlen=64)

    def open(
        self, what: str, deadline: float | None = None, key: Any = None, *, after_close: bool = False
    ) -> Exchange:
        """A new exchange, registered (aborted at once if everything was aborted already,
        unless ``after_close``: the DELETE that ends a session, bounded by its deadline)."""
        exchange = Exchange(what, deadline, key)
        self._all[exchange] = None
        if key is not None:
            self._by_key[key] = exchange
        if deadline is not None:
            self._timed[exchange] = None
            if self._idle or self._thread is None:  # else a ticking watchdog will see it
                self._wake()
        if self._closed is not None and not after_close:
            exchange.abort(self._closed)
        elif key is not None and self._abandoned and key in self._abandoned:
            exchange.abort(CANCELLED)
        return exchange

    def extend(self, exchange: Exchange, deadline: float | None) -> None:
        """Move an exchange's deadline (e.g. to a short grace once its reply arrived)."""
        exchange.deadline = deadline
        if deadline is None:
            self._timed.pop(exchange, None)
        elif exchange in self._all:
            self._timed[exchange] = None
            if self._idle or self._thread is None:
                self._wake()

    def renew(self, key: Any, deadline: float | None) -> None:
        """Move the deadline of request ``key``'s exchange, if one is in flight."""
        exchange = self._by_key.get(key)
        if exchange is not None:
            self.extend(exchange, deadline)

    def _wake(self) -> None:
        """Start the watchdog, or wake it from idle (it holds the lock from its idle check
        until it waits, so this notify cannot fall between the two)."""
        with self._cond:
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(target=self._watch, name=self._name, daemon=True)
                self._thread.start()
            elif self._idle:
                self._idle = False
                self._cond.notify()

    def end(self, exchange: Exchange) -> None:
        """The exchange is over (read, failed or aborted): forget it."""
        exchange.done()
        self._all.pop(exchange, None)
        if exchange.key is not None and self._by_key.get(exchange.key) is exchange:
            self._by_key.pop(exchange.key, None)
        if exchange.deadline is not None:
            self._timed.pop(exchange, None)  # atomic: the watchdog copies before it iterates

    def abort(self, key: Any, reason: str) -> bool:
        """Abort the exchange of request ``key``, if one is in flight."""
        exchange = self._by_key.get(key)
        if exchange is None:
            if reason == CANCELLED and key is not None:
                self._abandoned.append(key)
            return False
        return exchange.abort(reason)

    def abort_all(self, reason: str) -> None:
        """Abort every exchange in flight and every later one."""
        self._closed = reason
        for exchange in list(self._all):
            exchange.abort(reason)

    def stop(self) -> None:
        """End the watchdog thread (after the last exchange of a closed transport)."""
        with self._cond:
            self._stopped = True
            self._idle = False
            self._cond.notify()

    def _watch(self) -> None:
        with self._cond:
            while not self._stopped:
                # Idle is announced before the emptiness check: a deadline added without the
                # lock is then either seen here or sees ``_idle`` and wakes us.
                self._idle = True
                if not self._timed:
                    # Idle: exit after a while (the next deadline starts a new thread), so a
                    # transport nobody closed leaves no thread behind.
                    woken = self._cond.wait(IDLE_EXIT)
                    if not woken and not self._timed:
                        break  # still "idle" until _thread is None: open() then starts another
                    self._idle = False
                    continue
                self._idle = False
                self._cond.wait(TICK)
                now = time.monotonic()
                late = [x for x in list(self._timed) if x.deadline is not None and x.deadline <= now]
                for exchange in late:
                    self._timed.pop(exchange, None)
                    exchange.abort(TIMEOUT)
            self._thread = None
