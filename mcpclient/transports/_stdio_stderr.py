"""A stdio server's stderr lines on their way to the user: forwarded in order, the last kept
for error messages, and held while the era probe is out.

A server on the official Python SDK 1.x answers the probe (``server/discover``, a method it does
not know) with an error reply, and logs, before that reply, the whole pydantic validation error
of its request union: about a hundred lines (two hundred and fifty through ``rich``) on the
user's stderr, for a request the user never made. So the client holds the lines while the probe
is out (``hold``); when the probe is refused it releases them without that complaint
(``release(refused="server/discover")``, the complaint logged at debug level), and with
everything else unchanged and in order. A line that reaches the tail (``tail``) while held is
seen there at once: a server that dies during the probe is reported with all it said.
"""

from __future__ import annotations

import collections
import logging
import threading
from typing import IO, Callable, Union

from .._core.text import clean

__all__ = ["COMPLAINTS", "MAX_HELD_LINES", "StderrLines", "StderrSink", "complaint"]

log = logging.getLogger(__name__)

StderrSink = Union[IO[str], logging.Logger, Callable[[str], None], None]

#: How many lines are held at most: past that the held lines go on and holding stops (a server
#: that writes that much while probed is not complaining about the probe).
MAX_HELD_LINES = 2000
#: How a refusal's complaint begins: the official Python SDK 1.x's words (``BaseSession``'s
#: receive loop logs them, with the validation error, before its error reply).
COMPLAINTS = ("Failed to validate request",)


def complaint(lines: list[str], method: str) -> int | None:
    """Where the complaint about a refused ``method`` begins in ``lines`` (the stderr lines
    written while it was out), or None when there is none.

    The complaint is the lines from the last one that begins a refusal (``COMPLAINTS``) to the
    end: the server writes it just before its refusal, so nothing of its own comes after it
    while the refusal is on its way. It counts only if it names ``method``, which the
    validation error shows as the input it refused."""
    for start in range(len(lines) - 1, -1, -1):
        if any(words in lines[start] for words in COMPLAINTS):
            return start if any(method in line for line in lines[start:]) else None
    return None


class StderrLines:
    """The server's stderr, line by line: forwarded to ``sink`` (see ``StdioTransport``), the
    last ``keep`` kept for error messages. Thread-safe: the stderr thread adds, the caller's
    thread holds and releases; the sink is written under the lock, so lines stay in order."""

    def __init__(self, sink: StderrSink, keep: int) -> None:
        self._sink = sink
        self._tail: collections.deque[str] = collections.deque(maxlen=keep)
        self._keep = keep
        self._lock = threading.Lock()
        self._held: list[str] | None = None  # None: not holding
        #: Whether the stderr thread is between a read and the forwarding of its lines.
        self.busy = False

    def add(self, raw: bytes) -> None:
        """One line as read (without its newline): forwarded, or held."""
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        with self._lock:
            if self._held is None:
                self._forward(line)
                return
            self._held.append(line)
            if len(self._held) > MAX_HELD_LINES:
                self._let_go(self._held)

    def tail(self, count: int | None = None) -> list[str]:
        """The last lines (``count`` of them, else all kept), the held ones included."""
        with self._lock:
            lines = list(self._tail) + (self._held or [])
        return lines[-(count or self._keep):]

    def hold(self) -> None:
        """Hold the lines that come from now on, until ``release``."""
        with self._lock:
            if self._held is None:
                self._held = []

    def release(self, refused: str | None = None) -> int:
        """Forward the held lines and stop holding; with ``refused`` (a method the server
        refused), without its complaint (see ``complaint``), which is logged at debug level.
        Returns how many lines were dropped. Does nothing when not holding."""
        with self._lock:
            held = self._held
            if held is None:
                return 0
            start = complaint(held, refused) if refused is not None else None
            dropped = held[start:] if start is not None else []
            if dropped:
                log.debug("the server's complaint about the refused %s (%d lines, left out of its stderr): %s",
                          refused, len(dropped), clean(" | ".join(dropped), limit=4000))
            self._let_go(held[:start] if start is not None else held)
            return len(dropped)

    def _let_go(self, lines: list[str]) -> None:
        self._held = None
        for line in lines:
            self._forward(line)

    def _forward(self, line: str) -> None:
        self._tail.append(line)
        sink = self._sink
        if sink is None:
            return
        try:
            if isinstance(sink, logging.Logger):
                sink.info("%s", line)
            elif callable(sink):
                sink(line)
            else:
                sink.write(line + "\n")
        except Exception:  # a broken sink must not stop the draining
            self._sink = None
