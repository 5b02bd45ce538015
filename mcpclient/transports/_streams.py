"""Reading the streams of both HTTP transports: SSE bodies, content types, aborts."""

from __future__ import annotations

import logging
import socket
import ssl
from typing import Any, Iterator

import requests

from .._core.exceptions import MCPError, ProtocolError
from .._core.redact import Redactor
from ._exchange import Exchange
from ._sockets import ExchangeSocket
from ._requester import translate
from ._sse_parser import SSEEvent, SSEParser

__all__ = [
    "abort_response",
    "is_event_stream",
    "is_json",
    "read_body",
    "read_events",
    "set_read_timeout",
    "stream_end_ready",
]

log = logging.getLogger(__name__)

#: Bytes asked for per read of a streamed body (SSE); a read returns what has arrived.
STREAM_READ_SIZE = 64 * 1024
#: Decoded bytes asked for per read of a JSON body.
BODY_READ_SIZE = 256 * 1024
#: The default cap on one reply body or SSE event over HTTP (``max_message_bytes``), decoded.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


def too_large(what: str, limit: int) -> ProtocolError:
    return ProtocolError(
        f"{what} is larger than max_message_bytes ({limit} bytes, after decompression); "
        "pass a larger max_message_bytes to the transport if such messages are expected"
    )


def _socket(response: requests.Response) -> Any:
    """The socket a streamed response is read from, or None when urllib3 does not say."""
    connection = getattr(response.raw, "connection", None) or getattr(response.raw, "_connection", None)
    return getattr(connection, "sock", None)


def abort_response(response: requests.Response) -> None:
    """Close a response another thread may be blocked reading: shut its socket down first.

    ``close()`` alone does not wake a ``recv`` blocked in another thread on Linux.
    """
    sock = _socket(response)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    try:
        response.close()
    except Exception:  # closing must never fail the closer
        pass


def set_read_timeout(response: requests.Response, seconds: float | None) -> None:
    """Change the socket timeout of a response being streamed, when the socket is reachable."""
    sock = _socket(response)
    if sock is not None:
        try:
            sock.settimeout(seconds)
        except OSError:
            pass


def stream_end_ready(response: requests.Response) -> bool:
    """True when all a streamed body has left is its end, received already: reading it cannot block.

    Never blocks. It looks at the HTTP layers under requests (urllib3's response,
    ``http.client``'s chunk state and buffered reader, the socket) without consuming anything:
    whatever it cannot tell for sure (a chunk in progress, a close-delimited body, bytes that
    are not the end or only part of it, an end still on its way, other internals) is False,
    and the caller reads the rest on a thread that may block.
    """
    raw = response.raw
    if getattr(raw, "_decoded_buffer", None):  # decoded bytes not handed out yet
        return False
    body = getattr(raw, "_fp", None)  # the http.client response
    reader = getattr(body, "fp", False)
    if body is None or reader is None:
        return True  # http.client closed it: the body is complete
    if reader is False or getattr(body, "chunked", False) is not True:
        return False  # unknown internals, or a body whose end is the server closing
    left = getattr(body, "chunk_left", 1)
    end = b"0\r\n\r\n" if left is None else b"\r\n0\r\n\r\n" if left == 0 else None
    sock = _socket(response)
    if end is None or sock is None:
        return False
    try:
        return _peek(reader, sock, len(end)).startswith(end)
    except (OSError, ValueError):  # closed or aborted meanwhile: the reader will say so
        return False


def _peek(reader: Any, sock: socket.socket, size: int) -> bytes:
    """Up to ``size`` bytes that ``reader`` would return next, from its buffer and then the
    socket's, without consuming or blocking. Over TLS only the buffer is looked at when it is
    not empty (a TLS socket cannot peek). An ``ExchangeSocket`` is told to receive without
    waiting (``peeking``); any other socket is switched to non-blocking and back."""
    flagged = sock if isinstance(sock, ExchangeSocket) else None
    timeout: float | None = None
    if flagged is not None:
        flagged.peeking = True
    else:
        timeout = sock.gettimeout()
        sock.settimeout(0.0)
    try:
        seen = bytes(reader.peek(size))  # reads from the socket only when its buffer is empty
        if 0 < len(seen) < size and not isinstance(sock, ssl.SSLSocket):
            try:
                seen += sock.recv(size - len(seen), socket.MSG_PEEK)
            except BlockingIOError:
                pass
        return seen
    except ssl.SSLWantReadError:  # TLS: no whole record yet
        return b""
    finally:
        if flagged is not None:
            flagged.peeking = False
        else:
            sock.settimeout(timeout)


def is_event_stream(response: requests.Response) -> bool:
    return _media_type(response) == "text/event-stream"


def is_json(response: requests.Response) -> bool:
    return _media_type(response) == "application/json"


def _media_type(response: requests.Response) -> str:
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


def read_events(
    response: requests.Response, parser: SSEParser, what: str, exchange: Exchange | None = None,
    redactor: Redactor | None = None,
) -> Iterator[SSEEvent]:
    """The events of an SSE response as they arrive; a broken stream raises an MCPError
    (redacted with ``redactor``, see ``translate``).

    Reads with ``read1`` so each event is handed over as soon as its bytes arrive, and reads
    to the end so the connection goes back to the pool for the next request. An aborted
    ``exchange`` raises its own error (closed, cancelled, timed out), not the socket's.
    The parser caps lines and events (``max_message_bytes``); urllib3 inflates a compressed
    body a bounded piece per read.
    """
    raw = response.raw
    while True:
        failure: MCPError | None = None
        try:
            chunk = raw.read1(STREAM_READ_SIZE, decode_content=True)
        except Exception as exc:
            if exchange is not None:
                exchange.check()
            failure = translate(exc, what, redactor)
        if failure is not None:
            raise failure  # out of the except block: see translate
        if not chunk:
            break
        yield from parser.feed(chunk)
    if exchange is not None:
        exchange.check()
        exchange.done()  # before the connection can serve another exchange
    try:
        raw.release_conn()
    except Exception:  # the stream is over either way
        pass


def read_body(
    response: requests.Response, what: str, limit: int, exchange: Exchange | None = None,
    redactor: Redactor | None = None,
) -> bytes:
    """The whole decoded body, at most ``limit`` bytes: past that, abort and raise ProtocolError.

    A body with a declared length and no compression is refused up front if too long, else
    read in one go (the common case, one call); any other is read in pieces with
    ``decode_content`` so a compressed body is counted as it inflates (never ``.content``,
    which would inflate all of it first). The connection goes back to the pool once the body
    is read; on any error the response is aborted (and the error redacted with ``redactor``).
    """
    raw = response.raw
    parts: list[bytes] = []
    failure: MCPError | None = None
    size = 0
    length = raw.length_remaining
    plain = length is not None and response.headers.get("content-encoding", "identity").lower() == "identity"
    try:
        if plain:  # the usual case: one read, bounded by the declared length
            if length is not None and length > limit:
                raise too_large(what, limit)
            parts.append(raw.read(decode_content=True))
        while not plain:
            chunk = raw.read(BODY_READ_SIZE, decode_content=True)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise too_large(what, limit)
            parts.append(chunk)
    except ProtocolError:
        abort_response(response)
        raise
    except Exception as exc:
        abort_response(response)
        if exchange is not None:
            exchange.check()
        failure = translate(exc, what, redactor)
    if failure is not None:
        raise failure  # out of the except block: see translate
    if exchange is not None:
        exchange.check()
        exchange.done()
    try:
        raw.release_conn()
    except Exception:  # the body is read either way
        pass
    return parts[0] if len(parts) == 1 else b"".join(parts)
