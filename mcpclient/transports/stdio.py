"""The stdio transport: a server child process speaking newline-delimited JSON-RPC."""

from __future__ import annotations

import collections
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any, Callable, Iterable, Mapping, Union

from .._exceptions import ConnectionClosed, TransportError
from . import _watchdog
from .base import NOTHING, Peer, Transport, decode_message, encode_message

__all__ = ["StdioTransport"]

log = logging.getLogger(__name__)

#: After stdin is closed, how long the server gets to exit on its own.
EXIT_GRACE_TIMEOUT = 2.0
#: After SIGTERM to the process group, how long before SIGKILL.
TERMINATE_TIMEOUT = 2.0
#: After SIGKILL, how long we wait to reap the process.
KILL_REAP_TIMEOUT = 2.0
#: When stdout ends, how long we wait for the exit code and the last stderr lines.
EXIT_REPORT_TIMEOUT = 0.5
#: Messages longer than this (in bytes) are logged and skipped rather than buffered forever.
MAX_MESSAGE_BYTES = 512 * 1024 * 1024
#: The most a single read from the server's stdout takes, in bytes: a pipe holds 64 KiB, and
#: a larger buffer would be allocated (and mapped) for every small message for nothing.
READ_SIZE = 1 << 16
#: While a write waits for room in a full pipe, how often it looks whether close() was called.
WRITE_WAIT_SLICE = 0.25
#: How many lines of the server's stderr are kept for error messages.
STDERR_TAIL_LINES = 20

StderrSink = Union[IO[str], logging.Logger, Callable[[str], None], None]

_DEFAULT_STDERR: Any = object()


