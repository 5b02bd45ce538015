"""The Streamable HTTP transport (MCP 2025-03-26 and later): one POST per message."""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from typing import Any, Callable, Iterator, Mapping

import attrs
import requests

from .._core.exceptions import (
    ConnectionClosed,
    HTTPStatusError,
    MCPError,
    ProtocolError,
    SessionLost,
    StreamInterrupted,
    TransportError,
)
from . import _requester
from ._exchange import CANCELLED, CLOSED, Exchange, Exchanges
from ._requester import Requester, TokenSource
from ._sockets import KEEPALIVE_MAX_IDLE
from ._sse_parser import SSEEvent, SSEParser
from ._streams import (
    MAX_MESSAGE_BYTES,
    abort_response,
    is_event_stream,
    is_json,
    read_body,
    read_events,
    set_read_timeout,
    stream_end_ready,
)
from ._threads import ThreadPool
from .base import MODERN, PLAIN, About, ExchangeTransport, Failure, SendOptions, decode_message, encode_message

__all__ = ["StreamableHTTPTransport"]

log = logging.getLogger(__name__)

#: The DELETE that ends the session on close() gives up after this many seconds.
DELETE_TIMEOUT = 5.0
#: How long close() waits for that DELETE before leaving it to finish in the background.
DELETE_WAIT = 1.0
#: How many SSE streams kept open after their replies are read at once (each holds a thread
#: and a connection); past that, a stream is closed once its reply is in, with a warning.
MAX_STREAMS_AFTER_REPLY = 32
#: Reconnection delay when a broken stream came without a ``retry`` field, in seconds.
DEFAULT_RECONNECT_DELAY = 1.0
#: The bounds put on a reconnection delay, a server's ``retry`` field included, in seconds.
MIN_RECONNECT_DELAY = 0.25
MAX_RECONNECT_DELAY = 60.0
#: A GET stream that ends sooner than this after opening counts as a quick one: reconnects
#: after quick ones in a row back off.
QUICK_STREAM = 1.0
#: Resumptions of one broken reply stream in a row that bring nothing new before giving up.
MAX_RESUME_ATTEMPTS = 5
#: Failed attempts in a row before the GET stream for server messages is given up.
MAX_LISTEN_FAILURES = 5

#: How long the handshake waits for the GET stream to open before going on without it.
LISTEN_OPEN_TIMEOUT = 5.0

#: How much of a body that is not a reply an error message quotes, in characters.
ERROR_EXCERPT = 120

_NO_ID: Any = object()
_NO_STREAM: Any = object()
_SKIPPED: Any = object()
_CLOSED: Any = object()


class _HandedOff(Exception):
    """The caller's thread gave the rest of its POST's stream to a stream thread."""


