"""The stdio transport: a server child process speaking newline-delimited JSON-RPC."""

from __future__ import annotations

import collections
import copy
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
from typing import Any, Iterable, Mapping

from .._core.credentials import Credentials
from .._core.exceptions import ConnectionClosed, TransportError
from ._stdio_pipes import UNKNOWN, Exited, Pipes, WriteFailed, WriteStopped, choose
from ._stdio_portable import ThreadedPipes
from ._stdio_posix import PosixPipes
from ._stdio_process import exit_status, stderr_drained, wait
from ._stdio_stderr import StderrLines, StderrSink
from ._stdio_tree import for_this_system
from .base import NOTHING, About, Peer, PipeTransport, SideOutput, decode_message, encode_message

__all__ = ["StdioTransport"]

log = logging.getLogger(__name__)

#: After stdin is closed, how long the server gets to exit on its own.
EXIT_GRACE_TIMEOUT = 2.0
#: After SIGTERM to the process group, how long before SIGKILL.
TERMINATE_TIMEOUT = 2.0
#: After a torn write (see ``TORN_WRITE``), or once the server closed its stdin: how long the
#: server, which is not reading, gets after SIGTERM before SIGKILL. Short: ``close()`` waits for it.
TORN_TERMINATE_TIMEOUT = 0.5
#: After SIGKILL, how long we wait to reap the process.
KILL_REAP_TIMEOUT = 2.0
#: When stdout ends, how long we wait for the exit code and the last stderr lines.
EXIT_REPORT_TIMEOUT = 0.5
#: Messages longer than this (in bytes) are logged and skipped rather than buffered forever.
MAX_MESSAGE_BYTES = 512 * 1024 * 1024
#: The most a single read from the server's stdout takes, in bytes: a pipe holds 64 KiB, and
#: a larger buffer would be allocated (and mapped) for every small message for nothing.
READ_SIZE = 1 << 16
#: How many lines of the server's stderr are kept for error messages.
STDERR_TAIL_LINES = 20
#: How many of them an opening that got no reply shows (``last_words``).
LAST_WORDS_LINES = 8
#: When the era probe is refused: the longest we wait for the stderr thread to read what the
#: server wrote before its refusal (its complaint), so the complaint is held, not forwarded.
SIDE_DRAIN_TIMEOUT = 0.5

#: Why the connection ends when a write runs out of time with part of its message written.
TORN_WRITE = (
    "a message was cut off with part of it written to the server (it had stopped reading its stdin, "
    "and the time ran out): the server would read the rest of the stream torn, so the connection is "
    "closed; open a new client to go on"
)
#: The same when the portable pipes' writer thread is blocked in its write: how much of the
#: message went out cannot be known.
STUCK_WRITE = (
    "a message could not be written in time (the server had stopped reading its stdin) and may "
    "have gone out in part: the server could read the rest of the stream torn, so the connection "
    "is closed; open a new client to go on"
)

_DEFAULT_STDERR: Any = object()
#: The blanks a line may begin with (json.decoder.WHITESPACE but the newline, which ends it).
_line_start = re.compile(rb"[ \t\r]*").match


