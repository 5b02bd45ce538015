"""The deprecated HTTP+SSE transport of MCP 2024-11-05: one GET stream in, POSTs out."""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Mapping
from urllib.parse import urljoin

import requests

from .._core import origin as _origin
from .._core.exceptions import ConnectionClosed, MCPError, ProtocolError, TransportError
from . import _requester
from ._exchange import CANCELLED, CLOSED, Exchange, Exchanges
from ._requester import Requester, TokenSource
from ._sse_parser import SSEParser
from ._streams import MAX_MESSAGE_BYTES, abort_response, is_event_stream, read_events
from .base import PLAIN, About, ExchangeTransport, SendOptions, encode_message

__all__ = ["SSETransport"]

log = logging.getLogger(__name__)

#: How long the server gets to send the ``endpoint`` event after the stream opens, in seconds.
ENDPOINT_TIMEOUT = 10.0

_CLOSED: Any = object()


class SSETransport(ExchangeTransport):
    """Speak MCP over the 2024-11-05 HTTP+SSE transport, for servers that predate Streamable HTTP.

    Opens the GET event stream at ``url`` at once and waits (``endpoint_timeout`` seconds) for
    the ``endpoint`` event naming where to POST messages; replies arrive on the stream. The
    options mean what they mean for ``StreamableHTTPTransport``. The endpoint must be on the
    same origin as ``url``.

    Raises ``TransportError`` (``HTTPStatusError`` for an HTTP error, ``RequestTimeout`` when
    no endpoint comes) if the stream cannot be opened. When the server ends the stream the
    connection is over: ``receive`` raises ``ConnectionClosed``. So does an event larger than
    ``max_message_bytes`` (decoded; default 64 MiB, as for ``StreamableHTTPTransport``): the
    stream is dropped rather than buffered. ``close()`` ends the stream and every POST in
    flight at once, whatever the server does (see ``_exchange``).
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
        endpoint_timeout: float = ENDPOINT_TIMEOUT,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
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
        )
        self.url = self._requester.url
        self._about = _requester.about("http+sse", self.url, self._requester)
        self.endpoint: str | None = None
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = threading.Event()
        self._endpoint_ready = threading.Event()
        self._failure: MCPError | None = None
        self._exchanges = Exchanges("mcpclient-sse-deadlines")
        deadline = time.monotonic() + endpoint_timeout
        self._stream_exchange = exchange = self._exchanges.open("opening the SSE stream", deadline)
        try:
            response = self._requester.request("GET", deadline=deadline, read_timeout=None, exchange=exchange)
            if response.status_code >= 300:
                raise self._requester.status_error(response, "opening the SSE stream failed")
            if not is_event_stream(response):
                response.close()
                raise ProtocolError(self._requester.redact(
                    f"{_requester.safe_url(self.url)} did not answer with an SSE stream "
                    f"(content type {response.headers.get('content-type')!r})"
                ))
        except BaseException:
            self._exchanges.end(exchange)
            self._exchanges.stop()
            self._requester.close()
            raise
        self._exchanges.extend(exchange, None)  # the stream may idle once open
        self._stream = response
        self._reader = threading.Thread(target=self._read, name="mcpclient-sse", daemon=True)
        self._reader.start()
        if not self._endpoint_ready.wait(max(0.0, deadline - time.monotonic())) or self.endpoint is None:
            failure = self._failure
            self.close()
            if failure is not None:
                raise failure
            raise TransportError(f"the server sent no endpoint event within {endpoint_timeout}s")

    @property
    def about(self) -> About:
        """As the Streamable HTTP transport's (``_requester.about``), without sessions."""
        return self._about

    def __repr__(self) -> str:
        state = "closed" if self._closed.is_set() else "open"
        return f"<SSETransport {_requester.safe_url(self.url)!r} {state}>"

    def _read(self) -> None:
        parser = SSEParser(self.max_message_bytes)
        reason = "the server closed the SSE stream"
        try:
            events = read_events(
                self._stream, parser, "reading the SSE stream", self._stream_exchange, self._requester.redactor
            )
            for event in events:
                if event.event == "endpoint":
                    self._set_endpoint(event.data.decode("utf-8", "replace").strip())
                elif event.event == "message" and event.data:
                    try:
                        self._inbox.put(self._requester.deliverable(self._requester.decode(event.data)))
                    except ProtocolError as exc:
                        log.warning("skipping a malformed message from the server: %s", exc)
        except MCPError as exc:
            reason = f"the SSE stream broke: {exc}"
            if isinstance(exc, ProtocolError) and not self._closed.is_set():
                log.warning("dropping the SSE stream: %s", exc)
            self._failure = self._failure or exc
        except Exception as exc:  # a bug: the stream (the connection) ends, and every call with it
            log.exception("reading the SSE stream failed")
            reason = f"reading the SSE stream failed: {type(exc).__name__}"
        finally:
            abort_response(self._stream)  # this thread was its reader: closing cannot block
            self._exchanges.end(self._stream_exchange)
            self._endpoint_ready.set()
            self._inbox.put(_CLOSED if self._closed.is_set() else ConnectionClosed(reason))

    def _set_endpoint(self, data: str) -> None:
        try:
            endpoint = urljoin(self.url, data)
        except ValueError:  # a bracketed host urllib cannot read: no URL at all
            endpoint = ""
        if not _origin.same_origin(endpoint, self._requester.origin):
            self._failure = TransportError(self._requester.redact(
                "the server named a message endpoint on another origin, or one the URL parsers read "
                f"differently ({_requester.shown_url(endpoint)}); refused"
            ))
            abort_response(self._stream)
            return
        self.endpoint = endpoint
        self._endpoint_ready.set()

    def send(self, message: dict[str, Any], *, timeout: float | None = None, options: SendOptions = PLAIN) -> None:
        """POST ``message`` to the endpoint with ``options.headers``; one that is
        ``options.resendable`` is sent once more on a new connection when a kept-alive one
        broke before any reply."""
        if self._closed.is_set():
            raise ConnectionClosed("the transport is closed")
        deadline = None if timeout is None else time.monotonic() + timeout
        what = repr(message.get("method") or "reply")
        if message.get("method") == "notifications/cancelled":
            params = message.get("params")
            self.abandon(params.get("requestId") if isinstance(params, dict) else None)
        key = message.get("id") if "method" in message else None
        exchange = self._exchanges.open(what, deadline, key)
        try:
            self._post(message, options, what, deadline, exchange)
        finally:
            self._exchanges.end(exchange)

    def _post(
        self, message: dict[str, Any], options: SendOptions, what: str, deadline: float | None, exchange: Exchange
    ) -> None:
        response = self._requester.request(
            "POST", body=encode_message(message), headers=options.headers, url=self.endpoint, deadline=deadline,
            exchange=exchange, resend_safe=options.resendable,
        )
        if response.status_code < 300:
            response.close()  # 202 Accepted; the reply comes on the stream
            return
        body = _requester.read_error_body(response)
        if "id" in message and "method" in message and body.lstrip().startswith(b"{"):
            try:
                reply = self._requester.decode(body)
            except ProtocolError:
                reply = None
            if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
                self._inbox.put({"jsonrpc": "2.0", "id": message["id"], "error": self._requester.redactor.redact_value(reply["error"])})
                return
        raise self._requester.status_error(response, f"sending {what} failed", body)

    def receive(self) -> Any:
        item = self._inbox.get()
        if item is _CLOSED or isinstance(item, ConnectionClosed):
            self._inbox.put(item)  # for any later call
            raise ConnectionClosed("the transport is closed") if item is _CLOSED else item
        return item

    def abandon(self, request_id: Any) -> None:
        """End the POST of ``request_id`` if it is still in flight (never blocks)."""
        try:
            self._exchanges.abort(request_id, CANCELLED)
        except TypeError:  # an unhashable id names no exchange
            pass

    def close(self) -> None:
        """End the stream and every POST in flight, unblock ``receive``; idempotent.

        The stream is ended by shutting its socket down (``_exchange``), never by closing the
        response from this thread: that would wait for the reader thread's buffer lock, for
        ever on a silent close-delimited stream.
        """
        if self._closed.is_set():
            return
        self._closed.set()
        self._exchanges.abort_all(CLOSED)
        self._exchanges.stop()
        self._inbox.put(_CLOSED)
        self._requester.close()
