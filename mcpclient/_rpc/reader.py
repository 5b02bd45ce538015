"""The engine's reader thread: receive, route, repeat; and over stdio, lending the pipe out.

``read_loop`` runs on the one daemon reader thread of an engine. It holds the engine only
through a weak reference, and only while it routes one message, so a Client dropped without
``close()`` stays collectable. Over a ``PipeTransport`` it reads only while it holds
the engine's read token, and after a reply that left no call waiting it lends the token to the
callers (``_lend``): the next call reads its own reply (``Engine._read_inline``). What it needs
of the engine is ``Reading``; routing is the engine's (``Engine._take_in``).
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Callable, Protocol

from .._core.exceptions import ConnectionClosed, MCPError, ProtocolError
from ..transports.base import Transport

__all__ = ["INLINE_LEND", "Reading", "connection_error", "read_loop", "reply_taker"]

log = logging.getLogger(__name__)

#: How long the reader thread leaves the pipe to callers, once none has read for that long.
#: A message that comes while no call is waiting (a notification) waits up to twice this.
INLINE_LEND = 0.004


class Reading(Protocol):
    """What the reader thread asks of its engine."""

    _pending: dict[Any, Any]
    _closed: bool
    _dead: MCPError | None
    _inline_reads: int

    def _take_in(self, message: Any) -> None: ...

    def _take_reply(self, message: dict[str, Any]) -> bool: ...

    def _end(self, error: MCPError) -> None: ...


def read_loop(
    ref: weakref.ref[Any], transport: Transport, inline: bool, token: threading.Lock, wake: threading.Event,
) -> None:
    """The reader thread: receive, route, repeat, until the connection ends.

    It holds the engine only while routing one message; while it waits in ``receive()`` the
    engine (and the Client above it) may be collected, whose finalizer closes the transport
    and so ends this loop. Over a transport that reads inline it reads only while it holds
    ``token``, and lends it out after a reply that left no call waiting (see ``_lend``).
    """
    token.acquire()
    try:
        while True:
            try:
                message = transport.receive()
            except ProtocolError as exc:
                log.warning("skipping a malformed message from the server: %s", exc)
                continue
            engine: Reading | None = ref()
            if engine is None:
                return
            engine._take_in(message)
            # A reply that left no call waiting: its caller's next call may read its own.
            lend = inline and not engine._pending and type(message) is dict and "method" not in message
            del engine
            if lend and not _lend(ref, token, wake):
                return
    except BaseException as exc:  # whatever ended the reading ends the connection
        engine = ref()
        if engine is not None:
            engine._end(connection_error(exc, engine._closed))


def _lend(ref: weakref.ref[Any], token: threading.Lock, wake: threading.Event) -> bool:
    """Leave the pipe to callers (``Engine._read_inline``) until one hands it back or none has
    read for a whole ``INLINE_LEND``; True with ``token`` held again, False when the engine is
    gone or dead (then the thread ends).

    No lost wake-up: a caller adds its slot to the table before it tries the token, and looks
    at the table after it releases the token, so whenever a call waits with no one reading,
    either the caller set ``wake`` or this loop sees the slot.
    """
    token.release()
    seen = -1
    while True:
        wake.wait(INLINE_LEND)
        wake.clear()
        engine = ref()
        if engine is None or engine._dead is not None:
            return False
        waiting, reads = bool(engine._pending), engine._inline_reads
        del engine
        if (waiting or reads == seen) and token.acquire(False):
            return True
        seen = reads


def connection_error(exc: BaseException, closed: bool) -> MCPError:
    """What ends every pending call when ``receive`` raised ``exc``."""
    if isinstance(exc, ConnectionClosed):
        return exc
    if isinstance(exc, MCPError):
        return ConnectionClosed(str(exc))
    if not closed:
        log.error("the transport failed", exc_info=exc)
    return ConnectionClosed(f"the transport failed: {exc!r}")


def reply_taker(ref: weakref.ref[Any]) -> Callable[[dict[str, Any]], bool]:
    """``Engine._take_reply`` through a weak reference (see ``ExchangeTransport.deliver_replies_to``)."""

    def take(message: dict[str, Any]) -> bool:
        engine = ref()
        return engine is not None and engine._take_reply(message)

    return take
