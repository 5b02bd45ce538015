"""The socket work under the HTTP transports: urllib3 classes that hand their sockets to the
exchange running on this thread, and the adapter that uses them.

``AbortableAdapter`` (mounted on the transport's own ``requests.Session``) uses connection and
pool classes that hand every socket they use to the ``Held`` current on this thread (an
exchange's, which the ``Requester`` makes current around the send), as soon as the socket is
connected or taken from the pool: so another thread can end the exchange in any phase
(``Held.shut_down``, from ``Exchange.abort``). This module knows nothing of exchanges; the
same classes save work on
every request: a plain TCP socket stays blocking (``ExchangeSocket``: the exchange's watchdog
holds deadlines), a small request goes out in one write, validated header lines are
remembered, a response head is read without the ``email`` parser (``_fast_head``), a
connection idle too long is not reused, and the pool for the URL is found once.
"""

from __future__ import annotations

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

from ._fast_head import FastHeadResponse

__all__ = ["KEEPALIVE_MAX_IDLE", "AbortableAdapter", "ExchangeSocket", "Held", "current", "sets_cookies", "shut"]

#: A pooled connection idle longer than this is not reused (Node servers close theirs at 5 s).
KEEPALIVE_MAX_IDLE = 4.0
#: A request body up to this many bytes goes out in the same write as the request's head.
ONE_WRITE_MAX = 64 * 1024
#: Validated header lines a connection remembers (then it forgets them all and starts again).
LINES_KEPT = 64


def shut(sock: Any) -> None:
    """Shut ``sock`` down for reading and writing, which wakes a ``recv`` blocked in any thread.

    ``socket.socket``'s own shutdown, also for an ``SSLSocket``: no TLS close_notify is tried
    while another thread is inside the TLS layer reading. ``close()`` alone wakes nobody.
    """
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, TypeError, ValueError):
        pass


class Held:
    """The sockets one exchange uses, handed over on the thread running it, for another thread
    to shut down.

    It keeps its own references: ``http.client`` drops ``conn.sock`` for a close-delimited
    response (no Content-Length, not chunked) and hands the socket to the response, where
    nothing else can reach it.
    """

    __slots__ = ("_socks", "closed", "reused")

    def __init__(self) -> None:
        self._socks: list[Any] | None = []  # None once forgotten: the sockets may serve others
        self.closed = False
        #: Whether the current attempt went out on a kept-alive connection from the pool.
        self.reused = False

    def attach(self, sock: Any) -> None:
        """A socket the exchange is using (shut down at once if it was shut down already)."""
        socks = self._socks
        if socks is None or sock is None:
            return
        socks.append(sock)
        if self.closed:
            shut(sock)

    def rearm(self) -> None:
        """A further request of the same exchange (a retry, a renewal) hands its sockets over."""
        if self._socks is None:
            self._socks = []

    def forget(self) -> None:
        """The reply is read: forget the sockets before the connection goes back to the pool."""
        self._socks = None

    def shut_down(self) -> int | None:
        """Shut down every socket held, and any handed over later; how many were held (None:
        forgotten already, 0: none handed over, as with a user's own session)."""
        self.closed = True
        socks = self._socks
        if socks is None:
            return None
        for sock in list(socks):
            shut(sock)
        return len(socks)


class _Current(threading.local):
    held: Held | None = None


#: The ``Held`` of the exchange running on this thread, if any (the ``Requester`` sets it).
current = _Current()


def sets_cookies(headers: Any) -> bool:
    """Whether a response's headers (any case-insensitive mapping) set a cookie."""
    return "set-cookie" in headers or "set-cookie2" in headers


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
        held = current.held
        if held is not None:
            held.attach(self.sock)

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
        held = current.held
        if held is not None:
            held.attach(self.sock)


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
    held = current.held
    if held is not None:
        held.reused = conn.sock is not None
        if conn.sock is not None:
            held.attach(conn.sock)


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
