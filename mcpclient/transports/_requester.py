"""What both HTTP transports share: one request, sent right, retried only when safe.

``Requester.request`` builds each request from a template prepared once (headers merged, URL
normalized, proxies and CA bundle looked up once), adds the per-request headers (a fresh token,
the session id), follows same-origin redirects only, and retries what provably never reached
the server. ``translate`` is the one place where requests, urllib3 and OSError exceptions
become mcpclient exceptions; given the transport's redactor, it redacts what they quote of
the server (a status line, a chunk header) and chains them only when they show no secret.
Every error ``request`` raises, and ``status_error``'s (reason phrase and body excerpt
included), are redacted the same way.

Why not ``session.post``: with a default ``requests.Session`` every call re-reads the proxy
environment (``getproxies`` walks ``os.environ`` twice), looks for a ``.netrc`` file on disk,
and re-merges and re-prepares every header and the URL. That is most of the ~600 us of CPU a
call costs; sending a copy of a prepared request through ``session.send`` does the same work
once per transport instead of once per call.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import logging
import random
import socket
import time
from typing import Any, Mapping, cast
from urllib.parse import urljoin, urlsplit

import requests
import requests.cookies
import urllib3.exceptions
from requests.structures import CaseInsensitiveDict

from .._core import origin as _origin
from .._core.exceptions import HTTPStatusError, MCPError, ProtocolError, RequestTimeout, TransportError
from .._core.credentials import PROTOCOL_HEADER, Credentials
from .._core.redact import Redactor
from .._core.text import clean
from ._exchange import Exchange
from ._sockets import KEEPALIVE_MAX_IDLE, AbortableAdapter, current, sets_cookies
from ._token import TokenFetcher
from .base import About, ExtensionSource, Peer, decode_message

__all__ = ["Requester", "TokenSource", "credentials_for", "read_error_body", "resolve_auth", "translate"]

log = logging.getLogger(__name__)

#: Seconds allowed to open a TCP (and TLS) connection, unless the call's own timeout is shorter.
CONNECT_TIMEOUT = 10.0
#: First retry delay and cap of the exponential backoff, in seconds.
RETRY_BASE_DELAY = 0.5
RETRY_MAX_DELAY = 10.0
#: The longest ``Retry-After`` honoured; a server asking for more gets an error at once.
RETRY_AFTER_MAX = 60.0
#: Redirect hops followed for one request (same origin only).
MAX_REDIRECTS = 5
#: How much of an error body is read, and how much of it goes into a message.
ERROR_BODY_READ = 64 * 1024
ERROR_EXCERPT = 300

RETRY_STATUSES = frozenset({429, 503})
#: What each kind of request asks for besides the transport's headers (and ``Content-Length``,
#: set per request).
METHOD_HEADERS: dict[str, dict[str, str]] = {
    "POST": {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    "GET": {"Accept": "text/event-stream"},
    "DELETE": {},
}
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

#: What ``token_provider=`` takes: a ``TokenProvider``, an object with ``token() -> str``, or
#: a plain callable returning a str (see ``_token``).
TokenSource = Any


class Requester:
    """Sends one HTTP request for a transport; safe to use from many threads at once."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        *,
        token_provider: TokenSource | None,
        auth_header: str | None,
        auth: Any,
        session: requests.Session | None,
        max_retries: int,
        connect_timeout: float,
        keepalive_idle: float = KEEPALIVE_MAX_IDLE,
    ) -> None:
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"an http:// or https:// URL is required, got {url!r}")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        # (TokenFetcher refuses what is no token provider; it sends the token under auth_header.)
        self._tokens = None if token_provider is None else TokenFetcher(token_provider, auth_header)
        self.own_session = session is None
        self.session = session_ = session or _new_session(keepalive_idle)
        self.max_retries = max_retries
        self.connect_timeout = connect_timeout
        try:
            self.origin = _origin.origin(url)
        except ValueError as exc:
            raise ValueError(f"{safe_url(url)!r} cannot be used: {exc}; write its host and port plainly") from None
        merged = CaseInsensitiveDict(session_.headers)
        merged.update(headers or {})
        self._templates = {method: _template(method, url, merged, session_.hooks) for method in METHOD_HEADERS}
        self.url = cast(str, self._templates["POST"].url)  # (prepared: the URL as requests sends it)
        settings = session_.merge_environment_settings(self.url, {}, None, None, None)
        self._send_kwargs = {
            "proxies": settings["proxies"],
            "verify": settings["verify"],
            "cert": settings["cert"],
            "stream": True,
        }
        # The transport's own session has nothing to add to its adapter's send but the cookies
        # a response sets: a request without response hooks goes to the adapter directly.
        self._adapter = session_.get_adapter(self.url) if self.own_session else None
        self.auth = auth = resolve_auth(self.url, auth, session_)
        # Every credential this transport sends (the one account: headers, the URL's user info
        # and query, the auth object, the token provider, the lent session's cookies), for
        # every error and log line built from what the server says, and for the result cache.
        self.credentials = credentials_for(url, headers, auth=auth, token_provider=token_provider, session=session)

    @property
    def redactor(self) -> Redactor:
        """The account's redactor: every credential this transport sent, in every form."""
        return self.credentials.redactor

    def close(self) -> None:
        if self._tokens is not None:
            self._tokens.close()
        if self.own_session:
            self.session.close()

    # -- one request ------------------------------------------------------------------------

    def request(
        self,
        method: str,
        *,
        exchange: Exchange,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        url: str | None = None,
        deadline: float | None = None,
        read_timeout: float | None | str = "deadline",
        retry: bool = True,
        resend_safe: bool = False,
    ) -> requests.Response:
        """Send one request and return the response once its headers are read.

        Every error raised is scrubbed of the credentials this transport sent (``_redact``).

        The body is not read: the caller streams it (and must release or close it). Retries
        429, 503 and connect-phase failures up to ``max_retries`` times with capped exponential
        backoff honouring ``Retry-After``, never past ``deadline`` (monotonic seconds).
        ``exchange`` lets another thread end the request in any phase (its sockets are
        registered with it; a backoff wait wakes on its abort, and nothing is re-sent after
        one): then its error is raised. ``read_timeout`` defaults to the time left.
        ``resend_safe``: the request changes nothing on the server, so if it fails on a
        kept-alive connection before any reply (the server was closing it), it is sent once
        more on a new one; otherwise that failure says the request may have run.
        Raises ``RequestTimeout``, ``HTTPStatusError`` (a refused redirect, or 429/503 after
        the last retry is handed back as a response) or ``TransportError``.
        """
        with self.redactor.scrubbing():
            resent = not resend_safe
            attempt = 0
            while True:
                last = not retry or attempt >= self.max_retries
                try:
                    response = self._attempt(method, body, headers, url, deadline, read_timeout, exchange, resent)
                except _Resend as exc:
                    log.info("%s; sending it again on a new connection (it changes nothing)", exc.error)
                    resent = True
                    continue
                except _Retryable as exc:
                    exchange.check()
                    exchange.sent = False  # refused before it ran: a cancel now has nothing to stop
                    if last:
                        raise exc.error from exc.error.__cause__
                    self._pause(backoff(attempt), str(exc.error), attempt, url, deadline, exchange)
                else:
                    if last or response.status_code not in RETRY_STATUSES:
                        return response
                    exchange.sent = False
                    delay = self._retry_after(response, url)
                    why = f"{self._safe(url)} answered HTTP {response.status_code}"
                    self._pause(backoff(attempt) if delay is None else delay, why, attempt, url, deadline, exchange)
                attempt += 1

    def _attempt(
        self,
        method: str,
        body: bytes | None,
        headers: Mapping[str, str] | None,
        url: str | None,
        deadline: float | None,
        read_timeout: float | None | str,
        exchange: Exchange,
        resent: bool,
    ) -> requests.Response:
        """One attempt: the request sent, following same-origin redirects, within ``deadline``."""
        exchange.check()
        exchange.sockets.rearm()
        remaining = _remaining(deadline)
        if remaining is not None and remaining <= 0:
            raise RequestTimeout(f"no response from {self._safe(url)} in time", timeout=None)
        prepared = self._prepare(method, body, headers, url, deadline, exchange)
        remaining = _remaining(deadline)  # what the token fetch left of it
        connect = self.connect_timeout if remaining is None else min(self.connect_timeout, remaining)
        read = remaining if read_timeout == "deadline" else read_timeout
        for _ in range(MAX_REDIRECTS + 1):
            response = self._send_once(prepared, (connect, read), method, exchange, resent)
            if response.status_code not in REDIRECT_STATUSES or "location" not in response.headers:
                return response
            self._redirect(prepared, response)
        raise HTTPStatusError(
            f"too many redirects from {self._safe(url)}", status_code=310, url=self._safe(url)
        )

    def _send_once(
        self, prepared: requests.PreparedRequest, timeout: Any, method: str,
        exchange: Exchange, resent: bool,
    ) -> requests.Response:
        """Send ``prepared`` once, no redirect followed, registering its sockets with
        ``exchange``; what it raises is translated (``_failure``).

        Through the session, or straight to its adapter when the session is the transport's
        own and no auth hook waits for the response (``Session.send`` then only dispatches no
        hooks, times the request and stores the cookies a response sets, which is done here).
        """
        held = current.held = exchange.sockets
        held.reused = False
        exchange.sent = True  # from here on it may reach the server
        failure: BaseException | None = None
        adapter = self._adapter
        try:
            if adapter is None or prepared.hooks["response"]:
                response = self.session.send(prepared, timeout=timeout, allow_redirects=False, **self._send_kwargs)  # type: ignore[arg-type]
            else:
                response = adapter.send(prepared, timeout=timeout, **self._send_kwargs)  # type: ignore[arg-type]
                if sets_cookies(response.headers):
                    requests.cookies.extract_cookies_to_jar(self.session.cookies, prepared, response.raw)  # type: ignore[no-untyped-call]
        except Exception as exc:
            failure = self._failure(exc, method, prepared, exchange, resent)
        finally:
            current.held = None
        if failure is not None:
            raise failure  # out of the except block: the foreign error is no implicit context
        exchange.response = response
        if exchange.reason is not None:  # aborted just as the headers came
            response.close()
            raise exchange.error()
        if self.auth is not None and response.request is not None and response.request is not prepared:
            self._remember(response.request, prepared.headers)  # an auth hook resent it with a new token
        return response

    def _redirect(self, prepared: requests.PreparedRequest, response: requests.Response) -> None:
        """Point ``prepared`` where ``response`` redirects, within the same origin only."""
        target = urljoin(prepared.url or "", response.headers["location"])
        response.close()
        if not _origin.same_origin(target, self.origin):
            raise HTTPStatusError(
                f"{self._safe(prepared.url)} redirected to another origin, or to a URL the URL "
                f"parsers read differently ({self.redact(shown_url(target))}); "
                "mcpclient follows redirects only within the same origin so your credentials "
                "never leave it: use the new address directly if you trust it",
                status_code=response.status_code,
                url=self._safe(prepared.url),
            )
        log.debug("following a redirect to %s", self._safe(target))
        prepared.prepare_url(target, None)
        self._check_destination(prepared)

    def _retry_after(self, response: requests.Response, url: str | None) -> float | None:
        """How long a 429 or 503 asks to wait (its ``Retry-After``; None: it does not say),
        with the response closed; an error when it asks for longer than ``RETRY_AFTER_MAX``."""
        response.close()
        delay = retry_after(response.headers.get("Retry-After"))
        if delay is not None and delay > RETRY_AFTER_MAX:
            raise HTTPStatusError(
                f"{self._safe(url)} answered HTTP {response.status_code} and asked to retry "
                f"after {delay:.0f}s, longer than mcpclient waits",
                status_code=response.status_code,
                url=self._safe(url),
            )
        return delay

    def _pause(
        self, delay: float, why: str, attempt: int, url: str | None, deadline: float | None, exchange: Exchange
    ) -> None:
        """Wait ``delay`` seconds before retry ``attempt + 1``, within ``deadline``: woken by
        the exchange's abort (close, cancel, its deadline), it raises, and nothing is re-sent."""
        log.info("%s; retrying in %.2fs (retry %d of %d)", why, delay, attempt + 1, self.max_retries)
        remaining = _remaining(deadline)
        if remaining is not None and delay >= remaining:
            raise RequestTimeout(
                f"{self._safe(url)} asked to retry after {delay:.2f}s, beyond the call's timeout", timeout=None
            )
        if exchange.wait(delay):
            raise exchange.error()

    def _failure(
        self, exc: Exception, method: str, prepared: requests.PreparedRequest, exchange: Exchange, resent: bool,
    ) -> BaseException:
        """What to raise for ``exc``, raised by sending ``prepared``; chained to it only
        when its text shows no credential (see ``translate``)."""
        if exchange.reason is not None:
            return exchange.error()
        error = translate(exc, f"{method} {self._safe(prepared.url)}", self.redactor)
        if _connect_phase(exc):
            return _Retryable(error)
        if exchange.sockets.reused and _dropped_before_reply(exc):
            if not resent:
                return _Resend(error)
            wrapped = TransportError(
                f"{error} (on a kept-alive connection the server was closing, before any reply; "
                "the request may have run on the server, so it was not sent again)"
            )
            wrapped.__cause__ = error.__cause__
            wrapped.__suppress_context__ = True
            return wrapped
        return error

    def _prepare(
        self, method: str, body: bytes | None, headers: Mapping[str, str] | None, url: str | None,
        deadline: float | None, exchange: Exchange,
    ) -> requests.PreparedRequest:
        prepared = self._templates[method].copy()
        if url is not None:
            if not _origin.same_origin(url, self.origin):
                raise TransportError(
                    f"refusing to send to {safe_url(url)}: not the origin this transport was opened for"
                )
            prepared.prepare_url(url, None)
            self._check_destination(prepared)
        extra = prepared.headers
        if headers:
            extra.update(headers)
            for _, value in Credentials.carried(headers):  # a middleware's credential for this message
                self.credentials.sent_header(value)
        if body is not None:
            prepared.body = body
            extra["Content-Length"] = str(len(body))
        cookies = self.session.cookies
        if len(cookies):
            prepared.prepare_cookies(cookies)
        if self.auth is not None:
            before = dict(prepared.headers)
            prepared.prepare_auth(self.auth)
            self._remember(prepared, before)
        tokens = self._tokens
        if tokens is not None:
            token = tokens.fetch(deadline, exchange)
            self.credentials.sent(token, tokens.prefix + token)
            if token:
                extra[tokens.header] = tokens.prefix + token
        return prepared

    def _remember(self, prepared: requests.PreparedRequest, before: Mapping[str, str]) -> None:
        """Enter what an auth object put on ``prepared`` into the account (cheap when known):
        each header it added or changed since ``before``."""
        for name, value in prepared.headers.items():
            if value and before.get(name) != value and not name.lower().startswith(PROTOCOL_HEADER):
                self.credentials.sent_header(value)

    def _check_destination(self, prepared: requests.PreparedRequest) -> None:
        """Refuse to send ``prepared`` (credentials and all) anywhere but the configured origin.

        Checked on the prepared URL, the one requests and urllib3 connect to, after
        redirects and per-request URLs: the last word before anything leaves.
        """
        if _origin.origin_or_none(prepared.url) != self.origin:
            raise TransportError(
                f"refusing to send to {self._safe(prepared.url)}: not the origin this transport was opened for"
            )

    # -- helpers for the transports ---------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` with every credential this transport sent replaced (see ``_redact``).

        For every text a server chose that goes into an exception or a log line.
        """
        return self.redactor.redact(text)

    def decode(self, data: bytes | str) -> Any:
        """``decode_message``, whose error for a bad body shows a redacted excerpt of it.

        The error carries no cause: the JSON decoder's error holds the whole body.
        """
        try:
            return decode_message(data)
        except ProtocolError as exc:
            reason = f"{type(exc.__cause__).__name__}: {exc.__cause__}" if exc.__cause__ else "invalid"
            text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
            excerpt = self.redact(text)[:120]  # redact, then cut
            failure = ProtocolError(f"the server sent invalid JSON ({self.redact(reason)}): {excerpt!r}")
        raise failure

    def deliverable(self, message: Any) -> Any:
        """A decoded message with its error texts redacted, before it goes to the engine."""
        return self.redactor.redact_message(message)

    def status_error(self, response: requests.Response, what: str, body: bytes | None = None) -> HTTPStatusError:
        """An ``HTTPStatusError`` for ``response``; reads (and closes) its body unless given.

        The server chose the reason phrase and the body: both are redacted (then cut).
        """
        if body is None:
            body = read_error_body(response)
        excerpt = _excerpt(self.redact(body.decode("utf-8", "replace")))  # redact, then cut
        url = self._safe(response.url)
        reason = _excerpt(self.redact(_text(response.reason or "")))
        message = self.redact(f"{what}: {url} answered HTTP {response.status_code} {reason}".rstrip())
        if excerpt:
            message += f": {excerpt}"
        return HTTPStatusError(message, status_code=response.status_code, body=excerpt, url=url,
                               retry_after=retry_after(response.headers.get("Retry-After")))

    def _safe(self, url: str | None) -> str:
        return self.redact(safe_url(url or self.url))


class _Resend(Exception):
    def __init__(self, error: MCPError) -> None:
        self.error = error


class _Retryable(Exception):
    """A failure that proves the request never reached the server (``error.delivered`` is false)."""

    def __init__(self, error: MCPError) -> None:
        super().__init__(str(error))
        if isinstance(error, TransportError):
            error.delivered = False
        self.error = error


def _template(method: str, url: str, headers: Any, hooks: Any) -> requests.PreparedRequest:
    """A ``method`` request to ``url`` prepared once, with ``headers`` and ``METHOD_HEADERS``:
    each request sends a copy (``Requester._prepare``)."""
    template = requests.PreparedRequest()
    template.prepare(method=method, url=url, headers=headers, hooks=hooks)
    template.headers.pop("Content-Length", None)
    template.headers.update(METHOD_HEADERS[method])
    return template


def resolve_auth(url: str, auth: Any, session: requests.Session | None) -> Any:
    """The auth object requests will apply: ``auth``, else the session's, else a ``.netrc``
    entry for ``url`` when the session trusts the environment; a pair becomes HTTP Basic."""
    if auth is None and session is not None:
        auth = session.auth
    if auth is None and (session is None or session.trust_env):
        auth = requests.utils.get_netrc_auth(url)
    if isinstance(auth, tuple) and len(auth) == 2:
        auth = requests.auth.HTTPBasicAuth(*auth)
    return auth


def credentials_for(
    url: str, headers: Mapping[str, str] | None = None, *, auth: Any = None, token_provider: TokenSource | None = None,
    session: requests.Session | None = None,
) -> Credentials:
    """The account of what an HTTP transport for ``url`` sends (``Credentials``), as the
    transports make it: the URL's user info and query, ``headers``, the headers and cookies of
    a lent ``session`` (besides requests' defaults), HTTP Basic (``auth``, the session's or a
    ``.netrc`` entry), and, as changing channels, any other auth object and a token provider."""
    credentials = Credentials()
    credentials.url(url)
    credentials.headers(headers)
    if session is not None:
        defaults, given = requests.utils.default_headers(), CaseInsensitiveDict(headers or {})
        credentials.headers({name: value for name, value in session.headers.items()
                             if defaults.get(name) != value and name not in given})
        for cookie in session.cookies:
            if cookie.value is not None:
                credentials.cookie(cookie.name, cookie.value)
    auth = resolve_auth(url, auth, session)
    if isinstance(auth, requests.auth.HTTPBasicAuth):
        credentials.basic(auth.username, auth.password)
    elif auth is not None:
        credentials.changing("an auth object")
    if token_provider is not None:
        credentials.changing("a token provider")
    return credentials


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


def about(kind: str, url: str, requester: Requester) -> About:
    """What an HTTP transport of ``kind`` says of its server at ``url`` (``Transport.about``).

    Its ``server_key`` is ``kind``, ``safe_url(url)`` and, when the URL has a query (which may
    pick a server or a tenant), a digest of it, never the query itself (it may hold a key).
    Telemetry sees TCP to the URL's host and port. Its credentials are the requester's; its
    extensions what the auth object declares (``ExtensionSource``).
    """
    parts = urlsplit(url)
    key: tuple[str, ...] = (kind, safe_url(url))
    if parts.query:
        key += (hashlib.sha256(parts.query.encode("utf-8", "surrogateescape")).hexdigest()[:32],)
    port = parts.port or (443 if parts.scheme == "https" else 80) if parts.hostname else None
    auth = requester.auth
    return About(
        server_key=key,
        peer=Peer(network="tcp", protocol="http", address=parts.hostname or None, port=port),
        credentials=requester.credentials,
        extensions=dict(auth.declared_extensions()) if isinstance(auth, ExtensionSource) else {},
    )


def safe_url(url: str) -> str:
    """``url`` without user info, query or fragment, cleaned (``_text``): safe to print."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return clean(f"{parts.scheme}://{host}{port}{parts.path}", None)  # a server's URL: inert


