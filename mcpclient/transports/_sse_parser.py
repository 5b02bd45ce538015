"""An incremental Server-Sent Events parser (the WHATWG event-stream rules), bytes in, events out.

A multi-megabyte ``data:`` line is assembled from as many chunks as it takes, in linear time,
up to ``max_bytes`` per line and per event (the transports' ``max_message_bytes``): past that
``feed`` raises ``ProtocolError`` and the stream must be dropped, so a server cannot grow our
memory without bound. Data stays bytes (``json.loads`` takes bytes), so nothing is decoded twice.
"""

from __future__ import annotations

from .._core.exceptions import ProtocolError

__all__ = ["SSEEvent", "SSEParser"]

_BOM = b"\xef\xbb\xbf"


class SSEEvent:
    """One dispatched event: ``event`` type (default "message"), ``data`` bytes, ``id``."""

    __slots__ = ("data", "event", "id")

    def __init__(self, event: str, data: bytes, id: str | None) -> None:
        self.event = event
        self.data = data
        self.id = id

    def __repr__(self) -> str:
        return f"<SSEEvent {self.event!r} id={self.id!r} {len(self.data)} bytes>"


class SSEParser:
    """Feed it chunks with ``feed``; it returns the events they complete.

    ``last_id`` is the stream's last event id (what ``Last-Event-ID`` should carry when
    reconnecting) and ``retry`` the server's reconnection delay in milliseconds, or None.
    An event with empty data (a "priming" event that only sets an id) is still returned, so
    the caller sees its id; callers skip it.
    """

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = max_bytes
        self._pending_size = 0
        self._data_size = 0
        self.last_id: str | None = None
        self.retry: int | None = None
        self._pending: list[bytes] = []
        self._started = False
        self._data: list[bytes] = []
        self._has_data = False
        self._event = b""
        self._id_buffer: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if not chunk:
            return []
        if not self._started:
            if not self._pending and len(chunk) < len(_BOM) and _BOM.startswith(chunk):
                self._pending.append(chunk)
                return []
            if self._pending:
                chunk, self._pending = b"".join(self._pending) + chunk, []
            self._started = True
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        if b"\n" not in chunk and b"\r" not in chunk:
            self._pending.append(chunk)  # part of a long line: join once, when it ends
            self._pending_size += len(chunk)
            if self.max_bytes is not None and self._pending_size + self._data_size > self.max_bytes:
                raise self._too_large()
            return []
        if self._pending:
            self._pending.append(chunk)
            chunk = b"".join(self._pending)
            self._pending = []
        if chunk.endswith(b"\r"):
            # Maybe the first half of a CRLF split across chunks: decide with the next chunk.
            self._pending.append(b"\r")
            chunk = chunk[:-1]
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        rest = lines.pop()
        self._pending_size = len(rest)
        if rest:
            if self._pending:  # a held-back CR follows this partial line
                self._pending.insert(0, rest)
            else:
                self._pending.append(rest)
        events: list[SSEEvent] = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: bytes) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == 0x3A:  # ":" comment (keep-alive)
            return None
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
            self._has_data = True
            if self.max_bytes is not None:
                self._data_size += len(value) + 1
                if self._data_size > self.max_bytes:
                    raise self._too_large()
        elif name == b"event":
            self._event = value
        elif name == b"id":
            if b"\x00" not in value:
                self._id_buffer = value.decode("utf-8", "replace")
        elif name == b"retry":
            if value.isdigit():  # bounded: int() refuses thousands of digits, and no wait needs more
                self.retry = int(value) if len(value) <= 15 else 10**15
        return None

    def _dispatch(self) -> SSEEvent | None:
        self.last_id = self._id_buffer
        event_type = self._event.decode("utf-8", "replace") or "message"
        self._event = b""
        if not self._has_data:
            return None
        data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
        self._data = []
        self._data_size = 0
        self._has_data = False
        return SSEEvent(event_type, data, self.last_id)


    def _too_large(self) -> ProtocolError:
        self._pending, self._data = [], []  # the stream is dropped: free what it sent
        return ProtocolError(
            f"an SSE event is larger than max_message_bytes ({self.max_bytes} bytes, after "
            "decompression); pass a larger max_message_bytes to the transport if such events "
            "are expected"
        )
