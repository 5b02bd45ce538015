"""The command line's prompts: a person at the terminal answers elicitation and sampling.

The questions are asked on a dispatch thread while the main thread waits for the tool call.
A Ctrl-C reaches the main thread only, so while a question is open the CLI's SIGINT handler
calls ``TerminalIO.interrupt`` instead: the question ends as "cancel" and the call goes on
(a Ctrl-C with no question open still interrupts the command). For that, reading polls
standard input with ``select`` rather than blocking in ``input()``, which nothing could wake;
where ``select`` takes sockets only (Windows), a thread reads the console into a queue that
the same loop polls instead.
Prompts go to standard error, so the result on standard output stays clean for a pipe.
"""

from __future__ import annotations

import os
import queue
import select
import signal
import sys
import threading
from types import FrameType
from typing import Any, TextIO

from ..prompting import Prompter

__all__ = ["CtrlC", "TerminalIO", "interactive", "terminal_prompter"]

#: How often a waiting read looks for an interrupt, in seconds.
POLL = 0.05


def interactive(no_input: bool, stdin: TextIO, err: TextIO) -> bool:
    """Whether to ask the person: not ``--no-input``, and both stdin and stderr are terminals.

    Without a terminal (a pipe, a cron job, CI) nobody could answer: elicitations are then
    declined and sampling is not offered, as when the CLI had no prompts.
    """
    return not no_input and _isatty(stdin) and _isatty(err)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a real stream
        return False


class TerminalIO:
    """Reads lines from a terminal's file descriptor, and can be interrupted from another thread."""

    def __init__(self, stdin: TextIO, err: TextIO, *, threaded: bool | None = None) -> None:
        self._fd = stdin.fileno()
        self._err = err
        self._interrupted = threading.Event()
        self._reading = threading.Event()
        self._rest = b""
        #: Where ``select`` cannot wait on a terminal (Windows): chunks a reader thread read.
        self._chunks: queue.SimpleQueue[bytes] | None = None
        if sys.platform == "win32" if threaded is None else threaded:
            self._chunks = queue.SimpleQueue()
            threading.Thread(target=self._pump, name="mcpclient-terminal", daemon=True).start()

    def _pump(self) -> None:
        """(Windows) Read the console for ever, into the queue ``read`` polls; b"" at its end.
        A daemon thread: it lives as long as the console, like the CLI that made it."""
        assert self._chunks is not None
        while True:
            try:
                chunk = os.read(self._fd, 4096)
            except OSError:
                chunk = b""
            self._chunks.put(chunk)
            if not chunk:
                return

    def _next_chunk(self) -> bytes | None:
        """What the terminal has within ``POLL`` seconds (b"" at its end), or None."""
        if self._chunks is not None:
            try:
                return self._chunks.get(timeout=POLL)
            except queue.Empty:
                return None
        ready, _, _ = select.select([self._fd], [], [], POLL)
        return os.read(self._fd, 4096) if ready else None

    @property
    def reading(self) -> bool:
        """Whether a question is waiting for the person now."""
        return self._reading.is_set()

    def interrupt(self) -> None:
        """End the open question as if the person pressed Ctrl-C in it."""
        self._interrupted.set()

    def write(self, text: str) -> None:
        self._err.write(text + "\n")
        self._err.flush()

    def read(self, prompt: str) -> str:
        """One line; ``EOFError`` at end of input (Ctrl-D), ``KeyboardInterrupt`` if interrupted."""
        self._err.write(prompt)
        self._err.flush()
        self._interrupted.clear()
        self._reading.set()
        try:
            while b"\n" not in self._rest:
                if self._interrupted.is_set():
                    raise KeyboardInterrupt
                chunk = self._next_chunk()
                if chunk is None:
                    continue
                if not chunk:  # Ctrl-D at the start of a line
                    line, self._rest = self._rest, b""
                    if line:
                        return line.decode("utf-8", "replace")
                    raise EOFError
                self._rest += chunk
        finally:
            self._reading.clear()
        line, _, self._rest = self._rest.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")


def terminal_prompter(stdin: TextIO, err: TextIO) -> tuple[Prompter, TerminalIO]:
    """A Prompter on this terminal, and the TerminalIO behind it (to interrupt it)."""
    io = TerminalIO(stdin, err)
    return Prompter(io.read, io.write), io


class CtrlC:
    """While active: Ctrl-C cancels the open question, or interrupts the command if none is open."""

    def __init__(self, io: TerminalIO) -> None:
        self._io = io
        self._previous: Any = None
        self._installed = False

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self._io.reading:
            self._io.interrupt()
            return
        raise KeyboardInterrupt

    def __enter__(self) -> CtrlC:
        # Signal handlers can only be set from the main thread (main() may run elsewhere in tests).
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
            self._installed = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)

