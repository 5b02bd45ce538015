"""HTTP exchanges that another thread can always end: close, cancel and deadlines.

An ``Exchange`` is one HTTP request and the reading of its reply, in every phase: waiting for
a pooled connection or connecting, sending, waiting for the response headers, reading the
body, and the backoff between retries. Whichever thread runs it (the caller's, for a POST
whose reply is JSON; a pool thread, for an SSE stream), another thread can end it with
``abort(reason)``: the thread running it then gets the error for that reason
(``ConnectionClosed``, ``RequestCancelled`` or ``RequestTimeout``) within moments.

How: ``AbortableAdapter`` (mounted on the transport's own ``requests.Session``) uses urllib3
connection and pool classes that hand every socket they use to the exchange running on the
current thread (``current``, a thread-local the ``Requester`` sets around ``session.send``),
as soon as the socket is connected or taken from the pool. ``abort`` calls
``shutdown(SHUT_RDWR)`` on those sockets, which wakes a ``recv`` blocked in any thread; the
exchange keeps its own reference, because ``http.client`` drops ``conn.sock`` for a
close-delimited response (no Content-Length, not chunked) and hands the socket to the
response, where nothing else can reach it. ``close()`` alone wakes nobody, and closing the
response would wait for the buffer lock that the blocked reader holds.

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
import socket
import threading
import time
from typing import Any

import requests
import requests.adapters
import requests.utils
import urllib3
from requests.structures import CaseInsensitiveDict
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .._core.exceptions import ConnectionClosed, MCPError, RequestCancelled, RequestTimeout
from ._fast_head import FastHeadResponse

__all__ = ["CANCELLED", "CLOSED", "TIMEOUT", "AbortableAdapter", "Exchange", "ExchangeSocket", "Exchanges", "current", "sets_cookies"]

#: Abort reasons.
CLOSED = "closed"
CANCELLED = "cancelled"
TIMEOUT = "timeout"
#: The watchdog's period while exchanges with a deadline are in flight, in seconds.
TICK = 0.1
#: How long the watchdog thread stays once no exchange has a deadline, in seconds.
IDLE_EXIT = 1.0
#: A pooled connection idle longer than this is not reused (Node servers close theirs at 5 s).
KEEPALIVE_MAX_IDLE = 4.0
#: A request body up to this many bytes goes out in the same write as the request's head.
ONE_WRITE_MAX = 64 * 1024
#: Validated header lines a connection remembers (then it forgets them all and starts again).
LINES_KEPT = 64


def sets_cookies(headers: Any) -> bool:
    """Whether a response's headers (any case-insensitive mapping) set a cookie."""
    return "set-cookie" in headers or "set-cookie2" in headers


def _shutdown(sock: Any) -> None:
    try:
        # socket.socket's own shutdown, also for an SSLSocket: no TLS close_notify is attempted
        # while another thread is inside the TLS layer reading.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, TypeError, ValueError):
        pass


def _close_quietly(response: requests.Response) -> None:
    try:
        response.close()
    except Exception:  # the reader sees the stream end either way
        pass


class Exchange:
    """One HTTP request and its reply; ``abort`` ends it from any thread."""

    __slots__ = ("_also", "_socks", "_woken", "deadline", "key", "reason", "response", "reused", "sent", "what")

    def __init__(self, what: str = "the request", deadline: float | None = None, key: Any = None) -> None:
        self.what = what
        self.deadline = deadline
        self.key = key
        self.reason: str | None = None
        self.response: requests.Response | None = None
        #: Whether the current attempt went out on a kept-alive connection from the pool.
        self.reused = False
        #: Whether the request may have reached the server: false until it is handed to the
        #: connection (while a token is fetched, say), and again while a refused attempt
        #: (429, 503, a refused connection) waits to be retried. An abort then raises an error
        #: saying it was never delivered, and no one tells the server to cancel it.
        self.sent = False
        self._socks: list[Any] | None = []  # None once done: the sockets may serve others
        self._woken: threading.Event | None = None
        self._also: threading.Event | None = None  # see wait_for

    def attach(self, sock: Any) -> None:
        """A socket this exchange is using (called on the thread running it)."""
        socks = self._socks
        if socks is None or sock is None:
            return
        socks.append(sock)
        if self.reason is not None:  # aborted before the socket was known
            _shutdown(sock)

    def rearm(self) -> None:
        """A further request of the same exchange (a retry, a renewal) registers its sockets."""
        if self._socks is None:
            self._socks = []

    def done(self) -> None:
        """The reply is read: forget the sockets before the connection goes back to the pool."""
        self._socks = None

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
        socks = self._socks
        if socks is None:
            return True
        if socks:
            for sock in list(socks):
                _shutdown(sock)
        elif self.response is not None:  # a user session: only the response knows its socket
            connection = getattr(self.response.raw, "connection", None)
            if connection is not None and connection.sock is not None:
                _shutdown(connection.sock)
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


class _Current(threading.local):
    exchange: Exchange | None = None


current = _Current()


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


# -- urllib3 classes that hand their sockets to the current exchange -------------------------


