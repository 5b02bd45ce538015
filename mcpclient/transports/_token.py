"""Token providers: the token for each HTTP request, fetched within the call's deadline.

A ``token_provider`` is user code that may be slow (a vault, a token endpoint): its fetch is
part of the request, so the call's deadline, its cancel and ``close()`` end the wait for it,
and a request whose token never came was never sent (its caller gets a ``RequestTimeout``
that says so, and no ``notifications/cancelled`` follows). A ``TokenProvider`` is told how
long it may take and runs on the calling thread; any other provider (a plain function, an
object with ``token()``) runs on a helper thread that the call waits for, which a thread
that is blocked in user code could not otherwise be freed from.
"""

from __future__ import annotations

import abc
import threading
import time
from typing import Any

from .._core.exceptions import ConnectionClosed, MCPError, RequestCancelled, RequestTimeout, TransportError
from ._exchange import CANCELLED, CLOSED, Exchange
from ._threads import ThreadPool

__all__ = ["TokenFetcher", "TokenProvider"]

#: A helper thread that ran a provider exits after this many idle seconds (one that is
#: busy serves the next request at once; a transport left unclosed leaves none behind long).
TOKEN_THREAD_IDLE = 2.0


class TokenProvider(abc.ABC):
    """A source of tokens for the HTTP transports that is told how long it may take.

    Pass one as ``token_provider=``. ``token(timeout)`` is called for every request and every
    retry, possibly from several threads at once, on the thread making the request:
    ``timeout`` is what is left of the call's timeout in seconds (None: the call has none).
    Return the token within that time, or raise (an ``MCPError`` goes to the caller as it is,
    anything else as a ``TransportError``). A token returned after the deadline is not used:
    the call fails with ``RequestTimeout``, and nothing is sent.

    A plain function, or an object with a ``token()`` method that takes no argument, works
    too: it is called on a helper thread, and the call waits for it only until its deadline,
    its cancel or ``close()``. Subclassing ``TokenProvider`` saves that hand-off between
    threads (about 50 us of CPU per request) for a provider that can keep to a time limit,
    for instance by returning a cached token and bounding its refresh.
    """

    @abc.abstractmethod
    def token(self, timeout: float | None) -> str:
        """The token for the next request, within ``timeout`` seconds (None: no limit)."""


class _Fetch:
    """One token fetch on a helper thread: its outcome, and the Event it sets when done."""

    __slots__ = ("done", "error", "finished", "token")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.finished = False
        self.token: Any = None
        self.error: BaseException | None = None


class TokenFetcher:
    """Calls a transport's token provider for each request, within the request's deadline."""

    def __init__(self, provider: Any, header: str | None = None) -> None:
        self._bounded: TokenProvider | None = None
        self._call: Any = None
        if isinstance(provider, TokenProvider):
            self._bounded = provider
        elif hasattr(provider, "token"):
            self._call = provider.token
        elif callable(provider):
            self._call = provider
        else:
            raise TypeError("token_provider must have a token() method or be callable")
        #: The header a token is sent in, and what comes before it there: ``Authorization:
        #: Bearer <token>`` by default, the token alone under a ``header`` of one's own.
        self.header = header or "Authorization"
        self.prefix = "" if header else "Bearer "
        self._pool: ThreadPool | None = None
        self._closed = False
        self._lock = threading.Lock()

    def fetch(self, deadline: float | None, exchange: Exchange) -> str:
        """The provider's token (stripped) for the request of ``exchange``, or the error that
        ends it unsent: ``RequestTimeout`` (not delivered) once ``deadline`` passes, the error
        of the exchange aborted meanwhile (cancel, close), or the provider's own failure."""
        if self._bounded is not None:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            token = _guarded(self._bounded.token, remaining)
        else:
            token = self._fetch_aside(deadline, exchange)
        if exchange.reason is not None:
            raise _unsent(exchange, exchange.what)
        if deadline is not None and time.monotonic() >= deadline:
            raise _late(exchange.what)
        if not isinstance(token, str):
            raise TransportError(f"the token provider returned {type(token).__name__}, not a str")
        return token.strip()

    def _fetch_aside(self, deadline: float | None, exchange: Exchange) -> Any:
        fetch = _Fetch()
        pool = self._pool_or_none()
        if pool is None or not pool.submit(_run, self._call, fetch):
            raise ConnectionClosed("the transport is closed")
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        exchange.wait_for(fetch.done, remaining)  # woken by its abort, the watchdog's included
        if not fetch.finished:
            if exchange.reason is not None:
                raise _unsent(exchange, exchange.what)
            raise _late(exchange.what)
        if fetch.error is not None:
            raise fetch.error
        return fetch.token

    def _pool_or_none(self) -> ThreadPool | None:
        with self._lock:
            if self._pool is None and not self._closed:
                self._pool = ThreadPool("mcpclient-token", idle_timeout=TOKEN_THREAD_IDLE)
            return self._pool

    def close(self) -> None:
        """Let the helper threads go (one still in the provider ends when it returns)."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown()


def _guarded(call: Any, *args: Any) -> Any:
    """``call(*args)``, whose failure becomes the ``TransportError`` that says what failed."""
    try:
        return call(*args)
    except MCPError:
        raise
    except Exception as exc:
        raise TransportError(f"the token provider failed: {type(exc).__name__}: {exc}") from exc


def _run(call: Any, fetch: _Fetch) -> None:
    """On a helper thread: one call of the provider; the waiting request reads the outcome."""
    try:
        fetch.token = _guarded(call)
    except BaseException as exc:  # handed to the request's thread, which raises it
        fetch.error = exc
    finally:
        fetch.finished = True
        fetch.done.set()


def _late(what: str) -> RequestTimeout:
    return RequestTimeout(
        f"{what}: the token provider gave no token within the call's timeout, so nothing was "
        "sent; give the call more time, or make the provider return a cached token"
    )


def _unsent(exchange: Exchange, what: str) -> MCPError:
    """The error of an exchange aborted while its token was fetched: nothing went out."""
    if exchange.reason == CANCELLED:
        return RequestCancelled(f"{what} was cancelled while its token was fetched; nothing was sent")
    if exchange.reason == CLOSED:
        return ConnectionClosed("the transport is closed")
    return _late(what)