class StreamableHTTPTransport(ExchangeTransport):
    """Speak MCP over Streamable HTTP to ``url`` (the server's MCP endpoint).

    Every message is POSTed; the reply comes back as a JSON body (read by the caller's thread)
    or an SSE stream, drained by a pool thread so ``send`` returns once the headers are read. The session id is captured
    and echoed; after ``initialize`` every request carries ``MCP-Protocol-Version``, and a
    GET stream is opened for messages the server starts (unless ``listen=False``).

    - ``headers``: sent with every request.
    - ``token_provider``: an object with ``token()`` or a plain function returning a token.
      It is called for every request and every retry, possibly from several threads at
      once, and its token is sent as ``Authorization: Bearer <token>``, overriding a static
      Authorization header, or raw under ``auth_header`` when that is given.
    - ``auth``: a ``requests.auth.AuthBase`` applied to every request.
    - ``session``: a ``requests.Session`` to use (its adapters, proxies, TLS settings and
      cookies); the proxy environment is read once, when the transport is created.
    - ``max_retries``: retries of a request that provably never reached the server (HTTP 429
      and 503, connection refused, DNS failure, connect timeout), with capped exponential
      backoff honouring ``Retry-After``, within the call's timeout. Nothing is retried once
      the server may have acted on it.
    - ``max_message_bytes``: the largest reply body or SSE event accepted, counted after
      decompression (default 64 MiB). A larger one fails its call with ``ProtocolError`` (on
      the GET stream: the stream is dropped and reopened); nothing is buffered past it, so a
      server (or a small gzip bomb) cannot grow the client's memory without bound. Lower than
      stdio's default on purpose: an HTTP server is a remote party, and compression lets it
      send 400 MiB in 400 KB.
    - ``keepalive_idle``: a pooled connection idle longer than this (seconds, default 4) is
      not reused: servers close idle ones (Node at 5 s), and a request sent just as that
      happens fails with no reply. One that still does is sent again on a new connection only
      if it changes nothing (lists, reads, ping, completion, and ``tools/call`` of a tool
      annotated ``readOnlyHint`` or ``idempotentHint``); anything else fails with a
      ``TransportError`` saying it may have run. See docs/reliability.md.

    Every HTTP exchange can be ended from another thread in any phase (``_exchange``):
    ``close()`` fails the calls in flight with ``ConnectionClosed``, a ``CancelToken`` ends
    its call (and closes the request's stream, which is the cancellation for stateless and
    2026-07-28 servers), and the call's timeout holds for the whole reply, however slowly a
    server trickles it. With a user-supplied ``session`` (whose adapters cannot register
    their sockets) POSTs expecting a reply run on pool threads so the caller is released
    all the same, and an exchange is aborted only once its headers arrived.

    A 404 on a request carrying the session id means the server ended the session: the
    transport replays the ``initialize`` it carried, once, and re-sends the request. A session
    taken up with ``resume_session`` (``connect(url, resume=state)``) raises ``SessionLost``
    instead, unless the client chose ``on_session_lost="reinitialize"``.

    - ``keep_session``: ``close()`` leaves the session to the server (no DELETE), so that it
      can be resumed later (``Client.session_state``). A resumed session is always left so:
      it belongs to whoever started it. Redirects
    are followed only within the same origin. Thread safety: ``send`` may be called from many
    threads at once. Credentials never appear in reprs, logs or exception messages.
    """

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        token_provider: TokenSource | None = None,
        auth_header: str | None = None,
        auth: requests.auth.AuthBase | None = None,
        session: requests.Session | None = None,
        max_retries: int = 0,
        connect_timeout: float = _requester.CONNECT_TIMEOUT,
        listen: bool = True,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        keepalive_idle: float = KEEPALIVE_MAX_IDLE,
        keep_session: bool = False,
    ) -> None:
        if max_message_bytes < 1:
            raise ValueError("max_message_bytes must be positive")
        self.max_message_bytes = max_message_bytes
        self._requester = Requester(
            url,
            headers,
            token_provider=token_provider,
            auth_header=auth_header,
            auth=auth,
            session=session,
            max_retries=max_retries,
            connect_timeout=connect_timeout,
            keepalive_idle=keepalive_idle,
        )
        self.url = self._requester.url
        self._about = _requester.about("http", self.url, self._requester)
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        #: Wakes the caller of a reply straight from the thread that read it (the engine's).
        self._take_reply: Callable[[dict[str, Any]], bool] | None = None
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._renew_lock = threading.Lock()
        self._exchanges = Exchanges("mcpclient-http-deadlines")
        self._drains = ThreadPool("mcpclient-http-stream")
        self._after_reply = threading.BoundedSemaphore(MAX_STREAMS_AFTER_REPLY)
        self._listen = listen
        self._listening = False
        self._renewals = itertools.count(1)
        self._session_id: str | None = None
        self.protocol_version: str | None = None
        self._init_message: dict[str, Any] | None = None
        self.keep_session = keep_session
        self._resumed: str | None = None  # the id of a session taken up by resume_session
        #: The HTTP status the ``initialize`` POST was answered with (None before it was sent):
        #: ``connect()`` falls back to the HTTP+SSE transport on the statuses the spec names.
        self.initialize_status: int | None = None
        # The modern era (2026-07-28): no session, no GET stream, and closing a request's
        # stream is how it is cancelled. Told by set_protocol.
        self._modern = False
        self._listen_after_send = False

    @property
    def about(self) -> About:
        """The URL (without user info, and a digest of its query) as its ``server_key``; the
        host and port, and the session id while there is one, as its peer; every credential it
        sends; what its auth object declares (``ExtensionSource``)."""
        return self._about

    @property
    def session_id(self) -> str | None:
        """The MCP session id while there is one (legacy era), as the server gave it."""
        return self._session_id

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        if value != self._session_id:
            self._session_id = value
            self._about = attrs.evolve(self._about, peer=attrs.evolve(self._about.peer, session_id=value))

    def set_protocol(self, era: str, version: str) -> None:
        """Legacy: send ``MCP-Protocol-Version: version`` from now on, and open the GET stream
        once the next message (the session's ``notifications/initialized``) went out, before
        that send returns, so nothing the server sends right after the handshake finds no
        stream to go to. Modern: no session; each request's headers come with it
        (``SendOptions.headers``: the header mirroring plug-in sets them)."""
        self._modern = era == MODERN
        if self._modern:
            self.session_id = None
            self.protocol_version = None
            return
        self.protocol_version = version
        self._listen_after_send = True

    def resume_session(
        self, session_id: str, version: str, replay_initialize: dict[str, Any] | None, *, timeout: float | None
    ) -> None:
        """Send ``session_id`` and ``version`` from now on, with no handshake (see ``Transport``).

        The GET stream opens before this returns (unless ``listen=False``): a server that no
        longer knows the session says so there, and ``SessionLost`` is raised at once (or,
        given ``replay_initialize``, a new session is started). A server with no GET stream is
        found out by the first request.
        """
        if self._modern:
            raise ValueError("the 2026-07-28 era has no sessions to resume")
        if replay_initialize is not None:
            self._init_message = {"jsonrpc": "2.0", "id": "mcpclient-resume", "method": "initialize",
                                  "params": replay_initialize}
        self.session_id, self.protocol_version, self._resumed = session_id, version, session_id
        self._start_listening(None if timeout is None else time.monotonic() + timeout)

    def __repr__(self) -> str:
        state = "closed" if self._closed.is_set() else ("session" if self.session_id else "no session")
        return f"<StreamableHTTPTransport {_requester.safe_url(self.url)!r} {state}>"

    # -- sending ----------------------------------------------------------------------------

    def send(self, message: dict[str, Any], *, timeout: float | None = None, options: SendOptions = PLAIN) -> None:
        """POST ``message`` with ``options.headers`` (over the transport's own); a request
        that is ``options.resendable`` is sent once more on a new connection when a kept-alive
        one broke before any reply."""
        if self._closed.is_set():
            raise ConnectionClosed("the transport is closed")
        deadline = None if timeout is None else time.monotonic() + timeout
        method = message.get("method")
        request_id = message["id"] if method is not None and "id" in message else _NO_ID
        if method == "notifications/cancelled":
            # Closing the request's stream is the cancellation in the 2026-07-28 era and for
            # stateless servers; a legacy server is told as well.
            params = message.get("params")
            self.abandon(params.get("requestId") if isinstance(params, dict) else None)
            if self._modern:
                return
        if method == "initialize":
            # Kept to replay if the server loses the session; a new handshake, a new session.
            self._init_message = message
            self.session_id = None
            self.protocol_version = None
        body = encode_message(message)
        what = f"{method or 'reply'!r}"
        exchange = self._exchanges.open(what, deadline, None if request_id is _NO_ID else request_id)
        if request_id is not _NO_ID and not self._requester.own_session:
            # A user session's sockets cannot be reached before the headers: the caller must
            # not be the thread waiting for them (it waits on its reply slot instead).
            self._drains.submit(self._exchange_in_background, exchange, body, message, options, request_id, deadline)
            return
        self._exchange(exchange, body, message, options, request_id, deadline)
        if self._listen_after_send:
            self._listen_after_send = False
            self._start_listening(deadline)

    def deliver_replies_to(self, route: Callable[[dict[str, Any]], bool]) -> None:
        """A POST's reply, when nothing of its response came before it, goes to ``route``."""
        self._take_reply = route

    def abandon(self, request_id: Any) -> None:
        """End the exchange of ``request_id`` in flight, whatever its phase (never blocks)."""
        try:
            self._exchanges.abort(request_id, CANCELLED)
        except TypeError:  # an unhashable id names no exchange
            pass

    def renew(self, request_id: Any, deadline: float | None) -> None:
        """Progress kept ``request_id`` alive: its exchange's deadline moves too (never blocks)."""
        try:
            self._exchanges.renew(request_id, deadline)
        except TypeError:  # an unhashable id names no exchange
            pass

    def _exchange(
        self, exchange: Exchange, body: bytes, message: dict[str, Any], options: SendOptions, request_id: Any,
        deadline: float | None, caller: bool = True,
    ) -> None:
        """POST one message and take its reply; a streamed reply keeps the exchange open.

        ``caller``: this is the caller's thread, which the reply must free as soon as it came.
        A lost session (``_session_lost``) proves the server did not process the message: a
        new session is started, once, and the message re-sent. A second lost-session answer
        in a row is the error it is, not a loop.
        """
        streamed = False
        try:
            session_id = self.session_id
            response = self._requester.request(
                "POST", exchange=exchange, body=body, headers=self._headers(options.headers), deadline=deadline,
                resend_safe=options.resendable,
            )
            error_body = None
            if response.status_code in (400, 404) and session_id is not None and message.get("method") != "initialize":
                error_body = _requester.read_error_body(response)
                if _session_lost(response.status_code, error_body):
                    response, error_body = self._again(session_id, response.status_code, body, options, deadline, exchange)
            streamed = self._take(response, message, request_id, deadline, exchange, error_body, caller)
        finally:
            if not streamed:
                self._exchanges.end(exchange)

    def _exchange_in_background(
        self, exchange: Exchange, body: bytes, message: dict[str, Any], options: SendOptions, request_id: Any,
        deadline: float | None,
    ) -> None:
        try:
            self._exchange(exchange, body, message, options, request_id, deadline, caller=False)
        except MCPError as exc:
            self._fail(request_id, exc)

    def _headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The MCP headers of one request: ``extra``, the message's own (``SendOptions.headers``),
        under the session id and the version the session negotiated (legacy era; the modern
        one has neither), which are the transport's to say."""
        headers = dict(extra) if extra else {}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _again(
        self, lost: str, status: int, body: bytes, options: SendOptions, deadline: float | None, exchange: Exchange
    ) -> tuple[requests.Response, bytes | None]:
        """The POST again in a new session, once the server lost session ``lost``; the response,
        and its error body if one had to be read already."""
        self._renew_session(lost, deadline, exchange, status)
        response = self._requester.request(
            "POST", exchange=exchange, body=body, headers=self._headers(options.headers), deadline=deadline,
            resend_safe=options.resendable,
        )
        if response.status_code not in (400, 404):
            return response, None
        error_body = _requester.read_error_body(response)
        if _session_lost(response.status_code, error_body):
            raise self._requester.status_error(response, "the server lost the new session at once as well", error_body)
        return response, error_body

    def _take(
        self, response: requests.Response, message: dict[str, Any], request_id: Any, deadline: float | None,
        exchange: Exchange, error_body: bytes | None = None, caller: bool = True,
    ) -> bool:
        """Route the response to one POST: queue its messages, read its stream.

        A request's stream is read on this thread up to the reply (``_drain``); a
        notification's goes to a stream thread. True when the stream took the exchange (its
        reader ends it).
        """
        status = response.status_code
        what = f"{message.get('method') or 'reply'!r}"
        if message.get("method") == "initialize":
            self.initialize_status = status
        if status >= 300:
            self._take_error(response, request_id, what, error_body)
            return False
        session_id = response.headers.get("mcp-session-id")
        if session_id and not self._modern:  # 2026-07-28 has no sessions: ignore one offered
            self.session_id = session_id
        if is_event_stream(response):
            if request_id is _NO_ID:  # a stream for a notification: read it all the same
                if not self._drains.submit(self._drain, response, None, deadline, exchange):
                    abort_response(response)
                    return False
            else:
                self._drain(response, request_id, deadline, exchange, hand_off=caller)
            return True
        if is_json(response):
            data = read_body(
                response, f"the reply to {what}", self.max_message_bytes, exchange, self._requester.redactor
            )
            if not data.strip() and request_id is _NO_ID:
                return False
            try:
                reply = self._requester.decode(data)
            except ProtocolError as exc:
                raise ProtocolError(f"the server's reply to {what} is not valid JSON: {exc}") from None
            if request_id is _NO_ID:
                self._deliver(reply)
            elif not _answers(reply, request_id):
                # This POST's only reply does not answer it: nothing else will.
                log.warning("the server's JSON reply to %s (id %r) does not answer it: %s",
                            what, request_id, self._requester.redactor.excerpt(reply))
                raise ProtocolError(f"the server's JSON reply to {what} does not carry its id {request_id!r}")
            else:
                self._deliver(reply, request_id, first=True)
            return False
        if request_id is _NO_ID:
            response.close()
            return False
        self._take_mislabelled(response, request_id, what, exchange)
        return False

    def _take_mislabelled(self, response: requests.Response, request_id: Any, what: str, exchange: Exchange) -> None:
        """A request's response labelled neither JSON nor an SSE stream (``text/plain``, no
        Content-Type, a 202): taken as the reply, with a warning, when its body is the
        JSON-RPC reply to the request (be liberal in what you accept); otherwise a
        ``ProtocolError`` that says what came instead."""
        status = response.status_code
        label = response.headers.get("content-type")
        kind = f"content type {label!r}" if label else "no Content-Type"
        if status == 202:
            response.close()
            body = b""
        else:
            body = read_body(response, f"the reply to {what}", self.max_message_bytes, exchange)
        if not body.strip():
            raise ProtocolError(f"the server accepted {what} but sent no reply (HTTP {status})")
        try:
            reply: Any = self._requester.decode(body)
        except ProtocolError:
            reply = None
        if reply is not None and _answers(reply, request_id):
            log.warning("the server labelled its JSON reply to %s with %s, not application/json; "
                        "reading it all the same", what, self._requester.redact(kind))
            self._deliver(reply, request_id, first=True)
            return
        excerpt = self._requester.redact(body[:ERROR_EXCERPT].decode("utf-8", "replace"))[:ERROR_EXCERPT]
        raise ProtocolError(self._requester.redact(
            f"the server answered {what} with {kind} (HTTP {status}) and a body that is not the "
            f"JSON-RPC reply to it; expected application/json or text/event-stream: {excerpt!r}"
        ))

    def _take_error(self, response: requests.Response, request_id: Any, what: str, body: bytes | None) -> None:
        if body is None:
            body = _requester.read_error_body(response)
        if request_id is not _NO_ID and body.lstrip().startswith(b"{"):
            try:
                reply = self._requester.decode(body)
            except ProtocolError:
                reply = None
            if isinstance(reply, dict) and isinstance(reply.get("error"), dict) and "result" not in reply:
                # A JSON-RPC error carried by an HTTP error status: it answers this request.
                self._inbox.put({"jsonrpc": "2.0", "id": request_id, "error": self._requester.redactor.redact_value(reply["error"])})
                return
        raise self._requester.status_error(response, f"sending {what} failed", body)

    def _deliver(self, message: Any, request_id: Any = _NO_ID, first: bool = False) -> bool:
        """Queue one decoded message (or batch); True if it holds the reply to ``request_id``.

        Error texts are redacted first (``Requester.deliverable``); results are not. The reply
        to ``request_id`` that is the ``first`` message of its response wakes its caller from
        this thread (``deliver_replies_to``) rather than through the queue.
        """
        message = self._requester.deliverable(message)
        if (
            first
            and type(message) is dict
            and self._take_reply is not None
            and request_id is not _NO_ID
            and message.get("id") == request_id
            and "method" not in message
            and self._take_reply(message)
        ):
            return True
        items = message if isinstance(message, list) else (message,)
        is_reply = False
        for item in items:
            if not isinstance(item, dict) or "method" in item:
                continue
            if request_id is not _NO_ID and item.get("id") == request_id:
                is_reply = True
        self._inbox.put(message)
        return is_reply

    def _fail(self, request_id: Any, error: MCPError) -> None:
        """Fail one call: the engine raises ``error`` to the caller waiting for ``request_id``."""
        self._inbox.put(Failure(request_id, error))

    # -- SSE streams ------------------------------------------------------------------------

    def _pump(
        self, response: requests.Response, parser: SSEParser, request_id: Any, exchange: Exchange,
        direct: bool = False, hand_off: bool = False,
    ) -> tuple[bool, int]:
        """Queue every message of one SSE response; return (reply seen, messages seen).

        ``direct``: a reply that is the stream's first message may wake its caller from this
        thread (not for a resumed stream: what the broken one carried may still be queued).
        ``hand_off``: once the reply came, the rest of the stream goes to a stream thread
        unless its end is here already (``_HandedOff`` is raised then).
        """
        got_reply = False
        count = 0
        kept = False  # holds a place among the streams read after their replies
        events = read_events(response, parser, "reading an SSE stream", exchange, self._requester.redactor)
        try:
            for event in events:
                if not event.data or event.event != "message":
                    continue  # a priming event (id only), or an event type MCP does not use
                message = self._decode_event(event.data)
                if message is _SKIPPED:
                    continue
                count += 1
                delivered = self._deliver(message, request_id, first=direct and count == 1)
                if delivered and not got_reply and request_id is not None:  # (None: no reply is awaited)
                    got_reply = True
                    if hand_off and stream_end_ready(response):
                        continue  # all that is left is its end, here already: read it on this thread
                    # The server keeps the stream open after the reply: it is read until it
                    # ends or the client closes, no longer bounded by the call's deadline.
                    if not self._after_reply.acquire(False):
                        log.warning(
                            "%d SSE streams are already being read after their replies; closing the stream "
                            "of request %r (what the server sends on it after the reply is lost)",
                            MAX_STREAMS_AFTER_REPLY, request_id,
                        )
                        abort_response(response)
                        return got_reply, count
                    self._exchanges.extend(exchange, None)
                    if not hand_off:
                        kept = True  # this stream thread reads on
                    elif self._drains.submit(self._read_rest, response, events, request_id, exchange):
                        raise _HandedOff  # the caller goes, a stream thread reads the rest
                    else:
                        self._after_reply.release()
                        abort_response(response)  # closing: nothing will read it
                        return got_reply, count
        except (MCPError, _HandedOff):
            raise
        except BaseException:  # Ctrl-C in the caller reading its stream: nothing else will read it
            abort_response(response)
            raise
        finally:
            if kept:
                self._after_reply.release()
        return got_reply, count

    def _decode_event(self, data: bytes) -> Any:
        """One SSE event's message, or ``_SKIPPED`` (logged) when it is not JSON: like a bad
        line over stdio, one bad event does not fail the stream or the call it carries."""
        try:
            return self._requester.decode(data)
        except ProtocolError as exc:
            log.warning("skipping a malformed message on an SSE stream: %s", exc)
            return _SKIPPED

    def _read_rest(
        self, response: requests.Response, events: Iterator[SSEEvent], request_id: Any, exchange: Exchange,
    ) -> None:
        """On a stream thread: what a POST's stream carries after its reply, then its end
        (however long the server keeps it open; ``close()`` ends it). Holds a place among the
        ``MAX_STREAMS_AFTER_REPLY`` until then."""
        try:
            for event in events:
                if event.data and event.event == "message":
                    message = self._decode_event(event.data)
                    if message is not _SKIPPED:
                        self._deliver(message, request_id)
        except MCPError as exc:  # the caller has its reply: log what was lost, end the stream
            abort_response(response)
            if exchange.reason is None and not self._closed.is_set():
                log.info("the SSE stream of request %r broke after its reply: %s", request_id, exc)
        except BaseException:  # anything else (a bug): the stream must not stay open and checked out
            abort_response(response)
            raise
        finally:
            self._after_reply.release()
            self._exchanges.end(exchange)

    def _drain(
        self, response: requests.Response, request_id: Any, deadline: float | None, exchange: Exchange,
        hand_off: bool = False,
    ) -> None:
        """Read the SSE reply to one POST; resume it with GET + Last-Event-ID if it breaks.

        ``hand_off``: this is the caller's thread; it reads up to the reply, and the stream's
        end if that is here already, else the rest goes to a stream thread (which then ends
        the exchange).
        """
        handed_off = False
        try:
            self._drain_streams(response, request_id, deadline, exchange, hand_off)
        except _HandedOff:
            handed_off = True
        finally:
            if not handed_off:
                self._exchanges.end(exchange)

    def _drain_streams(
        self, response: requests.Response, request_id: Any, deadline: float | None, exchange: Exchange,
        hand_off: bool = False,
    ) -> None:
        parser = SSEParser(self.max_message_bytes)
        got_reply = request_id is None
        failures = 0
        direct = True  # the POST's own stream, not a resumed one
        while True:
            first, direct = direct, False
            try:
                got, count = self._pump(response, parser, request_id, exchange, first, hand_off)
                got_reply = got_reply or got
                broken: MCPError | None = None
            except ProtocolError as exc:
                abort_response(response)
                if not got_reply:
                    self._fail(request_id, ProtocolError(f"the server sent a bad SSE event: {exc}"))
                return
            except MCPError as exc:
                abort_response(response)
                broken, count = exc, 0
            if got_reply or self._closed.is_set() or exchange.reason is not None:
                return  # done, or ended by close, cancel or the deadline: the caller knows
            failures = 0 if count else failures + 1
            if (
                self._modern  # 2026-07-28 streams cannot be resumed
                or parser.last_id is None
                or failures > MAX_RESUME_ATTEMPTS
                or isinstance(broken, TimeoutError)
            ):
                why = f": {broken}" if broken else ""
                self._fail(request_id, StreamInterrupted(f"the server's SSE stream ended before the reply{why}"))
                return
            delay = _reconnect_delay(parser.retry, DEFAULT_RECONNECT_DELAY, failures)
            if exchange.wait(delay):  # close, cancel and the deadline wake it
                return
            log.debug("resuming the SSE stream of request %r after event %r", request_id, parser.last_id)
            try:
                response = self._resume(parser.last_id, deadline, exchange)
            except MCPError as exc:
                if exchange.reason is None and not self._closed.is_set():
                    self._fail(request_id, StreamInterrupted(f"the SSE stream broke and could not be resumed: {exc}"))
                return

    def _resume(self, last_id: str, deadline: float | None, exchange: Exchange) -> requests.Response:
        headers = self._headers()
        headers["Last-Event-ID"] = last_id
        response = self._requester.request("GET", headers=headers, deadline=deadline, exchange=exchange)
        if response.status_code >= 300:
            raise self._requester.status_error(response, "resuming the stream failed")
        if not is_event_stream(response):
            response.close()
            raise ProtocolError("the server did not answer the resumption GET with an SSE stream")
        return response

    # -- the GET stream for messages the server starts ---------------------------------------

    def _start_listening(self, deadline: float | None) -> None:
        """Open the GET stream before the handshake returns, so nothing the server sends
        right after it (a request made during the first tool call) finds no stream to go to."""
        with self._lock:
            if not self._listen or self._listening or self._closed.is_set():
                return
            self._listening = True
        wait = LISTEN_OPEN_TIMEOUT if deadline is None else min(LISTEN_OPEN_TIMEOUT, max(0.1, deadline - time.monotonic()))
        try:
            first = self._open_listen_stream(None, time.monotonic() + wait)
        except SessionLost:
            with self._lock:
                self._listening = False
            raise
        except MCPError as exc:
            log.debug("the GET stream did not open at once (%s); retrying in the background", exc)
            first = None
        else:
            if first is _NO_STREAM:
                return
        self._drains.submit(self._listen_loop, first)

    def _open_listen_stream(self, last_id: str | None, deadline: float | None) -> Any:
        """One GET: the open SSE response, ``_NO_STREAM`` if the server has none, or an error."""
        headers = self._headers()
        session_id = self.session_id
        if last_id is not None:
            headers["Last-Event-ID"] = last_id
        # The headers must come within the deadline; the stream itself may then idle forever.
        read_timeout: Any = "deadline" if deadline is not None else None
        exchange = self._exchanges.open("the GET stream", deadline)
        try:
            response = self._requester.request(
                "GET", headers=headers, deadline=deadline, read_timeout=read_timeout, exchange=exchange
            )
            return self._listen_response(response, session_id, exchange)
        except BaseException:
            self._exchanges.end(exchange)
            raise

    def _listen_response(self, response: requests.Response, session_id: str | None, exchange: Exchange) -> Any:
        status = response.status_code
        if status in (400, 404) and session_id is not None:
            if _session_lost(status, _requester.read_error_body(response)):
                self._renew_session(session_id, None, exchange, status)
                raise TransportError("the session was renewed; the GET stream reopens")
        if status >= 300 or not is_event_stream(response):
            response.close()
            if status == 405:
                log.debug("the server offers no GET stream (HTTP 405)")
            else:
                log.info("the server refused the GET stream (HTTP %d); its messages will "
                         "arrive only with replies", status)
            self._exchanges.end(exchange)
            return _NO_STREAM
        set_read_timeout(response, None)
        self._exchanges.extend(exchange, None)  # the stream may idle for as long as it likes
        return response, exchange

    def _listen_loop(self, opened: tuple[requests.Response, Exchange] | None) -> None:
        last_id: str | None = None
        failures = quick = 0
        while not self._closed.is_set():
            delay = None
            if opened is None:
                try:
                    opened = self._open_listen_stream(last_id, None)
                except MCPError as exc:
                    failures += 1
                    if not self._closed.is_set():
                        log.debug("the GET stream failed to open: %s", exc)
                if opened is _NO_STREAM:
                    return
            if opened is not None:
                response, exchange = opened
                parser = SSEParser(self.max_message_bytes)
                count = 0
                opened_at = time.monotonic()
                try:
                    _, count = self._pump(response, parser, None, exchange)
                except Exception as exc:  # (an MCPError, or a bug: either way the stream reopens)
                    abort_response(response)
                    if self._closed.is_set():
                        return  # a normal close: nothing broke
                    if isinstance(exc, MCPError):
                        level = logging.WARNING if isinstance(exc, ProtocolError) else logging.DEBUG
                        log.log(level, "the GET stream broke (it reopens): %s", exc)
                    else:
                        log.exception("reading the GET stream failed (it reopens)")
                finally:
                    self._exchanges.end(exchange)
                last_id = parser.last_id or last_id
                failures = 0 if count else failures + 1
                quick = quick + 1 if time.monotonic() - opened_at < QUICK_STREAM else 0
                if parser.retry is not None:
                    delay = _reconnect_delay(parser.retry, DEFAULT_RECONNECT_DELAY, max(failures, quick - 1))
                opened = None
            if failures > MAX_LISTEN_FAILURES:
                log.warning("the GET stream failed %d times in a row; no longer listening", failures)
                return
            if self._closed.wait(delay if delay is not None else _requester.backoff(failures)):
                return

    # -- sessions ---------------------------------------------------------------------------

    def _renew_session(self, expired: str, deadline: float | None, exchange: Exchange, status: int = 404) -> None:
        """Start a new session by replaying the handshake this transport carried, once."""
        with self._renew_lock:
            if self.session_id != expired:
                return  # another thread renewed it already
            init = self._init_message
            if init is None and expired == self._resumed:
                raise SessionLost(
                    f"the server no longer knows the resumed session (HTTP {status}; the request never ran): "
                    "connect without resume= to start a new one, or pass on_session_lost='reinitialize'",
                    status_code=status, session_id=expired, url=_requester.safe_url(self.url),
                )
            if init is None:
                raise HTTPStatusError(
                    "the server ended the session (HTTP 404) and no initialize was sent through "
                    "this transport to start a new one", status_code=404, url=_requester.safe_url(self.url)
                )
            log.warning("the server lost the MCP session at %s; starting a new session", _requester.safe_url(self.url))
            self.session_id = None
            replay = dict(init, id=f"mcpclient-renew-{next(self._renewals)}")
            response = self._requester.request("POST", body=encode_message(replay), deadline=deadline, exchange=exchange)
            if response.status_code >= 300:
                raise self._requester.status_error(response, "starting a new session failed")
            reply = self._read_one_reply(response, replay["id"], exchange)
            result = reply.get("result")
            if not isinstance(result, dict):
                raise TransportError(
                    f"starting a new session failed: the server answered {self._requester.redactor.excerpt(reply)}"
                )
            # The version stays the one the session negotiated: the same initialize asks for it.
            session_id = response.headers.get("mcp-session-id")
            self.session_id = session_id or None
            response = self._requester.request(
                "POST",
                body=encode_message({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                headers=self._headers(),
                deadline=deadline,
                exchange=exchange,
            )
            response.close()
            log.info("new MCP session started at %s", _requester.safe_url(self.url))

    def _read_one_reply(self, response: requests.Response, request_id: str, exchange: Exchange) -> dict[str, Any]:
        what = "the new session's initialize reply"
        if is_json(response):
            message = self._requester.decode(
                read_body(response, what, self.max_message_bytes, exchange, self._requester.redactor)
            )
            if isinstance(message, dict):
                return message
        elif is_event_stream(response):
            parser = SSEParser(self.max_message_bytes)
            try:
                for event in read_events(response, parser, f"reading {what}", exchange, self._requester.redactor):
                    if event.data:
                        message = self._decode_event(event.data)
                        if message is _SKIPPED:
                            continue
                        if isinstance(message, dict) and message.get("id") == request_id:
                            return message
                        self._inbox.put(self._requester.deliverable(message))
            finally:
                response.close()
        else:
            response.close()
        raise TransportError("starting a new session failed: no reply to the replayed initialize")

    # -- receiving and closing --------------------------------------------------------------

    def receive(self) -> Any:
        item = self._inbox.get()
        if item is _CLOSED:
            self._inbox.put(_CLOSED)  # for any later call
            raise ConnectionClosed("the transport is closed")
        return item

    def close(self) -> None:
        """End every exchange in flight (their callers get ``ConnectionClosed``), unblock
        ``receive``, and DELETE the session: best effort, so ``close()`` waits for it at most
        ``DELETE_WAIT`` (1 s), and a DELETE still unanswered then goes on in the background
        until ``DELETE_TIMEOUT`` (5 s), however the server (or a token provider) stalls."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
        self._exchanges.abort_all(CLOSED)
        self._drains.shutdown()
        self._inbox.put(_CLOSED)
        if self.session_id is None or self.keep_session or self.session_id == self._resumed:
            self._release()
            return
        ended = threading.Event()
        try:
            threading.Thread(
                target=self._end_session, args=(ended,), name="mcpclient-http-close", daemon=True
            ).start()
        except RuntimeError:  # no thread to be had: end it here, within DELETE_TIMEOUT
            self._end_session(ended)
        if not ended.wait(DELETE_WAIT):
            log.debug("the server did not answer the DELETE ending the session within %.1fs; "
                      "it goes on in the background", DELETE_WAIT)

    def _end_session(self, ended: threading.Event) -> None:
        """DELETE the session (within ``DELETE_TIMEOUT``), then release the transport."""
        deadline = time.monotonic() + DELETE_TIMEOUT
        exchange = self._exchanges.open("ending the session", deadline, after_close=True)
        try:
            response = self._requester.request(
                "DELETE", headers=self._headers(), deadline=deadline, retry=False, exchange=exchange
            )
            response.close()
        except MCPError as exc:
            log.debug("could not end the session: %s", exc)
        finally:
            self._exchanges.end(exchange)
            self._release()
            ended.set()

    def _release(self) -> None:
        self._exchanges.stop()
        self._requester.close()


def _answers(reply: Any, request_id: Any) -> bool:
    """Whether a decoded JSON body (a message or a batch) holds the reply to ``request_id``.

    Ids compare as the engine routes them: a server may stringify ours, or send 5.0 for 5.
    """
    items = reply if isinstance(reply, list) else (reply,)
    for item in items:
        if isinstance(item, dict) and "method" not in item:
            got = item.get("id")
            if got == request_id or (isinstance(got, (str, float)) and str(got).removesuffix(".0") == str(request_id)):
                return True
    return False


def _session_lost(status: int, body: bytes) -> bool:
    """Whether an answer to a request that carried a session id says the session is gone.

    The spec's form is HTTP 404. Servers built like the TypeScript SDK's examples (server-
    everything among them) answer 400 with JSON-RPC -32000 "Bad Request: No valid session ID
    provided" instead. Either way the request was refused before it ran.
    """
    if status == 404:
        return True
    if status != 400 or not body.lstrip().startswith(b"{"):
        return False
    try:
        reply = decode_message(body)
    except ProtocolError:
        return False
    error = reply.get("error") if isinstance(reply, dict) else None
    if not isinstance(error, dict) or error.get("code") != -32000:
        return False
    text = str(error.get("message", "")).lower()
    return "session" in text and ("valid" in text or "not found" in text or "unknown" in text)


def _reconnect_delay(retry_ms: int | None, default: float, in_a_row: int) -> float:
    """Seconds to wait before reopening a stream: the server's ``retry`` (milliseconds; None:
    ``default`` seconds) kept within ``MIN_RECONNECT_DELAY`` and ``MAX_RECONNECT_DELAY``, and
    doubled for each of ``in_a_row`` reconnects in a row that brought nothing or whose stream
    ended at once, up to the maximum.

    A server's ``retry`` may be any number of digits: ``retry: 0`` must not make a reconnect
    loop, nor ``retry: 100000000000000000`` a wait no timer can take.
    """
    seconds = default if retry_ms is None else min(retry_ms, MAX_RECONNECT_DELAY * 1000) / 1000
    seconds = max(seconds, MIN_RECONNECT_DELAY) * float(2 ** min(max(in_a_row, 0), 16))
    return min(seconds, MAX_RECONNECT_DELAY)