class StdioTransport(Transport):
    """Launch ``cmd`` (an argv list, never run through a shell) and talk to it over its pipes.

    ``env`` entries (a mapping, or ``"KEY=value"`` strings as in the Go API) are added to the
    current environment. The child's stderr is read by a thread and forwarded line by line to
    ``stderr``: ``sys.stderr`` by default (written through Python, so it works in Jupyter), a
    ``logging.Logger``, any callable taking a line, or None to discard. The last lines are kept
    for error messages. The child runs in its own process group, and a watchdog ends it if
    this process dies without closing it.

    Messages have no size limit short of ``max_message_bytes`` (512 MiB): one longer than that
    is logged as an error and skipped, so a server that never ends a line cannot exhaust memory.

    Raises ``TransportError`` at once, with the reason, when the command cannot start.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A subclass that wraps send() or receive() (to record, say) keeps seeing every message:
        # unless it wraps their batched and inline twins too, or sets the flag itself, the
        # engine does not use them.
        super().__init_subclass__(**kwargs)
        own = vars(cls)
        if "send" in own and "write_frames" not in own and "batched_writes" not in own:
            cls.batched_writes = False
        if "receive" in own and "receive_within" not in own and "inline_reads" not in own:
            cls.inline_reads = False
        if "receive_within" in own and "spin_reads" not in own:  # it may not take spin
            cls.spin_reads = False

    def __init__(
        self,
        cmd: list[str] | tuple[str, ...],
        env: Mapping[str, str] | Iterable[str] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        stderr: StderrSink = _DEFAULT_STDERR,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        if isinstance(cmd, (str, bytes)) or not cmd:
            raise ValueError("cmd must be a non-empty list of arguments (no shell is used)")
        self.cmd = [os.fspath(part) for part in cmd]
        if env is not None and not isinstance(env, Mapping):
            env = list(env)  # read twice: now, and again by reopen()
        self._env_arg, self._cwd_arg, self._stderr_arg = env, cwd, stderr
        self._stderr_sink = sys.stderr if stderr is _DEFAULT_STDERR else stderr
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._closed = False
        self._close_lock = threading.Lock()
        self._reading = False
        self._writing = False  # a thread is in send() or write_frames(): see close()
        try:
            merged_env = _merge_env(env)
            self._proc = subprocess.Popen(
                self.cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=merged_env,
                cwd=cwd,
                start_new_session=True,
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            raise TransportError(f"cannot start {self.cmd[0]!r}: {exc}") from exc
        self._config = _config_digest(self.cmd, merged_env, cwd)
        self._owner = os.getpid()
        _watchdog.watch(self._proc.pid)  # the server dies with this process, however it ends
        assert self._proc.stdin and self._proc.stdout and self._proc.stderr
        self._stdin_fd = self._proc.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self._stdout = self._proc.stdout
        self._stdout_fd = self._stdout.fileno()
        self._partial = bytearray()  # the start of a line whose end has not arrived yet
        self._lines: collections.deque[bytes] = collections.deque()
        self.max_message_bytes = max_message_bytes
        self._skipping = False  # inside a message over the size limit, until its newline
        self._poller: Any = None  # what receive_within waits with
        if self.inline_reads:
            self._poller = select.poll()
            self._poller.register(self._stdout_fd, select.POLLIN)
        self._stderr_thread = threading.Thread(
            target=self._pump_stderr, name="mcpclient-stderr", daemon=True
        )
        self._stderr_thread.start()

    @property
    def server_key(self) -> tuple[str, str]:
        """Identifies the server configuration (command, added environment, working directory)
        for the client's per-server protocol-era cache, so later clients skip the probe."""
        return ("stdio", self._config)

    @property
    def peer(self) -> Peer:
        return Peer(network="pipe")

    def reopen(self) -> StdioTransport:
        """The same command started again, with the same environment, directory and stderr."""
        return StdioTransport(self.cmd, self._env_arg, cwd=self._cwd_arg, stderr=self._stderr_arg,
                              max_message_bytes=self.max_message_bytes)

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

    #: Writes of at most this many bytes to a pipe go out whole or not at all (POSIX).
    _ATOMIC_WRITE = getattr(select, "PIPE_BUF", 0)
    batched_writes = _ATOMIC_WRITE > 0

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        self._writing = True  # before looking at _closed: close() looks at it after setting _closed
        try:
            if self._closed:
                raise ConnectionClosed("the transport is closed")
            self._write(encode_message(message) + b"\n", timeout)
        finally:
            self._done_writing()

    def _done_writing(self) -> None:
        self._writing = False
        if self._closed:  # close() left stdin to us
            self._close_stdin()

    def _write(self, data: bytes, timeout: float | None) -> None:
        written = 0
        try:
            try:
                written = os.write(self._stdin_fd, data)  # the usual case: it all fits at once
                if written == len(data):
                    return
            except BlockingIOError:
                pass
            deadline = None if timeout is None else time.monotonic() + timeout
            view = memoryview(data)
            while written < len(view):
                try:
                    written += os.write(self._stdin_fd, view[written:])
                    continue
                except BlockingIOError:
                    pass
                if self._closed:  # close() came while we waited for room: stdin is ours to close
                    raise ConnectionClosed("the transport is closed")
                # The pipe is full: the server is not reading. Wait for room, within the deadline,
                # a slice at a time, so that close() ends the wait within a slice.
                left = None if deadline is None else deadline - time.monotonic()
                if left is None or left > 0:
                    _wait_writable(self._stdin_fd, WRITE_WAIT_SLICE if left is None else min(left, WRITE_WAIT_SLICE))
                    continue
                if written == 0:
                    raise TimeoutError("the server is not reading its stdin")
                # Half a message is on the pipe: the stream can never be valid again.
                self._writing = False
                self.close()
                raise ConnectionClosed("the server stopped reading its stdin mid-message")
        except TimeoutError:  # (an OSError, but not a failure of the pipe: nothing was written)
            raise
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise self._exit_error("the server closed its stdin") from exc
        except ValueError as exc:  # fd closed under us by close()
            raise ConnectionClosed("the transport is closed") from exc
        except OSError as exc:
            if self._closed:
                raise ConnectionClosed("the transport is closed") from exc
            raise TransportError(f"cannot write to the server: {exc}") from exc

    def frame(self, message: dict[str, Any]) -> bytes | None:
        data = encode_message(message) + b"\n"
        return data if len(data) <= self._ATOMIC_WRITE else None

    def write_frames(self, frames: list[bytes]) -> int:
        """Write whole frames, as many per system call as one atomic pipe write holds, until
        the pipe is full; how many went out (see ``Transport.write_frames``)."""
        self._writing = True  # as in send()
        try:
            return self._write_frames(frames)
        finally:
            self._done_writing()

    def _write_frames(self, frames: list[bytes]) -> int:
        limit, done, count = self._ATOMIC_WRITE, 0, len(frames)
        while done < count and not self._closed:
            end, size = done + 1, len(frames[done])
            while end < count and size + len(frames[end]) <= limit:
                size += len(frames[end])
                end += 1
            try:
                written = os.write(self._stdin_fd, frames[done] if end == done + 1 else b"".join(frames[done:end]))
            except (OSError, ValueError):  # full (BlockingIOError), broken or closed: for send to tell
                break
            if written != size:  # POSIX forbids it on a pipe; the stream would be broken
                log.error("a write of %d bytes to the server's stdin was cut short; closing", size)
                self._writing = False
                self.close()
                break
            done = end
        return done

    # -- receiving --------------------------------------------------------------------------

    inline_reads = hasattr(select, "poll")  # receive_within waits with poll()

    def receive(self) -> Any:
        return self._receive(None)

    spin_reads = inline_reads

    def receive_within(self, timeout: float, spin: float = 0.0) -> Any:
        return self._receive(time.monotonic() + timeout, spin)

    def _receive(self, deadline: float | None, spin: float = 0.0) -> Any:
        self._reading = True
        try:
            if self._closed:  # after setting _reading: close() looks at it after setting _closed
                raise ConnectionClosed("the transport is closed")
            lines = self._lines
            while True:
                if not lines:
                    if deadline is not None:
                        wait = deadline - time.monotonic()
                        if wait <= 0 or not self._readable(wait, spin):
                            return NOTHING
                        spin = 0.0  # once a call: the rest of a long message is waited for
                    if not self._read_chunk():
                        self._close_stdout()
                        raise self._exit_error("the server closed its stdout")
                    continue
                line = lines.popleft()
                if line and not line.isspace():  # (isspace stops at the first non-blank)
                    return decode_message(line)
        finally:
            self._reading = False

    def _readable(self, timeout: float, spin: float = 0.0) -> bool:
        """Wait until stdout has something to read (or has ended), for at most ``timeout``,
        the first ``spin`` seconds of it without sleeping."""
        poll = self._poller.poll
        if spin > 0.0:
            # A poll that does not wait, again and again: when the answer comes within
            # microseconds, the wake-up of a sleeping thread (and of an idle CPU) is saved.
            clock = time.perf_counter
            end = clock() + min(spin, timeout)
            while True:
                if poll(0):
                    return True
                if clock() >= end:
                    break
            timeout -= spin
            if timeout <= 0:
                return False
        # Rounded up: a poll that returns a hair before the deadline would only come back here.
        return bool(poll(int(timeout * 1000) + 1))

    def _read_chunk(self) -> bool:
        """Read what the pipe holds (up to 64 KiB at a time) into whole lines and a partial one;
        False at the end of the output.

        Large reads instead of ``readline()``'s 8 KiB ones: a 10 MB message takes a handful of
        system calls, and a partial line grows in place, so long lines cost linear time.
        """
        try:
            chunk = os.read(self._stdout_fd, READ_SIZE)
        except (OSError, ValueError) as exc:
            raise self._exit_error(f"cannot read from the server: {exc}") from exc
        if not chunk:  # end of output: a last message may lack its newline
            rest, self._partial = bytes(self._partial), bytearray()
            if not (rest.strip() and not self._skipping):
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
            self._partial += chunk
            if len(self._partial) > self.max_message_bytes:
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
            self._partial += chunk[:end]
            self._lines.extend(bytes(self._partial).split(b"\n"))
        else:
            self._lines.extend(chunk[:end].split(b"\n"))
        self._partial = bytearray(chunk[end + 1 :])
        return True

    def _exit_error(self, what: str) -> ConnectionClosed:
        if self._closed:
            return ConnectionClosed("the transport is closed")
        try:
            code = self._proc.wait(EXIT_REPORT_TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
        self._stderr_thread.join(EXIT_REPORT_TIMEOUT)
        if code is None:
            reason = f"{what} (the process is still running)"
        elif code < 0:
            reason = f"{what}: the server was killed by signal {_signal_name(-code)}"
        else:
            reason = f"{what}: the server exited with code {code}"
        return ConnectionClosed(reason, exit_code=code, stderr_tail="\n".join(self._stderr_tail))

    def _pump_stderr(self) -> None:
        stream = self._proc.stderr
        assert stream is not None
        sink = self._stderr_sink
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self._stderr_tail.append(line)
                if sink is None:
                    continue
                try:
                    if isinstance(sink, logging.Logger):
                        sink.info("%s", line)
                    elif callable(sink):
                        sink(line)
                    else:
                        sink.write(line + "\n")
                except Exception:  # a broken sink must not stop the draining
                    sink = None
        except (OSError, ValueError):
            pass
        finally:
            try:
                stream.close()
            except OSError:
                pass

    # -- closing ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close stdin, let the server exit, then terminate and kill its process group."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        proc = self._proc
        if os.getpid() != self._owner:
            # A forked child: the server is the parent's. Drop our copy of its stdin (so it still
            # sees EOF when the parent closes), but not stdout or stderr, whose buffer locks the
            # parent's reader threads held at fork time and would hold here forever.
            self._close_stdin()
            return
        if not self._writing:
            # Else the writer closes it once out of os.write: a descriptor closed under a write
            # waiting for room could be reused by the next file opened, and the rest of the
            # message would land there.
            self._close_stdin()
        if not _wait(proc, EXIT_GRACE_TIMEOUT):
            _signal_group(proc, signal.SIGTERM)
            if not _wait(proc, TERMINATE_TIMEOUT):
                _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
                if not _wait(proc, KILL_REAP_TIMEOUT):
                    log.warning("server process %d did not die after SIGKILL", proc.pid)
        # Whatever the leader left in its group (grandchildren) goes too.
        _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
        _watchdog.forget(proc.pid)
        if not self._reading:
            self._close_stdout()

    def _close_stdin(self) -> None:
        try:
            self._proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass

    def _close_stdout(self) -> None:
        try:
            self._stdout.close()
        except (OSError, ValueError):
            pass


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


def _wait_writable(fd: int, timeout: float | None) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    events = poller.poll(None if timeout is None else max(0, int(timeout * 1000)))
    return bool(events)


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    try:
        proc.wait(timeout)
        return True
    except subprocess.TimeoutExpired:
        return False


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, sig)
        else:  # pragma: no cover - Windows
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