class StdioTransport(PipeTransport):
    """Launch ``cmd`` (an argv list, never run through a shell) and talk to it over its pipes.

    ``env`` entries (a mapping, or ``"KEY=value"`` strings as in the Go API) are added to the
    current environment. The child's stderr is read by a thread and forwarded line by line to
    ``stderr``: ``sys.stderr`` by default (written through Python, so it works in Jupyter), a
    ``logging.Logger``, any callable taking a line, or None to discard. The last lines are kept
    for error messages. The child runs in its own process group (a Job Object on Windows), and
    a watchdog ends it if this process dies without closing it.

    ``pipes`` chooses how the pipes are read and written (see docs/platforms.md): ``"posix"``
    (``poll()`` and non-blocking writes, no thread but the stderr pump: the default on POSIX)
    or ``"portable"`` (a reader and a writer thread with blocking reads and writes: the default
    on Windows). None: the ``MCPCLIENT_STDIO`` environment variable, else the platform's.

    The server's exit ends the connection, even while a process it started keeps its stdout
    open: what the server wrote before it exited is still read and delivered first.

    Messages have no size limit short of ``max_message_bytes`` (512 MiB): one longer than that
    is logged as an error and skipped, so a server that never ends a line cannot exhaust memory.
    A line over 64 KiB that cannot be JSON-RPC (it does not begin with ``{`` or ``[``) is
    skipped as it arrives, never held.

    Raises ``TransportError`` at once, with the reason, when the command cannot start.

    A caller may read its own reply (``receive_within``), and a writer may carry other
    threads' requests in its system call (``write_frames``): a ``PipeTransport``. A subclass
    that wraps ``send`` or ``receive`` alone (to record, say) keeps seeing every message: the
    engine then uses neither (``transports.base.reads_inline``, ``writes_batched``).
    """

    def __init__(
        self,
        cmd: list[str] | tuple[str, ...],
        env: Mapping[str, str] | Iterable[str] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        stderr: StderrSink = _DEFAULT_STDERR,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        pipes: str | None = None,
    ) -> None:
        if isinstance(cmd, (str, bytes)) or not cmd:
            raise ValueError("cmd must be a non-empty list of arguments (no shell is used)")
        self.pipes = choose(pipes)
        self.cmd = [os.fspath(part) for part in cmd]
        if env is not None and not isinstance(env, Mapping):
            env = list(env)  # read twice: now, and again by reopen()
        self._env_arg, self._cwd_arg, self._stderr_arg = env, cwd, stderr
        credentials = self._credentials = Credentials.for_stdio(env)
        self._stderr = StderrLines(sys.stderr if stderr is _DEFAULT_STDERR else stderr, STDERR_TAIL_LINES)
        self._closed = False
        self._close_reason = "the transport is closed"
        self._close_lock = threading.Lock()
        self._closer: threading.Thread | None = None  # ends the server after a torn write
        # Closed, or the output has ended: a read raises at once (why: _stop_error).
        self._stopped = False
        self._ended: ConnectionClosed | None = None  # why the output ended
        # Why nothing can be written any more (the server closed its stdin, or exited): every
        # later send raises it at once, and close() does not wait for an end of input it cannot see.
        self._unwritable: ConnectionClosed | None = None
        self._reading = False
        self._stdout_closed = False
        self._tree = for_this_system()
        try:
            merged_env = _merge_env(env)
            self._proc = subprocess.Popen(
                self.cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=merged_env,
                cwd=cwd,
                **self._tree.popen_options(),
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            raise TransportError(f"cannot start {self.cmd[0]!r}: {exc}") from exc
        self._about = About(
            server_key=("stdio", _config_digest(self.cmd, merged_env, cwd)),  # for the era cache
            peer=Peer(network="pipe"),
            credentials=credentials,  # each value of the added environment
            # Where the server started: a relative cwd is taken from this process's directory now.
            directory=os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd(),
            side_output=_Stderr(self._stderr, self._proc, credentials),
        )
        self._owner = os.getpid()
        self._tree.adopt(self._proc)  # the server dies with this process, however it ends
        try:
            self._pipes: Pipes = PosixPipes(self._proc) if self.pipes == "posix" else ThreadedPipes(self._proc)
        except (OSError, RuntimeError) as exc:  # out of descriptors or threads
            self._tree.kill()
            self._tree.release()
            wait(self._proc, KILL_REAP_TIMEOUT)
            for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                if stream is not None:
                    stream.close()
            raise TransportError(f"cannot talk to {self.cmd[0]!r}: {exc}") from exc
        self._atomic_write = self._pipes.atomic_write
        self._partial = bytearray()  # the start of a line whose end has not arrived yet
        self._lines: collections.deque[bytes | bytearray] = collections.deque()
        self.max_message_bytes = max_message_bytes
        self._skipping = False  # inside a message over the size limit, until its newline
        self._stderr_thread = threading.Thread(
            target=self._pipes.pump_stderr,
            args=(self._stderr,),
            name="mcpclient-stderr",
            daemon=True,
        )
        self._stderr_thread.start()

    @property
    def about(self) -> About:
        """The server configuration (command, added environment, working directory) as its
        ``server_key``, so later clients skip the era probe; the values of the added
        environment as its credentials; the directory it was started in (a server that
        changes its own is not seen); its stderr as its side output."""
        return self._about

    def reopen(self) -> StdioTransport:
        """The same command started again, with the same environment, directory and stderr."""
        return StdioTransport(self.cmd, self._env_arg, cwd=self._cwd_arg, stderr=self._stderr_arg,
                              max_message_bytes=self.max_message_bytes, pipes=self.pipes)

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.poll()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"pid {self._proc.pid}"
        return f"<StdioTransport {self.cmd[0]!r} {state}>"

    # -- sending ----------------------------------------------------------------------------

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        """Write one message within ``timeout``. ``TimeoutError`` when the server does not
        read it in time: nothing of it was written, or part of it was (or may have been), and
        then the connection is closed (``TORN_WRITE``: the server would read a torn message),
        the server ended on a thread of its own and every later call fails with
        ``ConnectionClosed`` saying so."""
        if self._closed:
            raise ConnectionClosed(self._close_reason)
        if self._unwritable is not None:
            raise copy.copy(self._unwritable)
        data = encode_message(message) + b"\n"
        try:
            left = self._pipes.write(data, None if timeout is None else time.monotonic() + timeout)
        except WriteStopped:
            raise ConnectionClosed(self._close_reason) from None
        except WriteFailed as exc:
            error = self._unwritable = self._exit_error(str(exc))
            raise copy.copy(error) from exc
        except (OSError, ValueError) as exc:
            if self._closed:
                raise ConnectionClosed(self._close_reason) from exc
            raise TransportError(f"cannot write to the server: {exc}") from exc
        if left is None:
            return
        if left == 0:
            raise TimeoutError("the server is not reading its stdin")
        # Half a message is on the pipe: the stream can never be valid again. The caller goes
        # at its deadline; ending the server is another thread's work.
        reason = STUCK_WRITE if left == UNKNOWN else TORN_WRITE
        self._tear(reason)
        raise TimeoutError(reason)

    def frame(self, message: dict[str, Any]) -> bytes | None:
        """The message as one line; None when it is too big for one atomic write, and always
        with the portable pipes, which have no such write (``PipeTransport``)."""
        if not self._atomic_write:
            return None
        data = encode_message(message) + b"\n"
        return data if len(data) <= self._atomic_write else None

    def write_frames(self, frames: list[bytes]) -> int:
        """Write whole frames, as many per system call as one atomic pipe write holds, until
        the pipe is full; how many went out (see ``PipeTransport.write_frames``)."""
        limit, done, count = self._atomic_write, 0, len(frames)
        write_now = self._pipes.write_now
        while done < count and not self._closed:
            end, size = done + 1, len(frames[done])
            while end < count and size + len(frames[end]) <= limit:
                size += len(frames[end])
                end += 1
            written = write_now(frames[done] if end == done + 1 else b"".join(frames[done:end]))
            if not written:  # full, broken or closed: for send to tell
                break
            if written != size:  # POSIX forbids it on a pipe; the stream would be broken
                log.error("a write of %d bytes to the server's stdin was cut short; closing", size)
                self._tear(TORN_WRITE)
                break
            done = end
        return done

    # -- receiving --------------------------------------------------------------------------

    def receive(self) -> Any:
        return self._receive(None)

    def receive_within(self, timeout: float, spin: float = 0.0) -> Any:
        return self._receive(time.monotonic() + timeout, spin)

    def _receive(self, deadline: float | None, spin: float = 0.0) -> Any:
        self._reading = True
        try:
            if self._stopped:  # after setting _reading: close() looks at it after setting _closed
                raise self._stop_error()
            lines = self._lines
            pipes = self._pipes
            while True:
                if not lines:
                    if deadline is not None:
                        wait_for = deadline - time.monotonic()
                        if wait_for <= 0 or not pipes.wait(wait_for, spin):
                            return NOTHING
                        spin = 0.0  # once a call: the rest of a long message is waited for
                    else:
                        pipes.wait(None)  # (returns once there is something, or on close)
                    if self._stopped:
                        raise self._stop_error()
                    if not self._take():
                        raise self._end_of_output("the server closed its stdout")
                    continue
                line = lines.popleft()
                if line and not line.isspace():  # (isspace stops at the first non-blank)
                    return decode_message(line)
        finally:
            self._reading = False
            if self._stopped:  # closed (close() left stdout to us) or ended: nothing reads it again
                self._close_stdout()

    def _take(self) -> bool:
        """Read what the pipes have into whole lines and a partial one; False at the end of
        the output. Once the server has exited (``EXITED``: a process it started holds its
        stdout), what it wrote is delivered, a last line without its newline too, and then
        ``ConnectionClosed`` with its exit status is raised."""
        try:
            chunk = self._pipes.read()
        except (OSError, ValueError) as exc:
            raise self._exit_error(f"cannot read from the server: {exc}") from exc
        if isinstance(chunk, Exited):
            if self._partial and not self._skipping:
                self._lines.append(self._partial)  # a last message without its newline
                self._partial = bytearray()
            if self._lines:
                return True
            raise self._end_of_output(None)
        return self._read_chunk(chunk)

    def _read_chunk(self, chunk: bytes) -> bool:
        """Split a ``chunk`` of stdout (up to 64 KiB) into whole lines and a partial one;
        False at the end of the output (an empty chunk).

        Large reads instead of ``readline()``'s 8 KiB ones: a 10 MB message takes a handful of
        system calls, and a partial line grows in place and is handed over as it is once its
        end comes, so a long line costs linear time and is held once.
        """
        if not chunk:  # end of output: a last message may lack its newline
            rest, self._partial = self._partial, bytearray()
            if self._skipping or not rest or rest.isspace():
                return False
            self._lines.append(rest)  # the next read finds the end again
            return True
        if self._skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                return True
            chunk, self._skipping = chunk[newline + 1 :], False
            if not chunk:
                return True
        end = chunk.rfind(b"\n")
        if end < 0:
            partial = self._partial
            partial += chunk
            if len(partial) > READ_SIZE >= len(partial) - len(chunk) and not _may_be_json(partial):
                log.warning(
                    "the server sent a line of over %d bytes that is not JSON-RPC (it begins %r); "
                    "skipping it", READ_SIZE, bytes(partial[:40])
                )
                self._partial, self._skipping = bytearray(), True
            elif len(partial) > self.max_message_bytes:
                log.error(
                    "the server sent a message over %d bytes without a newline; skipping it "
                    "(raise max_message_bytes if that is expected)", self.max_message_bytes
                )
                self._partial, self._skipping = bytearray(), True
            return True
        if end == len(chunk) - 1 and not self._partial and chunk.find(b"\n") == end:
            self._lines.append(chunk)  # the common case: exactly one whole message
            return True
        if self._partial:
            first = chunk.find(b"\n")
            line = self._partial
            line += chunk[:first]
            self._lines.append(line)  # the line itself, not a copy: a long one is held once
            if first < end:
                self._lines.extend(chunk[first + 1 : end].split(b"\n"))
        else:
            self._lines.extend(chunk[:end].split(b"\n"))
        self._partial = bytearray(chunk[end + 1 :])
        return True

    def _end_of_output(self, what: str | None) -> ConnectionClosed:
        """The output has ended (``what`` happened; None: the server exited while another
        process holds its stdout): the error for this read and every later one."""
        error = self._exit_error(what)
        self._ended = error
        self._stopped = True  # (the reading thread closes stdout on its way out)
        return error

    def _stop_error(self) -> ConnectionClosed:
        if self._ended is not None and not self._closed:
            return copy.copy(self._ended)
        return ConnectionClosed(self._close_reason)

    def _exit_error(self, what: str | None) -> ConnectionClosed:
        if self._closed:
            return ConnectionClosed(self._close_reason)
        try:
            code = self._proc.wait(EXIT_REPORT_TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None:  # its last words: a server still running may keep stderr open for ever
            self._stderr_thread.join(EXIT_REPORT_TIMEOUT)
        if what is None:
            reason = f"{exit_status(code)}; a process it started still holds its output pipe"
        elif code is None:
            reason = f"{what} (the process is still running)"
        else:
            reason = f"{what}: {exit_status(code)}"
        tail = self._credentials.redactor.redact("\n".join(self._stderr.tail()))  # it may echo its environment
        return ConnectionClosed(reason, exit_code=code, stderr_tail=tail)

    # -- closing ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close stdin, let the server exit, then terminate and kill its process group.

        A read waiting on another thread ends at once. After a torn write (see ``send``) the
        server is being ended already, on a thread of its own: this waits for that. A server
        that closed its stdin cannot see it closed: it is asked to end (SIGTERM) at once, and
        killed ``TORN_TERMINATE_TIMEOUT`` later.
        """
        self._stderr.release()  # whatever is still held goes on
        if self._stop("the transport is closed"):
            if self._unwritable is not None or self._pipes.unread():
                self._end_server(0.0, TORN_TERMINATE_TIMEOUT)
            else:
                self._end_server(EXIT_GRACE_TIMEOUT)
            return
        closer = self._closer
        if closer is not None and closer is not threading.current_thread():
            closer.join(TORN_TERMINATE_TIMEOUT + KILL_REAP_TIMEOUT)

    def _tear(self, reason: str) -> None:
        """Half a message is on stdin: close the transport (``reason`` says why to every later
        call), and end the server on another thread, at once (it is not reading: the end of
        its input would tell it nothing), so the writer returns at its deadline."""
        closer = threading.Thread(target=self._end_server, args=(0.0, TORN_TERMINATE_TIMEOUT),
                                  name="mcpclient-closer", daemon=True)
        self._stop(reason, closer)

    def _stop(self, reason: str, closer: threading.Thread | None = None) -> bool:
        """Mark the transport closed, once (False after that), and wake a read waiting for
        stdout; ``closer``, if given, is started to end the server."""
        with self._close_lock:
            if self._closed:
                return False
            self._closed = self._stopped = True
            self._close_reason = reason
            if closer is not None:
                self._closer = closer
                closer.start()
        if os.getpid() == self._owner:  # (a forked child's pipes are the parent's)
            self._pipes.wake()
        return True

    def _end_server(self, grace: float, terminate: float = TERMINATE_TIMEOUT) -> None:
        """Let the server exit within ``grace`` of the end of its input, then ask its process
        tree to end (SIGTERM to its group; CTRL_BREAK on Windows), and kill the tree
        ``terminate`` later."""
        proc = self._proc
        if os.getpid() != self._owner:
            # A forked child: the server is the parent's. Drop our copy of its stdin (so it still
            # sees EOF when the parent closes), but not stdout or stderr, whose buffer locks the
            # parent's reader threads held at fork time and would hold here forever.
            self._pipes.drop_in_child()
            return
        self._pipes.stop_writes()  # (a write in progress closes stdin once out of it)
        if not wait(proc, grace):
            self._tree.terminate()
            if not wait(proc, terminate):
                self._tree.kill()
                if not wait(proc, KILL_REAP_TIMEOUT):
                    log.warning("server process %d did not die after SIGKILL", proc.pid)
        # Whatever the leader left in its tree (grandchildren) goes too.
        self._tree.kill()
        self._tree.release()
        if not self._reading:  # else the reader closes it on its way out
            self._close_stdout()

    def _close_stdout(self) -> None:
        """Release stdout and what reads wait on with it, once."""
        with self._close_lock:
            if self._stdout_closed:
                return
            self._stdout_closed = True
        self._pipes.close_stdout()


def _may_be_json(line: bytearray) -> bool:
    """Whether a line may be a JSON-RPC message (an object or a batch), by its first non-blank."""
    start = _line_start(line).end()  # type: ignore[union-attr]  # (always matches)
    return start == len(line) or line[start] in b"{["


def _merge_env(env: Mapping[str, str] | Iterable[str] | None) -> dict[str, str] | None:
    if env is None:
        return None
    merged = dict(os.environ)
    if isinstance(env, Mapping):
        merged.update({str(k): str(v) for k, v in env.items()})
    else:
        for entry in env:
            key, sep, value = entry.partition("=")
            if not sep or not key:
                raise ValueError(f"env entries must look like KEY=value, got {entry!r}")
            merged[key] = value
    return merged


def _config_digest(cmd: list[str], env: dict[str, str] | None, cwd: str | os.PathLike[str] | None) -> str:
    """A digest of how the server is started (hashed: the environment may hold secrets)."""
    config = json.dumps([cmd, sorted(env.items()) if env is not None else None,
                         os.fspath(cwd) if cwd is not None else None])
    import hashlib  # here, when a server starts: not a cost of `import mcpclient`

    return hashlib.sha256(config.encode("utf-8", "surrogateescape")).hexdigest()


class _Stderr(SideOutput):
    """A stdio server's stderr as its side output (``About.side_output``)."""

    def __init__(self, lines: StderrLines, proc: subprocess.Popen[bytes], credentials: Credentials) -> None:
        self._lines, self._proc, self._credentials = lines, proc, credentials

    def hold(self) -> None:
        self._lines.hold()

    def release(self, refused: str | None = None) -> None:
        if refused is not None:  # its complaint was written before the refusal: read it first
            stderr_drained(self._proc, self._lines, SIDE_DRAIN_TIMEOUT)
        self._lines.release(refused)

    def last_words(self) -> str:
        return self._credentials.redactor.redact("\n".join(self._lines.tail(LAST_WORDS_LINES)))
