"""The stdio transport's portable pipes: a reader thread on stdout, a writer thread on stdin,
plain blocking reads and writes (see ``_stdio_pipes``). What runs on Windows; on Linux it is
forced (``pipes="portable"``, ``MCPCLIENT_STDIO=portable``) and tested through the same code.

* Reading: the ``mcpclient-stdout`` thread reads stdout in chunks of up to 64 KiB into a
  small queue (at most ``QUEUE_BYTES`` ahead of the transport, so that a flooding server still
  meets a full pipe) until its end. A wait on the queue looks at the server's process every
  ``EXIT_POLL_INTERVAL``: once it has exited, what it wrote before (in the pipe by then) is
  taken until no more comes for ``EXIT_SETTLE``; then ``read`` says ``EXITED``, even while a
  process it started holds stdout open.
* Writing: the ``mcpclient-stdin`` thread writes the one message handed to it, in pieces, with
  blocking writes; the caller waits for it a slice at a time, and goes at its deadline
  whatever the write does. A message the thread had not begun is taken back (nothing of it was
  written); one it had begun is reported as cut off (how much of it went cannot be known).
* Each thread owns its descriptor and closes it once out of its last system call, so a
  descriptor number is never reused under a blocked read or write.

What the threads cannot do: a read or write blocked on a pipe ends only when the other end
does. The process tree is ended on close (``_stdio_tree``), which ends the pipes; a process
the server started outside its tree (its own session, on POSIX) that holds a pipe keeps that
thread until it exits. On Windows the Job Object ends such a process with the server.
"""

from __future__ import annotations

import collections
import os
import subprocess
import threading
import time
from typing import IO

from ._stdio_pipes import EXITED, UNKNOWN, Exited, Pipes, WriteFailed, WriteStopped
from ._stdio_process import EXIT_POLL_INTERVAL, PIPE_CAPACITY_MAX, READ_SIZE, pump_stderr_blocking
from ._stdio_stderr import StderrLines

__all__ = ["EXIT_SETTLE", "QUEUE_BYTES", "WRITE_PIECE", "ThreadedPipes"]

#: How many bytes the reader thread reads ahead of the transport at most.
QUEUE_BYTES = 4 * READ_SIZE
#: After the server's exit, how long without a new chunk before what it wrote is taken as read.
EXIT_SETTLE = 0.25
#: The most one blocking write puts on the pipe, so that a message partly written is known.
WRITE_PIECE = READ_SIZE
#: While a write is with the writer thread, how often its caller looks at the process.
WRITE_WAIT_SLICE = 0.25


class _Job:
    """One message handed to the writer thread."""

    __slots__ = ("data", "done", "error", "started", "written")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.started = False  # the writer thread took it
        self.written = 0  # bytes of it on the pipe (updated after each piece)
        self.done = False
        self.error: OSError | None = None