def shown_url(url: str) -> str:
    """``safe_url`` of ``url`` as it would be sent: shows where a tricky URL really points."""
    try:
        return safe_url(_origin.connect_url(url))
    except ValueError:
        return "<invalid URL>"


def backoff(attempt: int) -> float:
    """Capped exponential backoff with jitter: about 0.5, 1, 2, 4, 8, 10, 10... seconds."""
    delay: float = min(RETRY_MAX_DELAY, RETRY_BASE_DELAY * (2**attempt))
    return delay * (0.75 + random.random() / 4)


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _connect_phase(exc: BaseException) -> bool:
    """Whether ``exc`` proves the request never reached the server (refused, DNS, connect)."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:
        item = stack.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(
            item,
            (
                urllib3.exceptions.NewConnectionError,  # refused, unreachable, DNS (subclass)
                urllib3.exceptions.ConnectTimeoutError,
                ConnectionRefusedError,
                socket.gaierror,
            ),
        ):
            return True
        if isinstance(item, urllib3.exceptions.MaxRetryError):
            stack.append(item.reason)
        stack.extend(arg for arg in item.args if isinstance(arg, BaseException))
        stack.append(item.__cause__)
        stack.append(item.__context__)
    return False


def _dropped_before_reply(exc: BaseException) -> bool:
    """Whether ``exc`` is the connection failing before the response headers came: closed
    (``RemoteDisconnected``), reset or broken while the request was written or awaited."""
    if isinstance(exc, (requests.exceptions.ReadTimeout, urllib3.exceptions.ReadTimeoutError, socket.timeout)):
        return False
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:
        item = stack.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                             ConnectionAbortedError)):
            return True
        if isinstance(item, urllib3.exceptions.MaxRetryError):
            stack.append(item.reason)
        stack.extend(arg for arg in item.args if isinstance(arg, BaseException))
        stack.append(item.__cause__)
        stack.append(item.__context__)
    return False


#: Connections kept per host by a transport's own session (concurrent callers share them).
POOL_MAXSIZE = 64


def translate(exc: BaseException, what: str, redactor: Redactor | None = None) -> MCPError:
    """The mcpclient exception for a requests, urllib3 or OSError failure during ``what``.

    Its ``__cause__`` is ``exc`` (an MCPError is returned as it is). With ``redactor``, the
    message is redacted, and ``exc`` stays its cause only if nothing in its chain shows a
    secret (``Redactor.scrub``): a foreign exception quoting the server cannot be rewritten.
    Raise the result outside the ``except`` block that caught ``exc``, or Python makes
    ``exc`` its context all the same.
    """
    if isinstance(exc, MCPError):
        return exc
    error = _translated(exc, what)
    error.__cause__ = exc
    error.__suppress_context__ = True
    return redactor.scrub(error) if redactor is not None else error


def _translated(exc: BaseException, what: str) -> MCPError:
    if isinstance(exc, (requests.exceptions.ReadTimeout, urllib3.exceptions.ReadTimeoutError, socket.timeout)):
        # The request went out; its answer did not come back (a connect timeout is separate).
        return RequestTimeout(f"{what}: the server did not answer in time", timeout=None, delivered=True)
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return TransportError(f"{what}: could not connect in time")
    if isinstance(exc, requests.exceptions.SSLError):
        return TransportError(f"{what}: TLS failed: {_reason(exc)}")
    if isinstance(exc, requests.exceptions.ConnectionError) and _connect_phase(exc):
        return TransportError(f"{what}: could not connect: {_reason(exc)}")
    if isinstance(
        exc,
        (
            requests.exceptions.RequestException,
            urllib3.exceptions.HTTPError,
            http.client.HTTPException,
            OSError,
            ValueError,
        ),
    ):
        return TransportError(f"{what}: the connection failed: {_reason(exc)}")
    return TransportError(f"{what}: {type(exc).__name__}: {exc}")


def _reason(exc: BaseException) -> str:
    # Dig out the innermost useful message; urllib3 wraps it in two or three layers.
    inner: Any = exc
    for _ in range(5):
        arg = inner.args[0] if getattr(inner, "args", None) else None
        if isinstance(inner, urllib3.exceptions.MaxRetryError) and inner.reason is not None:
            inner = inner.reason
        elif isinstance(arg, BaseException):
            inner = arg
        else:
            break
    text = str(inner) or type(inner).__name__
    return text if len(text) <= 300 else text[:300] + "..."


def read_error_body(response: requests.Response) -> bytes:
    """At most ERROR_BODY_READ bytes of an error body; the response is closed after."""
    try:
        return response.raw.read(ERROR_BODY_READ, decode_content=True) or b""
    except Exception:  # a broken error body must not hide the status
        return b""
    finally:
        response.close()


def _new_session(keepalive_idle: float = KEEPALIVE_MAX_IDLE) -> requests.Session:
    """A session whose pool keeps a connection for each of many concurrent callers, and whose
    connections register their sockets with the exchange using them (see ``_exchange``).

    requests keeps 10 per host by default: a client shared by more threads would open a new
    TCP connection for every call past that.
    """
    session = requests.Session()
    adapter = AbortableAdapter(pool_connections=4, pool_maxsize=POOL_MAXSIZE, max_idle=keepalive_idle)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _excerpt(data: bytes | str) -> str:
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    text = " ".join(data.split())
    return text if len(text) <= ERROR_EXCERPT else text[:ERROR_EXCERPT] + "..."
