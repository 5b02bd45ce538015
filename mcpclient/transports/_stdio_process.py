"""The stdio server's process, as the pipes see it: when it has exited, how a reader is woken,
how its process group is ended, and the thread that forwards its stderr.

A server that started a helper process (which inherits its stdout and stderr) and then exited
leaves its pipes open: the end of output never comes while the helper lives. So the readers
wait on the process as well as on the pipe: on a pidfd (``os.pidfd_open``, Linux 5.3+), which
becomes readable once the process has exited, in the same ``poll()`` as the pipe, so watching
costs no system call more. Where there is no pidfd, a reader waits at most
``EXIT_POLL_INTERVAL`` at a time and looks at the process in between.

Whatever the server wrote before it exited is in the pipe by then; the readers take it (up to
what a pipe holds, however much a helper keeps writing) before they call the output ended.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Callable

from ._stdio_stderr import StderrLines, StderrSink

__all__ = [
    "EXIT_POLL_INTERVAL",
    "PIPE_CAPACITY_MAX",
    "READ_SIZE",
    "StderrSink",
    "Wake",
    "close_fd",
    "exit_status",
    "open_pidfd",
    "pipe_capacity",
    "pump_stderr",
    "pump_stderr_blocking",
    "stderr_drained",
    "wait",
]

log = logging.getLogger(__name__)

#: Where the process cannot be watched through a pidfd: the longest a reader waits on a pipe
#: before it looks whether the server has exited.
EXIT_POLL_INTERVAL = 0.25
#: How often ``stderr_drained`` looks whether the stderr thread has read the pipe empty.
DRAIN_POLL_INTERVAL = 0.005
#: The most a single read takes, in bytes (what a pipe holds by default).
READ_SIZE = 1 << 16
#: How much is read after the server's exit when the pipe's size cannot be asked: more than a
#: pipe holds (64 KiB by default, at most 1 MiB for a process without privileges).
PIPE_CAPACITY_MAX = 1 << 20

_F_GETPIPE_SZ = 1032  # Linux's fcntl command (fcntl.F_GETPIPE_SZ from Python 3.10 on Linux only)


def open_pidfd(pid: int) -> int:
    """A descriptor that becomes readable once process ``pid`` has exited, or -1 where the
    system has none (not Linux, a kernel before 5.3, a sandbox that forbids it)."""
    if not hasattr(os, "pidfd_open"):
        return -1
    try:
        return os.pidfd_open(pid)
    except OSError:
        return -1


def close_fd(fd: int) -> None:
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass


def pipe_capacity(fd: int) -> int:
    """How many bytes the pipe ``fd`` holds at most (what a process can have left in it)."""
    try:
        import fcntl  # (POSIX)

        return max(int(fcntl.fcntl(fd, _F_GETPIPE_SZ)), READ_SIZE)
    except (ImportError, OSError, ValueError):
        return PIPE_CAPACITY_MAX


class Wake:
    """A descriptor for ``poll()`` that ``set()`` makes readable for good: an eventfd where
    there is one, else a pipe. ``set`` after ``close`` does nothing, so a descriptor number
    freed by ``close`` is never written to."""

    _ONE = (1).to_bytes(8, sys.byteorder)  # what an eventfd takes; any pipe takes it too

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False
        if hasattr(os, "eventfd"):
            self.fd = self._write_fd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
        else:
            self.fd, self._write_fd = os.pipe()
            os.set_blocking(self._write_fd, False)

    def set(self) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                os.write(self._write_fd, self._ONE)
            except OSError:  # (a full pipe is readable already)
                pass

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            close_fd(self.fd)
            if self._write_fd != self.fd:
                close_fd(self._write_fd)


def exit_status(code: int | None) -> str:
    if code is None:
        return "the server is still running"
    if code < 0:
        return f"the server was killed by signal {_signal_name(-code)}"
    return f"the server exited with code {code}"


def wait(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Whether the process has exited (and is reaped) within ``timeout``."""
    try:
        proc.wait(timeout)
        return True
    except subprocess.TimeoutExpired:
        return False


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def pump_stderr(proc: subprocess.Popen[bytes], pidfd: int, lines: StderrLines) -> None:
    """Hand the server's stderr to ``lines`` line by line, until it ends or the server has
    exited and what it wrote is read; then close it and ``pidfd`` (the thread's own, -1 for
    none). A line longer than 64 KiB is handed on in pieces of that size. ``lines.busy`` is
    set from each read to the end of its lines' forwarding (see ``stderr_drained``)."""
    stream = proc.stderr
    assert stream is not None
    try:
        _pump(proc, stream.fileno(), pidfd, lines)
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass
        close_fd(pidfd)