class ThreadedPipes(Pipes):
    """Reader and writer threads and blocking pipes (see the module's docstring)."""

    kind = "portable"

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        super().__init__(proc)
        assert proc.stdin and proc.stdout
        self._read_cond = threading.Condition()
        self._chunks: collections.deque[bytes] = collections.deque()  # b"" last: the end
        self._queued = 0  # bytes in _chunks
        self._arrived = 0.0  # when the last chunk came
        self._woken = False
        self._released = False  # close_stdout(): the reader stops at its next chance
        self._exited_at: float | None = None  # when the server's exit was seen
        self._left = 0  # after it: how much more is taken at most
        self._looked = time.monotonic()  # when the process was last looked at
        self._write_cond = threading.Condition()
        self._job: _Job | None = None
        self._stopping = False  # stop_writes(): the writer closes stdin and ends
        self._broken: str | None = None  # why nothing can be written any more
        self._reader = threading.Thread(target=self._read_stdout, args=(proc.stdout,),
                                        name="mcpclient-stdout", daemon=True)
        self._writer = threading.Thread(target=self._write_stdin, args=(proc.stdin,),
                                        name="mcpclient-stdin", daemon=True)
        self._reader.start()
        self._writer.start()

    # -- reading ----------------------------------------------------------------------------

    def _read_stdout(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        cond = self._read_cond
        try:
            while True:
                try:
                    chunk = os.read(fd, READ_SIZE)
                except OSError:  # (the transport reports the end, and why, from the process)
                    chunk = b""
                with cond:
                    self._chunks.append(chunk)
                    self._queued += len(chunk)
                    self._arrived = time.monotonic()
                    cond.notify_all()
                    while self._queued >= QUEUE_BYTES and not self._released:
                        cond.wait()
                    if not chunk or self._released:
                        return
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def wait(self, timeout: float | None, spin: float = 0.0) -> bool:
        # (spin is not used: a thread spinning here would hold the GIL the reader needs)
        cond = self._read_cond
        end = None if timeout is None else time.monotonic() + timeout
        with cond:
            while not self._chunks and not self._woken:
                now = time.monotonic()
                if self._exited_at is not None:
                    if self._left <= 0 or now - max(self._exited_at, self._arrived) >= EXIT_SETTLE:
                        return True  # read() says EXITED
                    step = EXIT_SETTLE
                else:
                    if now - self._looked >= EXIT_POLL_INTERVAL:
                        self._looked = now
                        if self.proc.poll() is not None:
                            self._exited_at, self._left = now, PIPE_CAPACITY_MAX
                            continue
                    step = EXIT_POLL_INTERVAL
                if end is not None:
                    if now >= end:
                        return False
                    step = min(step, end - now)
                cond.wait(step)
            return True

    def read(self) -> bytes | Exited:
        with self._read_cond:
            if self._exited_at is not None and self._left <= 0:
                return EXITED
            if self._chunks:
                chunk = self._chunks.popleft()
                self._queued -= len(chunk)
                if self._exited_at is not None:
                    self._left -= len(chunk)
                self._read_cond.notify_all()  # the reader thread may wait for room
                return chunk
            if self._exited_at is not None:
                return EXITED
        raise OSError("nothing to read (the transport is closed)")

    # -- writing ----------------------------------------------------------------------------

    def _write_stdin(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        cond = self._write_cond
        try:
            while True:
                with cond:
                    while self._job is None and not self._stopping:
                        cond.wait()
                    job = self._job
                    if job is None:
                        return  # stop_writes(), with no write in progress
                    job.started = True
                try:
                    view = memoryview(job.data)
                    while job.written < len(view):
                        job.written += os.write(fd, view[job.written : job.written + WRITE_PIECE])
                except OSError as exc:
                    job.error = exc
                with cond:
                    job.done = True
                    if self._job is job:
                        self._job = None
                    if job.error is not None:
                        self._broken = _why(job.error)
                    cond.notify_all()
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def write(self, data: bytes, deadline: float | None) -> int | None:
        cond = self._write_cond
        with cond:
            if self._stopping:
                raise WriteStopped()
            if self._broken is not None:
                raise WriteFailed(self._broken)
            if self._job is not None:  # one cut off before: the transport is closed by now
                raise WriteStopped()
            job = self._job = _Job(data)
            cond.notify_all()
            while not job.done:
                if self._stopping:
                    if not job.started:
                        self._job = None
                    raise WriteStopped()
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    if not job.started:
                        self._job = None  # taken back: nothing of it was written
                        return 0
                    return job.written or UNKNOWN
                wait_for = WRITE_WAIT_SLICE if deadline is None else min(WRITE_WAIT_SLICE, deadline - now)
                if not cond.wait(wait_for) and job.started and not job.done and self.proc.poll() is not None:
                    # The server has exited; a process it started holds its stdin, unread.
                    self._broken = "the server stopped reading its stdin"
                    raise WriteFailed(self._broken)
            if job.error is not None:
                if isinstance(job.error, (BrokenPipeError, ConnectionResetError)):
                    raise WriteFailed(_why(job.error))
                raise job.error
            return None

    def stop_writes(self) -> None:
        with self._write_cond:
            self._stopping = True
            self._write_cond.notify_all()

    # -- the rest ---------------------------------------------------------------------------

    def wake(self) -> None:
        with self._read_cond:
            self._woken = True
            self._read_cond.notify_all()

    def close_stdout(self) -> None:
        with self._read_cond:
            self._released = True
            self._chunks.clear()
            self._queued = 0
            self._read_cond.notify_all()

    def pump_stderr(self, lines: StderrLines) -> None:
        pump_stderr_blocking(self.proc, lines)


def _why(error: OSError) -> str:
    if isinstance(error, (BrokenPipeError, ConnectionResetError)):
        return "the server closed its stdin"
    return f"cannot write to the server: {error}"