#: Plain TCP sockets become ExchangeSockets where a single receive can be made non-blocking
#: (``MSG_DONTWAIT``: Linux, macOS, the BSDs; not Windows, whose sockets keep their timeouts).
_ADOPTED_FAMILIES = (socket.AF_INET, socket.AF_INET6) if hasattr(socket, "MSG_DONTWAIT") else ()


class ExchangeSocket(socket.socket):
    """A connected plain TCP socket whose deadlines its exchanges hold, not socket timeouts.

    Every exchange on our connections can be ended in any phase (``abort``) and the deadline
    watchdog ends it at its deadline, so once connected (within the connect timeout) the
    socket stays blocking and ``settimeout`` does nothing. urllib3 sets a socket's timeout
    twice per request, and ``socket.settimeout`` makes a system call each time even when the
    value is unchanged; a socket with a timeout also polls before each send and receive.
    Each of those releases the GIL, which with many calling threads means a thread switch.

    ``peeking`` makes a receive (``recv``, ``recv_into``) return at once when no data is
    there (``MSG_DONTWAIT``), for a look at what has arrived (``_streams.stream_end_ready``)
    without changing the socket.
    """

    __slots__ = ("peeking",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.peeking = False

    @classmethod
    def adopt(cls, sock: socket.socket) -> ExchangeSocket:
        """Take over ``sock``'s connection (its file descriptor); ``sock`` is left detached."""
        adopted = cls(sock.family, sock.type, sock.proto, fileno=sock.detach())
        socket.socket.settimeout(adopted, None)  # blocking, whatever mode the descriptor was in
        return adopted

    def settimeout(self, value: float | None) -> None:
        pass

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        if self.peeking:
            flags |= socket.MSG_DONTWAIT
        return super().recv_into(buffer, nbytes, flags)

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        if self.peeking:
            flags |= socket.MSG_DONTWAIT
        return super().recv(bufsize, flags)


class _Connection(HTTPConnection):
    """Registers its socket with the current exchange, and writes a small request in one go.

    urllib3 writes a request's head and its body with two ``send`` calls: two system calls,
    two releases of the GIL (each a thread switch when other threads wait for it), and two
    TCP segments. On a connection already open, a body of bytes up to ``ONE_WRITE_MAX`` is
    sent with its head instead. (A new connection writes as urllib3 does: connecting, or a
    proxy tunnel, may send first.)
    """

    response_class = FastHeadResponse  # reads the usual response head without the email parser
    mcp_last_used = 0.0
    _mcp_hold = False  # the next send is the request's head: keep it for the body
    _mcp_head: bytes | None = None
    _mcp_lines: dict[tuple[str, str], bytes] | None = None  # validated header lines (putheader)

    def connect(self) -> None:
        super().connect()
        if type(self.sock) is socket.socket and self.sock.family in _ADOPTED_FAMILIES:
            self.sock = ExchangeSocket.adopt(self.sock)
        exchange = current.exchange
        if exchange is not None:
            exchange.attach(self.sock)

    def request(self, method: str, url: str, body: Any = None, headers: Any = None, **kwargs: Any) -> None:
        self._mcp_hold = self.sock is not None and type(body) is bytes and 0 < len(body) <= ONE_WRITE_MAX
        try:
            super().request(method, url, body, headers, **kwargs)
        finally:
            head, self._mcp_head, self._mcp_hold = self._mcp_head, None, False
        if head is not None:  # no body was sent after it (not urllib3's way): the head alone
            super().send(head)

    def putheader(self, header: Any, *values: Any) -> None:
        """``http.client``'s ``putheader``, whose validated line is remembered by the connection.

        A transport sends the same dozen header lines on every request; each is encoded and
        checked by two regular expressions once per connection instead of once per request.
        Only a name and one value that are both ``str`` are remembered (at most ``LINES_KEPT``).
        """
        if len(values) != 1 or type(header) is not str or type(values[0]) is not str:
            super().putheader(header, *values)
            return
        key = (header, values[0])
        lines = self._mcp_lines
        if lines is None:
            lines = self._mcp_lines = {}
        buffer = self._buffer  # type: ignore[attr-defined]  # the head's lines, as _output appends them
        line = lines.get(key)
        if line is not None:
            buffer.append(line)
            return
        before = len(buffer)
        super().putheader(header, *values)
        if len(buffer) == before + 1:  # (urllib3 writes nothing for a header it was told to skip)
            if len(lines) >= LINES_KEPT:
                lines.clear()
            lines[key] = buffer[-1]

    def send(self, data: Any) -> None:
        if self._mcp_hold:
            self._mcp_hold = False
            if type(data) is bytes:
                self._mcp_head = data
                return
        head = self._mcp_head
        if head is not None:
            self._mcp_head = None
            if type(data) is bytes:
                data = head + data
            else:
                super().send(head)
        super().send(data)


class _HTTPSConnection(HTTPSConnection, _Connection):
    """The same over TLS (its request and send are ``_Connection``'s: ``HTTPSConnection``
    overrides neither)."""

    def connect(self) -> None:
        super().connect()
        exchange = current.exchange
        if exchange is not None:
            exchange.attach(self.sock)


def _take_conn(conn: Any, max_idle: float) -> None:
    """A connection leaving the pool: closed if it idled too long, else told to its exchange.

    A server closes a keep-alive connection that idled past its own timeout (Node: 5 s). If
    the client reuses it just then, the request meets a closing socket and fails with no
    reply; urllib3's "is it dropped?" check cannot see a close that has not happened yet.
    Dropping connections idle longer than ``max_idle`` (below the usual server timeouts)
    makes that race rare; ``Requester`` handles the rest (docs/reliability.md).
    """
    if conn.sock is not None and time.monotonic() - conn.mcp_last_used > max_idle:
        conn.close()  # the request opens a new connection
    exchange = current.exchange
    if exchange is not None:
        exchange.reused = conn.sock is not None
        if conn.sock is not None:
            exchange.attach(conn.sock)


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection

    max_idle = KEEPALIVE_MAX_IDLE  # AbortableAdapter makes subclasses with its own

    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
        _take_conn(conn, self.max_idle)
        return super()._make_request(conn, *args, **kwargs)

    def _put_conn(self, conn: Any) -> None:
        if conn is not None:
            conn.mcp_last_used = time.monotonic()
        super()._put_conn(conn)


class _HTTPSPool(HTTPSConnectionPool, _Pool):
    """The same over TLS (its ``_make_request`` and ``_put_conn`` are ``_Pool``'s:
    ``HTTPSConnectionPool`` overrides neither)."""

    ConnectionCls = _HTTPSConnection


_POOL_CLASSES: dict[str, type[HTTPConnectionPool]] = {"http": _Pool, "https": _HTTPSPool}


class AbortableAdapter(requests.adapters.HTTPAdapter):
    """An ``HTTPAdapter`` whose connections register their sockets with the current exchange,
    and whose pools do not reuse a connection idle longer than ``max_idle`` seconds.

    It also remembers which pool serves a URL when no proxy is involved: requests works it out
    again for every request (parsing the URL, looking at the CA bundle's path on disk, building
    urllib3's pool key), though a transport sends to one URL. ``close()`` forgets (and closes)
    them; a remembered pool closed by anyone else (urllib3 1.26 closes the pools it drops) is
    looked up afresh.
    """

    def __init__(self, *args: Any, max_idle: float = KEEPALIVE_MAX_IDLE, **kwargs: Any) -> None:
        self.max_idle = max_idle
        self._pools: dict[tuple[Any, ...], Any] = {}
        self._paths: dict[Any, str] = {}
        super().__init__(*args, **kwargs)

    def get_connection_with_tls_context(
        self, request: requests.PreparedRequest, verify: Any, proxies: Any = None, cert: Any = None
    ) -> Any:
        if proxies:
            return super().get_connection_with_tls_context(request, verify, proxies, cert)
        key = (request.url, verify, cert)
        try:
            pool = self._pools.get(key)
        except TypeError:  # an unhashable cert (a list): not remembered
            return super().get_connection_with_tls_context(request, verify, proxies, cert)
        if pool is None or pool.pool is None:  # not known yet, or closed since
            pool = super().get_connection_with_tls_context(request, verify, proxies, cert)
            if len(self._pools) >= 16:
                self._pools.clear()
            self._pools[key] = pool
        return pool

    def request_url(self, request: requests.PreparedRequest, proxies: Any) -> str:
        """The path urllib3 is given for ``request``: without proxies it depends on the URL
        alone, and a transport sends to one, so it is worked out once."""
        if proxies:
            return super().request_url(request, proxies)
        url = request.url
        path = self._paths.get(url)
        if path is None:
            path = super().request_url(request, proxies)
            if len(self._paths) >= 16:
                self._paths.clear()
            self._paths[url] = path
        return path

    def build_response(self, req: requests.PreparedRequest, resp: Any) -> requests.Response:
        """requests' ``build_response``, which walks the cookie jar machinery for every
        response, without that walk for one that sets no cookie (nothing to store)."""
        headers = resp.headers
        if sets_cookies(headers):
            return super().build_response(req, resp)
        response = requests.Response()
        response.status_code = resp.status
        response.headers = CaseInsensitiveDict(headers)
        response.encoding = requests.utils.get_encoding_from_headers(response.headers)
        response.raw = resp
        response.reason = resp.reason
        response.url = req.url.decode("utf-8") if isinstance(req.url, bytes) else req.url  # type: ignore[assignment]
        response.request = req
        response.connection = self
        return response

    def close(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        super().close()
        for pool in pools:  # urllib3 2 drops its pools without closing them: their sockets now
            pool.close()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self._pool_classes()

    def _pool_classes(self) -> dict[str, type[HTTPConnectionPool]]:
        if self.max_idle == KEEPALIVE_MAX_IDLE:
            return _POOL_CLASSES
        return {scheme: type(cls.__name__, (cls,), {"max_idle": self.max_idle}) for scheme, cls in _POOL_CLASSES.items()}

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> urllib3.PoolManager:
        manager: urllib3.PoolManager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = self._pool_classes()
        return manager
