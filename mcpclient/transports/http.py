"""The Streamable HTTP transport (MCP 2025-03-26 and later): one POST per message."""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from typing import Any, Mapping

import requests

from .. import types as t
from .._eras.headers import ToolHeaders, request_headers
from .._eras.modern import MODERN_VERSIONS, PROTOCOL_VERSION_KEY
from .._exceptions import ConnectionClosed, HTTPStatusError, MCPError, ProtocolError, StreamInterrupted, TransportError
from . import _http
from ._http import Requester, TokenProvider
from ._streams import ThreadPool, abort_response, is_event_stream, is_json, read_events, set_read_timeout
from ._sse import SSEParser
from .base import Transport, encode_message

__all__ = ["StreamableHTTPTransport"]

log = logging.getLogger(__name__)

#: The DELETE that ends the session on close() gives up after this many seconds.
DELETE_TIMEOUT = 5.0
#: After the reply arrived on an SSE stream, how long the server gets to end the stream.
AFTER_REPLY_GRACE = 5.0
#: Reconnection delay when a broken stream came without a ``retry`` field, in seconds.
DEFAULT_RECONNECT_DELAY = 1.0
#: Resumptions of one broken reply stream in a row that bring nothing new before giving up.
MAX_RESUME_ATTEMPTS = 5
#: Failed attempts in a row before the GET stream for server messages is given up.
MAX_LISTEN_FAILURES = 5

#: How long the handshake waits for the GET stream to open before going on without it.
LISTEN_OPEN_TIMEOUT = 5.0

_NO_ID: Any = object()
_NO_STREAM: Any = object()
_CLOSED: Any = object()


