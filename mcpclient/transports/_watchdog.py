"""Stdio servers must not outlive the process that started them, however it ends.

A server that exits on EOF of its stdin dies with us anyway; this is for the others (servers
that ignore EOF, or that left grandchildren behind). The first ``StdioTransport`` of a process
starts one small watchdog process: this Python, in its own session, reading a pipe from us.
Each transport registers its server's process group when it starts and unregisters it once
closed. When our process ends, even by SIGKILL, the kernel closes our end of the pipe; the
watchdog reads EOF, then sends SIGTERM and, after a grace period, SIGKILL to every group still
registered.

Why not ``prctl(PR_SET_PDEATHSIG)``: it must run in the child between fork and exec
(``preexec_fn``, which can deadlock a threaded program), and the signal fires when the *thread*
that started the child exits, so a server started from a short-lived worker thread would be
killed with that thread. The watchdog has neither problem and costs one process per client
process (POSIX only; elsewhere this module does nothing).
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import sys
import threading

__all__ = ["forget", "pid", "watch"]

log = logging.getLogger(__name__)

#: Seconds between the watchdog's SIGTERM and its SIGKILL.
TERM_GRACE = 2.0

_SCRIPT = r"""
import os, signal, sys, time
groups = set()
for line in sys.stdin:
    op, pgid = line[:1], line[1:].strip()
    if pgid.isdigit():
        (groups.add if op == "+" else groups.discard)(int(pgid))

def signal_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
        return True
    except OSError:
        return False

alive = [g for g in groups if signal_group(g, signal.SIGTERM)]
end = time.monotonic() + float(sys.argv[1])
while alive and time.monotonic() < end:
    time.sleep(0.05)
    alive = [g for g in alive if signal_group(g, 0)]
for g in alive:
    signal_group(g, signal.SIGKILL)
"""

_lock = threading.Lock()
_proc: subprocess.Popen[bytes] | None = None
_owner: int | None = None  # the pid that started _proc: a forked child starts its own
_watched: set[int] = set()  # the groups registered and not forgotten (in _owner)
#: At interpreter exit, how long we wait for an idle watchdog to end once its pipe is closed.
EXIT_REAP_TIMEOUT = 0.5


def watch(pgid: int) -> None:
    """Have the server group ``pgid`` killed if this process dies before ``forget``."""
    _tell(f"+{pgid}\n")
    _watched.add(pgid)


def forget(pgid: int) -> None:
    """The group ``pgid`` is closed: do nothing about it any more."""
    _tell(f"-{pgid}\n")
    _watched.discard(pgid)


def pid() -> int | None:
    """The watchdog's pid in this process, if one was started."""
    return _proc.pid if _proc is not None and _owner == os.getpid() else None


def _tell(line: str) -> None:
    global _proc, _owner
    if not hasattr(os, "killpg") or not sys.executable:
        return
    with _lock:
        if _proc is None or _owner != os.getpid() or _proc.poll() is not None:
            if _owner != os.getpid():
                _watched.clear()  # a forked child: those are the parent's
            _proc, _owner = _start(), os.getpid()
        if _proc is None:
            return
        try:
            os.write(_proc.stdin.fileno(), line.encode())  # type: ignore[union-attr]
        except OSError as exc:  # the watchdog is gone or stuck: servers still die on EOF
            log.debug("could not reach the stdio watchdog: %s", exc)


def _start() -> subprocess.Popen[bytes] | None:
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _SCRIPT, str(TERM_GRACE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C meant for us must not stop it first
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        log.debug("could not start the stdio watchdog: %s", exc)
        return None
    os.set_blocking(proc.stdin.fileno(), False)  # type: ignore[union-attr]
    if _owner is None:  # the first watchdog of this interpreter
        atexit.register(_reap_at_exit)
    return proc


def _reap_at_exit() -> None:
    """At interpreter exit, with no server left to watch: end the watchdog's pipe and reap it,
    as the kernel would end it a moment later, so that the interpreter does not report it as a
    subprocess still running (a ResourceWarning) and its pipe as an unclosed file. With servers
    still registered (clients never closed) it is left to do its job when this process ends."""
    if not _lock.acquire(timeout=EXIT_REAP_TIMEOUT):  # (a daemon thread starting a server)
        return
    try:
        proc = _proc
        if proc is None or _owner != os.getpid() or _watched:
            return
        try:
            proc.stdin.close()  # type: ignore[union-attr]
            proc.wait(EXIT_REAP_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired):
            pass
    finally:
        _lock.release()