def _pump(proc: subprocess.Popen[bytes], fd: int, pidfd: int, lines: StderrLines) -> None:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    if pidfd >= 0:
        poller.register(pidfd, select.POLLIN)
    wait_ms = -1 if pidfd >= 0 else int(EXIT_POLL_INTERVAL * 1000)
    left: int | None = None  # once the server has exited: how much more is read
    looked = time.monotonic()  # (without a pidfd) when the process was last looked at
    partial = b""
    try:
        while True:
            events = poller.poll(wait_ms if left is None else 0)
            readable = any(ready == fd for ready, _ in events)
            if left is None:
                if pidfd >= 0:
                    exited = any(ready == pidfd for ready, _ in events)
                elif not readable or time.monotonic() - looked >= EXIT_POLL_INTERVAL:
                    looked = time.monotonic()
                    exited = proc.poll() is not None
                else:
                    exited = False
                if exited:
                    left = pipe_capacity(fd)  # the rest is in the pipe now: read it, then stop
                if not readable:
                    continue
            elif not readable or left <= 0:
                return
            lines.busy = True  # before the read: the pipe is never empty with its lines unseen
            try:
                chunk = os.read(fd, READ_SIZE)
                if not chunk:
                    return
                if left is not None:
                    left -= len(chunk)
                partial = _split(partial, chunk, lines.add)
            finally:
                lines.busy = False
    finally:
        if partial:
            lines.add(partial)


def pump_stderr_blocking(proc: subprocess.Popen[bytes], lines: StderrLines) -> None:
    """``pump_stderr`` with plain blocking reads (no ``poll``, for the portable pipes): until
    stderr ends, which a process the server started and that holds it delays. ``lines.busy``
    is set only once a read has returned (a blocking read cannot be told from a wait), so
    ``stderr_drained`` may see the pipe empty a moment before its last lines are handed on."""
    stream = proc.stderr
    assert stream is not None
    partial = b""
    try:
        fd = stream.fileno()
        while True:
            chunk = os.read(fd, READ_SIZE)
            if not chunk:
                break
            lines.busy = True
            try:
                partial = _split(partial, chunk, lines.add)
            finally:
                lines.busy = False
    except (OSError, ValueError):
        pass
    finally:
        if partial:
            lines.add(partial)
        try:
            stream.close()
        except OSError:
            pass


def stderr_drained(proc: subprocess.Popen[bytes], lines: StderrLines, timeout: float) -> bool:
    """Wait (up to ``timeout``) until every byte now in the server's stderr pipe has been read
    and its lines handed to ``lines``: whether that happened. Without a way to ask how much a
    pipe holds (``FIONREAD``: not on Windows), False at once."""
    try:
        import fcntl  # (POSIX)
        import termios

        fd = proc.stderr.fileno()  # type: ignore[union-attr]
    except (ImportError, OSError, ValueError):
        return False
    deadline = time.monotonic() + timeout
    room = bytearray(4)
    while True:
        try:
            fcntl.ioctl(fd, termios.FIONREAD, room)
        except (OSError, ValueError):  # (closed: the stderr thread has read it all)
            return not lines.busy
        if int.from_bytes(room, sys.byteorder) == 0 and not lines.busy:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(DRAIN_POLL_INTERVAL)


def _split(partial: bytes, chunk: bytes, forward: Callable[[bytes], None]) -> bytes:
    """Forward the whole lines of ``partial + chunk`` (a line over 64 KiB in pieces of that
    size); the start of a line whose end has not come yet is returned."""
    lines = (partial + chunk).split(b"\n")
    partial = lines.pop()
    for line in lines:
        forward(line)
    while len(partial) > READ_SIZE:
        forward(partial[:READ_SIZE])
        partial = partial[READ_SIZE:]
    return partial