class StreamableHTTPTransport(Transport):
    """Speak MCP over Streamable HTTP to ``url`` (the server's MCP endpoint).

    Every message is POSTed; the reply comes back as a JSON body or an SSE stream, drained by
    a pool thread so ``send`` returns once the headers are read. The session id is captured
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

    A 404 on a request carrying the session id means the server ended the session: the
    transport replays the ``initialize`` it carried, once, and re-sends the request. Redirects
    are followed only within the same origin. Thread safety: ``send`` may be called from many
    threads at once. Credentials never appear in reprs, logs or exception messages.
    """

    self_serializing = True

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        token_provider: TokenProvider | None = None,
        auth_header: str | None = None,
        auth: requests.auth.AuthBase | None = None,
        session: requests.Session | None = None,
        max_retries: int = 0,
        connect_timeout: float = _http.CONNECT_TIMEOUT,
        listen: bool = True,
    ) -> None:
        self._http = Requester(
            url,
            headers,
            token_provider=token_provider,
            auth_header=auth_header,
            auth=auth,
            session=session,
            max_retries=max_retries,
            connect_timeout=connect_timeout,
        )
        self.url = self._http.url
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._renew_lock = threading.Lock()
        self._live: set[requests.Response] = set()
        self._drains = ThreadPool("mcpclient-http-stream")
        self._listen = listen
        self._listening = False
        self._renewals = itertools.count(1)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._init_message: dict[str, Any] | None = None
        self._initialized_message: dict[str, Any] | None = None
        self._init_status: int | None = None
        # The modern era (2026-07-28): no session, no GET stream, headers mirror the body,
        # and closing a request's stream is how it is cancelled.
        self._modern = False
        self._tool_headers = ToolHeaders()
        self._streams: dict[Any, requests.Response] = {}

    @property
    def server_key(self) -> tuple[str, str]:
        """Identifies the server (for the client's per-server protocol-era cache)."""
        return ("http", _http.safe_url(self.url))

    def __repr__(self) -> str:
        state = "closed" if self._closed.is_set() else ("session" if self.session_id else "no session")
        return f"<StreamableHTTPTransport {_http.safe_url(self.url)!r} {state}>"

    # -- sending ----------------------------------------------------------------------------

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        if self._closed.is_set():
            raise ConnectionClosed("the transport is closed")
        deadline = None if timeout is None else time.monotonic() + timeout
        method = message.get("method")
        request_id = message["id"] if method is not None and "id" in message else _NO_ID
        version = _meta_version(message)
        if version in MODERN_VERSIONS:
            self._modern = True
        elif self._modern and method == "notifications/cancelled":
            self._cancel_stream(message.get("params") or {})
            return
        if method == "initialize":
            self._modern = False  # the server turned out to be legacy (the probe failed)
            self._init_message = message
            self.session_id = None  # a new handshake starts a new session
            self.protocol_version = None
        body = encode_message(message)
        response = self._post(body, message, deadline, version)
        self._take(response, message, request_id, deadline)
        if method == "notifications/initialized":
            self._initialized_message = message
            if not self._modern:
                self._start_listening(deadline)

    def note_tools(self, tools: list[t.ToolDef]) -> list[t.ToolDef]:
        """Learn which tool arguments travel as ``Mcp-Param-*`` headers (modern era).

        Tools whose ``x-mcp-header`` annotations break the rules are left out, with a warning.
        """
        return self._tool_headers.learn(tools) if self._modern else tools

    def _cancel_stream(self, params: dict[str, Any]) -> None:
        with self._lock:
            response = self._streams.pop(params.get("requestId"), None)
        if response is not None:
            abort_response(response)  # closing the stream is the cancellation

    def _headers(self, version: str | None = None, message: dict[str, Any] | None = None) -> dict[str, str]:
        if version in MODERN_VERSIONS and message is not None:
            return request_headers(message, self._tool_headers)
        headers = {}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        version = version or self.protocol_version
        if version is not None:
            headers["MCP-Protocol-Version"] = version
        return headers

    def _post(
        self, body: bytes, message: dict[str, Any], deadline: float | None, version: str | None
    ) -> requests.Response:
        session_id = self.session_id
        response = self._http.request(
            "POST", body=body, headers=self._headers(version, message), deadline=deadline, cancelled=self._closed
        )
        if response.status_code == 404 and session_id is not None and message.get("method") != "initialize":
            # The server ended the session; the 404 proves it did not process this message.
            response.close()
            self._renew_session(session_id, deadline)
            response = self._http.request(
                "POST", body=body, headers=self._headers(version), deadline=deadline, cancelled=self._closed
            )
        return response

    def _take(self, response: requests.Response, message: dict[str, Any], request_id: Any, deadline: float | None) -> None:
        """Route the response to one POST: queue its messages, hand a stream to a drainer."""
        status = response.status_code
        what = f"{message.get('method') or 'reply'!r}"
        if message.get("method") == "initialize":
            self._init_status = status
        if status >= 300:
            self._take_error(response, request_id, what)
            return
        session_id = response.headers.get("mcp-session-id")
        if session_id and not self._modern:  # 2026-07-28 has no sessions: ignore one offered
            self.session_id = session_id
        if is_event_stream(response):
            if request_id is _NO_ID:  # a stream for a notification: read it all the same
                request_id = None
            self._track(response)
            if self._modern and request_id is not None:
                with self._lock:
                    self._streams[request_id] = response
            self._drains.submit(self._drain, response, request_id, deadline)
            return
        if is_json(response):
            try:
                data = response.raw.read(decode_content=True)
                response.raw.release_conn()
            except Exception as exc:
                response.close()
                raise _http.translate(exc, f"reading the reply to {what}") from exc
            if not data.strip() and request_id is _NO_ID:
                return
            try:
                reply = self._http.decode(data)
            except ProtocolError as exc:
                raise ProtocolError(f"the server's reply to {what} is not valid JSON: {exc}") from None
            self._deliver(reply, request_id)
            return
        response.close()
        if request_id is not _NO_ID:
            if status == 202 or not response.headers.get("content-type"):
                raise ProtocolError(f"the server accepted {what} but sent no reply (HTTP {status})")
            raise ProtocolError(self._http.redact(
                f"the server answered {what} with content type "
                f"{response.headers.get('content-type')!r}; expected JSON or an SSE stream"
            ))

    def _take_error(self, response: requests.Response, request_id: Any, what: str) -> None:
        body = _http.read_error_body(response)
        if request_id is not _NO_ID and body.lstrip().startswith(b"{"):
            try:
                reply = self._http.decode(body)
            except ProtocolError:
                reply = None
            if isinstance(reply, dict) and isinstance(reply.get("error"), dict) and "result" not in reply:
                # A JSON-RPC error carried by an HTTP error status: it answers this request.
                self._inbox.put({"jsonrpc": "2.0", "id": request_id, "error": self._http.redactor.redact_value(reply["error"])})
                return
        raise self._http.status_error(response, f"sending {what} failed", body)

    def _deliver(self, message: Any, request_id: Any = _NO_ID) -> bool:
        """Queue one decoded message (or batch); True if it holds the reply to ``request_id``.

        Error texts are redacted first (``Requester.deliverable``); results are not.
        """
        message = self._http.deliverable(message)
        items = message if isinstance(message, list) else (message,)
        is_reply = False
        init = self._init_message
        for item in items:
            if not isinstance(item, dict) or "method" in item:
                continue
            if init is not None and item.get("id") == init.get("id") and isinstance(item.get("result"), dict):
                version = item["result"].get("protocolVersion")
                if isinstance(version, str):
                    self.protocol_version = version
            if request_id is not _NO_ID and item.get("id") == request_id:
                is_reply = True
        self._inbox.put(message)
        return is_reply

    def _fail(self, request_id: Any, error: MCPError) -> None:
        """Fail one call: the engine raises ``error`` to the caller waiting for ``request_id``."""
        self._inbox.put({"jsonrpc": "2.0", "id": request_id, "error": error})

    # -- SSE streams ------------------------------------------------------------------------

    def _track(self, response: requests.Response) -> None:
        with self._lock:
            self._live.add(response)
        if self._closed.is_set():
            abort_response(response)

    def _untrack(self, response: requests.Response) -> None:
        with self._lock:
            self._live.discard(response)

    def _pump(self, response: requests.Response, parser: SSEParser, request_id: Any) -> tuple[bool, int]:
        """Queue every message of one SSE response; return (reply seen, messages seen)."""
        got_reply = False
        count = 0
        try:
            for event in read_events(response, parser, "reading an SSE stream"):
                if not event.data or event.event != "message":
                    continue  # a priming event (id only), or an event type MCP does not use
                message = self._http.decode(event.data)
                count += 1
                if self._deliver(message, request_id):
                    got_reply = True
                    set_read_timeout(response, AFTER_REPLY_GRACE)
        finally:
            self._untrack(response)
            with self._lock:
                if self._streams.get(request_id) is response:
                    del self._streams[request_id]
        return got_reply, count

    def _drain(self, response: requests.Response, request_id: Any, deadline: float | None) -> None:
        """Read the SSE reply to one POST; resume it with GET + Last-Event-ID if it breaks."""
        parser = SSEParser()
        got_reply = request_id is None
        failures = 0
        while True:
            try:
                got, count = self._pump(response, parser, request_id)
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
            if got_reply or self._closed.is_set():
                return
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
            delay = parser.retry / 1000 if parser.retry is not None else DEFAULT_RECONNECT_DELAY
            if self._closed.wait(delay):
                return
            log.debug("resuming the SSE stream of request %r after event %r", request_id, parser.last_id)
            try:
                response = self._resume(parser.last_id, deadline)
            except MCPError as exc:
                self._fail(request_id, StreamInterrupted(f"the SSE stream broke and could not be resumed: {exc}"))
                return

    def _resume(self, last_id: str, deadline: float | None) -> requests.Response:
        headers = self._headers()
        headers["Last-Event-ID"] = last_id
        response = self._http.request("GET", headers=headers, deadline=deadline, cancelled=self._closed)
        if response.status_code >= 300:
            raise self._http.status_error(response, "resuming the stream failed")
        if not is_event_stream(response):
            response.close()
            raise ProtocolError("the server did not answer the resumption GET with an SSE stream")
        self._track(response)
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
        response = self._http.request(
            "GET", headers=headers, deadline=deadline, read_timeout=read_timeout, cancelled=self._closed
        )
        status = response.status_code
        if status == 404 and session_id is not None:
            response.close()
            self._renew_session(session_id, None)
            raise TransportError("the session was renewed; the GET stream reopens")
        if status >= 300 or not is_event_stream(response):
            response.close()
            if status == 405:
                log.debug("the server offers no GET stream (HTTP 405)")
            else:
                log.info("the server refused the GET stream (HTTP %d); its messages will "
                         "arrive only with replies", status)
            return _NO_STREAM
        set_read_timeout(response, None)
        self._track(response)
        return response

    def _listen_loop(self, response: requests.Response | None) -> None:
        last_id: str | None = None
        failures = 0
        while not self._closed.is_set():
            delay = None
            if response is None:
                try:
                    response = self._open_listen_stream(last_id, None)
                except MCPError as exc:
                    failures += 1
                    log.debug("the GET stream failed to open: %s", exc)
                if response is _NO_STREAM:
                    return
            if response is not None:
                parser = SSEParser()
                try:
                    _, count = self._pump(response, parser, None)
                except MCPError as exc:
                    abort_response(response)
                    count = 0
                    log.debug("the GET stream broke: %s", exc)
                last_id = parser.last_id or last_id
                failures = 0 if count else failures + 1
                if parser.retry is not None:
                    delay = parser.retry / 1000
                response = None
            if failures > MAX_LISTEN_FAILURES:
                log.warning("the GET stream failed %d times in a row; no longer listening", failures)
                return
            if self._closed.wait(delay if delay is not None else _http.backoff(failures)):
                return

    # -- sessions ---------------------------------------------------------------------------

    def _renew_session(self, expired: str, deadline: float | None) -> None:
        """Start a new session by replaying the handshake this transport carried, once."""
        with self._renew_lock:
            if self.session_id != expired:
                return  # another thread renewed it already
            init = self._init_message
            if init is None:
                raise HTTPStatusError(
                    "the server ended the session (HTTP 404) and no initialize was sent through "
                    "this transport to start a new one", status_code=404, url=_http.safe_url(self.url)
                )
            log.warning("the server ended the MCP session at %s; starting a new session", _http.safe_url(self.url))
            self.session_id = None
            replay = dict(init, id=f"mcpclient-renew-{next(self._renewals)}")
            response = self._http.request(
                "POST", body=encode_message(replay), deadline=deadline, cancelled=self._closed
            )
            if response.status_code >= 300:
                raise self._http.status_error(response, "starting a new session failed")
            reply = self._read_one_reply(response, replay["id"])
            result = reply.get("result")
            if not isinstance(result, dict):
                raise TransportError(
                    f"starting a new session failed: the server answered {self._http.redact(repr(reply))[:200]}"
                )
            if isinstance(result.get("protocolVersion"), str):
                self.protocol_version = result["protocolVersion"]
            session_id = response.headers.get("mcp-session-id")
            self.session_id = session_id or None
            if self._initialized_message is not None:
                response = self._http.request(
                    "POST",
                    body=encode_message(self._initialized_message),
                    headers=self._headers(),
                    deadline=deadline,
                    cancelled=self._closed,
                )
                response.close()
            log.info("new MCP session started at %s", _http.safe_url(self.url))

    def _read_one_reply(self, response: requests.Response, request_id: str) -> dict[str, Any]:
        if is_json(response):
            try:
                message = self._http.decode(response.raw.read(decode_content=True))
            except Exception as exc:
                raise _http.translate(exc, "reading the new session's initialize reply") from exc
            finally:
                response.close()
            if isinstance(message, dict):
                return message
        elif is_event_stream(response):
            parser = SSEParser()
            try:
                for event in read_events(response, parser, "reading the new session's initialize reply"):
                    if event.data:
                        message = self._http.decode(event.data)
                        if isinstance(message, dict) and message.get("id") == request_id:
                            return message
                        self._inbox.put(self._http.deliverable(message))
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
        """Abort streams being read, unblock ``receive``, and DELETE the session (5 s at most)."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
            live, self._live = list(self._live), set()
        for response in live:
            abort_response(response)
        self._drains.shutdown()
        self._inbox.put(_CLOSED)
        if self.session_id is not None:
            try:
                response = self._http.request(
                    "DELETE",
                    headers=self._headers(),
                    deadline=time.monotonic() + DELETE_TIMEOUT,
                    retry=False,
                )
                response.close()
            except MCPError as exc:
                log.debug("could not end the session: %s", exc)
        self._http.close()


def _meta_version(message: dict[str, Any]) -> str | None:
    """The protocol version a modern-era request names in its ``_meta``, if any."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None
