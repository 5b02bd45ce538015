"""The stdio transport's POSIX pipes: one ``poll()`` on stdout, the server's pidfd and a wake
descriptor, and non-blocking writes to stdin (see ``_stdio_pipes`` for the other kind).

A read waits in one ``poll()`` for stdout, for the server's exit (its pidfd, Linux 5.3+; where
there is none, a look at the process every ``EXIT_POLL_INTERVAL``) and for ``close()`` (the
wake): when it returns for stdout alone, the usual case, that is one look at its result. A
write that finds the pipe full waits for room a slice at a time, so that ``close()`` or the
server's exit ends the wait within a slice, and never past its deadline.
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time

from ._stdio_pipes import EXITED, Exited, Pipes, WriteFailed, WriteStopped
from ._stdio_process import EXIT_POLL_INTERVAL, READ_SIZE, Wake, close_fd, open_pidfd, pipe_capacity, pump_stderr
from ._stdio_stderr import StderrLines

__all__ = ["WRITE_WAIT_SLICE", "PosixPipes"]

#: While a write waits for room in a full pipe, how often it looks whether the transport was
#: closed or the server has exited.
WRITE_WAIT_SLICE = 0.25


class PosixPipes(Pipes):
    """``poll()`` and non-blocking writes (see the module's docstring)."""

    kind = "posix"
    #: Writes of at most this many bytes to a pipe go out whole or not at all (POSIX).
    atomic_write = getattr(select, "PIPE_BUF", 0)

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        super().__init__(proc)
        assert proc.stdin and proc.stdout
        self._wake = Wake()  # set by wake(): a read waiting in poll() ends at once
        self._lock = threading.Lock()
        self._writing = False  # a thread is in a write: stop_writes leaves stdin to it
        self._stopping = False  # stop_writes() was called
        self._stdin_closed = False
        self._stdout_closed = False
        self._stdin = proc.stdin
        self.stdin_fd = proc.stdin.fileno()
        os.set_blocking(self.stdin_fd, False)
        self._stdout = proc.stdout
        self.stdout_fd = proc.stdout.fileno()
        # Readable once the server has exited (-1: no pidfd here; waits look at the process
        # every EXIT_POLL_INTERVAL instead).
        self.pidfd = open_pidfd(proc.pid)
        self._poller = select.poll()
        self._poller.register(self.stdout_fd, select.POLLIN)  # first: poll() names it first
        if self.pidfd >= 0:
            self._poller.register(self.pidfd, select.POLLIN)
        self._poller.register(self._wake.fd, select.POLLIN)
        self._exited = False  # the server's exit has been seen: what it left is being read
        self._left = 0  # and how much more of it is read at most
        self._looked = 0.0  # (without a pidfd) when the process was last looked at

    # -- reading ----------------------------------------------------------------------------

    def wait(self, timeout: float | None, spin: float = 0.0) -> bool:
        if self._exited:
            return True
        poll = self._poller.poll
        stdout_fd = self.stdout_fd
        if spin > 0.0 and timeout is not None:
            # A poll that does not wait, again and again: when the answer comes within
            # microseconds, the wake-up of a sleeping thread (and of an idle CPU) is saved.
            clock = time.perf_counter
            end = clock() + min(spin, timeout)
            while True:
                events = poll(0)
                if events:
                    return (len(events) == 1 and events[0][0] == stdout_fd) or self._woken(events)
                if clock() >= end:
                    break
            timeout -= spin
            if timeout <= 0:
                return False
        if self.pidfd < 0 and (timeout is None or timeout > EXIT_POLL_INTERVAL):
            return self._wait_looking(timeout)
        # Rounded up: a poll that returns a hair before the deadline would only come back here.
        events = poll(-1 if timeout is None else int(timeout * 1000) + 1)
        if not events:
            return False
        return (len(events) == 1 and events[0][0] == stdout_fd) or self._woken(events)

    def _wait_looking(self, timeout: float | None) -> bool:
        """``wait`` without a pidfd: waits of at most ``EXIT_POLL_INTERVAL``, with a look at
        the process after each that found nothing, and at least once an interval."""
        poll = self._poller.poll
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            left = EXIT_POLL_INTERVAL if end is None else min(EXIT_POLL_INTERVAL, end - time.monotonic())
            if left <= 0:
                return False
            events = poll(int(left * 1000) + 1)
            now = time.monotonic()
            if not events or now - self._looked >= EXIT_POLL_INTERVAL:
                self._looked = now
                if self.proc.poll() is not None:
                    self._saw_exit()
                    return True
            if events:
                return self._woken(events)

    def _woken(self, events: list[tuple[int, int]]) -> bool:
        """``poll()`` returned for more than stdout: the wake, or the server's exit."""
        if self.pidfd >= 0 and any(fd == self.pidfd for fd, _ in events):
            self._saw_exit()
        return True

    def _saw_exit(self) -> None:
        # What the server wrote before it exited is in the pipe now: read that, at most what
        # the pipe holds, however much a process it started goes on writing.
        self._exited = True
        self._left = pipe_capacity(self.stdout_fd)

    def read(self) -> bytes | Exited:
        if not self._exited:
            return os.read(self.stdout_fd, READ_SIZE)
        if self._left > 0 and any(fd == self.stdout_fd for fd, _ in self._poller.poll(0)):
            self._left -= READ_SIZE
            return os.read(self.stdout_fd, READ_SIZE)
        return EXITED

    # -- writing ----------------------------------------------------------------------------

    def write(self, data: bytes, deadline: float | None) -> int | None:
        fd = self.stdin_fd
        self._begin_write()
        written = 0
        try:
            try:
                written = os.write(fd, data)  # the usual case: it all fits at once
                if written == len(data):
                    return None
            except BlockingIOError:
                pass
            view = memoryview(data)
            while written < len(view):
                try:
                    written += os.write(fd, view[written:])
                    continue
                except BlockingIOError:
                    pass
                if self._stopping:  # stop_writes() came while we waited for room
                    raise WriteStopped()
                # The pipe is full: the server is not reading. Wait for room, within the deadline,
                # a slice at a time, so that stop_writes() ends the wait within a slice.
                left = None if deadline is None else deadline - time.monotonic()
                if left is None or left > 0:
                    slice_ = WRITE_WAIT_SLICE if left is None else min(left, WRITE_WAIT_SLICE)
                    if not _wait_writable(fd, slice_) and self.proc.poll() is not None:
                        # The server has exited; a process it started holds its stdin, unread.
                        raise WriteFailed("the server stopped reading its stdin")
                    continue
                return written
            return None
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise WriteFailed("the server closed its stdin") from exc
        finally:
            self._end_write()

    def unread(self) -> bool:
        # A pipe whose reading end is closed reports an error to a poll of its writing end.
        with self._lock:
            if self._stdin_closed:
                return False
            poller = select.poll()
            poller.register(self.stdin_fd, select.POLLOUT)
            return any(events & select.POLLERR for _, events in poller.poll(0))

    def write_now(self, data: bytes) -> int:
        try:
            self._begin_write()
        except WriteStopped:
            return 0
        try:
            return os.write(self.stdin_fd, data)
        except (OSError, ValueError):  # full (BlockingIOError), broken or closed
            return 0
        finally:
            self._end_write()

    def _begin_write(self) -> None:
        with self._lock:
            if self._stopping:
                raise WriteStopped()
            self._writing = True

    def _end_write(self) -> None:
        with self._lock:
            self._writing = False
            if self._stopping:  # stop_writes() left stdin to us
                self._close_stdin()

    def stop_writes(self) -> None:
        with self._lock:
            self._stopping = True
            if not self._writing:
                self._close_stdin()

    def _close_stdin(self) -> None:  # (under the lock)
        if not self._stdin_closed:
            self._stdin_closed = True
            try:
                self._stdin.close()
            except OSError:
                pass

    # -- the rest ---------------------------------------------------------------------------

    def wake(self) -> None:
        self._wake.set()

    def close_stdout(self) -> None:
        with self._lock:
            if self._stdout_closed:
                return
            self._stdout_closed = True
        try:
            self._stdout.close()
        except (OSError, ValueError):
            pass
        close_fd(self.pidfd)
        self._wake.close()

    def pump_stderr(self, lines: StderrLines) -> None:
        pump_stderr(self.proc, open_pidfd(self.proc.pid) if self.pidfd >= 0 else -1, lines)


def _wait_writable(fd: int, timeout: float | None) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    events = poller.poll(None if timeout is None else max(0, int(timeout * 1000)))
    return bool(events)
