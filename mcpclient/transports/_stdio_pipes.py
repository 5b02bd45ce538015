"""The stdio transport's platform seam: how bytes move through the server's pipes.

``StdioTransport`` frames lines, keeps state and reports errors; a ``Pipes`` object does the
waiting, reading and writing, in one of two ways:

* ``posix`` (``_stdio_posix.PosixPipes``): one ``poll()`` on stdout, the server's pidfd and a
  wake descriptor; non-blocking writes to stdin. No thread but the stderr pump. The default on
  POSIX systems.
* ``portable`` (``_stdio_portable.ThreadedPipes``): a reader thread on stdout and a writer
  thread on stdin, plain blocking reads and writes, no ``poll``/``select``, no non-blocking
  descriptors, no pidfd: what runs on Windows. The default there; on Linux it is forced with
  ``StdioTransport(..., pipes="portable")`` or ``MCPCLIENT_STDIO=portable``, which is how the
  test suite runs it.
"""

from __future__ import annotations

import abc
import os
import subprocess
import sys
from typing import ClassVar

from ._stdio_stderr import StderrLines

__all__ = ["ENV_VAR", "EXITED", "KINDS", "UNKNOWN", "Exited", "Pipes", "WriteFailed", "WriteStopped", "choose"]

#: The environment variable that forces a kind of pipes (``posix`` or ``portable``).
ENV_VAR = "MCPCLIENT_STDIO"
KINDS = ("posix", "portable")
#: ``Pipes.write`` ran out of time with the message in the writer's hands, how much of it
#: written not known (the portable writer's thread is blocked in the write).
UNKNOWN = -1


class Exited:
    """What ``Pipes.read`` returns once the server has exited and what it wrote is read,
    while another process (one it started) still holds its stdout open."""

    def __repr__(self) -> str:
        return "EXITED"


EXITED = Exited()


class WriteStopped(Exception):
    """The transport was closed while a write waited: the caller gets ``ConnectionClosed``."""


class WriteFailed(Exception):
    """Nobody reads stdin any more (``str()`` says why): the server has exited or closed it."""


class Pipes(abc.ABC):
    """The server's three pipes, read and written the way one platform allows.

    One thread at a time calls ``wait`` and ``read``; one at a time ``write`` (or
    ``write_now``); ``wake`` and the closing methods come from any thread.
    """

    kind: ClassVar[str]
    #: How many bytes ``write_now`` puts out whole or not at all; 0: never use it.
    atomic_write: ClassVar[int] = 0

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    @abc.abstractmethod
    def wait(self, timeout: float | None, spin: float = 0.0) -> bool:
        """Wait, for at most ``timeout`` (None: no limit; the first ``spin`` seconds without
        sleeping, where the pipes can), until ``read`` has something to return or ``wake``
        was called; False when the time ran out first."""

    @abc.abstractmethod
    def read(self) -> bytes | Exited:
        """After ``wait`` returned True: the next bytes of stdout, ``b""`` at its end, or
        ``EXITED`` (see ``Exited``). Raises ``OSError`` when the pipe fails."""

    @abc.abstractmethod
    def write(self, data: bytes, deadline: float | None) -> int | None:
        """Write ``data`` to stdin by ``deadline`` (``time.monotonic()``; None: no limit):
        None once all of it is written, else how much was when the time ran out (0: none,
        so the stream is intact; ``UNKNOWN``). Raises ``WriteStopped`` once ``stop_writes``
        was called, ``WriteFailed`` when nobody reads stdin any more, ``OSError``."""

    def unread(self) -> bool:
        """Whether the server has closed its stdin, where that shows without writing (False
        where it cannot be told: the first write then fails with ``WriteFailed``)."""
        return False

    def write_now(self, data: bytes) -> int:
        """Write ``data`` (at most ``atomic_write`` bytes) at once, without waiting: how many
        bytes went out (all of it, or 0 when the pipe has no room, or is closed or broken)."""
        return 0

    @abc.abstractmethod
    def wake(self) -> None:
        """End a ``wait`` in progress, and every later one, at once (the transport is closed)."""

    @abc.abstractmethod
    def stop_writes(self) -> None:
        """Close stdin, now or once the write in progress is out of the system call (a
        descriptor closed under it could be reused by the next file opened, and the rest of
        the message would land there); a write waiting for room ends with ``WriteStopped``."""

    @abc.abstractmethod
    def close_stdout(self) -> None:
        """Nothing reads stdout any more: release it (now, or once a blocked read returns)."""

    def drop_in_child(self) -> None:
        """In a child forked with the transport open: close our copy of stdin (so the server
        still sees its end when the parent closes it), and touch nothing else: the locks the
        parent's threads held at fork time are held here for ever."""
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass

    @abc.abstractmethod
    def pump_stderr(self, lines: StderrLines) -> None:
        """The stderr thread's work: hand each line to ``lines``, until stderr ends or the
        server has exited and what it wrote is read."""


def choose(kind: str | None) -> str:
    """The kind of pipes to use: ``kind`` if given, else ``MCPCLIENT_STDIO``, else what this
    platform has (``posix`` where there is ``poll``, ``portable`` elsewhere)."""
    if kind is None:
        kind = os.environ.get(ENV_VAR, "").strip().lower() or None
        if kind is not None and kind not in KINDS:
            raise ValueError(f"{ENV_VAR}={kind!r}: use one of {', '.join(KINDS)}, or leave it unset")
    if kind is None:
        return "posix" if sys.platform != "win32" and _has_poll() else "portable"
    if kind not in KINDS:
        raise ValueError(f"pipes={kind!r}: use one of {', '.join(KINDS)}")
    if kind == "posix" and (sys.platform == "win32" or not _has_poll()):
        raise ValueError("pipes='posix' needs poll() and non-blocking pipes: use 'portable' here")
    return kind


def _has_poll() -> bool:
    import select

    return hasattr(select, "poll")
