"""How a stdio server's process tree is started apart and ended, per operating system.

The server is started so that it and whatever it starts can be ended together, and so that
they die with this process if it never closes them:

* POSIX (``GroupTree``): the server leads a process group of its own (a new session, so a
  Ctrl-C at the terminal reaches us, not it); ending it is SIGTERM to the group, then SIGKILL.
  The stdio watchdog (``_watchdog``) ends the groups left behind by a process that died.
* Windows (``JobTree``): the server starts in a new process group (``CREATE_NEW_PROCESS_GROUP``,
  so ``CTRL_BREAK_EVENT`` reaches it and not our console), inside a Job Object set to kill
  every process in it when its last handle closes (``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``):
  ending it is CTRL_BREAK, then ``TerminateJobObject``, and since we hold the only handle, the
  job dies with this process however it ends (Windows' equivalent of the watchdog). A process
  the server starts in the moment before it is assigned to the job escapes it (Popen cannot
  start it suspended). This class cannot run on the machines the tests run on: it is kept
  small, and type-checked.

The tree is chosen by the operating system alone; which pipes the transport reads is another
choice (``_stdio_pipes``).
"""

from __future__ import annotations

import abc
import logging
import os
import signal
import subprocess
import sys
from typing import Any

from . import _watchdog

__all__ = ["GroupTree", "JobTree", "ProcessTree", "for_this_system"]

log = logging.getLogger(__name__)


class ProcessTree(abc.ABC):
    """A started server's process and those it starts: how they are ended together."""

    @staticmethod
    @abc.abstractmethod
    def popen_options() -> dict[str, Any]:
        """The ``subprocess.Popen`` keywords that start the server apart from us."""

    @abc.abstractmethod
    def adopt(self, proc: subprocess.Popen[bytes]) -> None:
        """The server has started: from now on it dies with this process."""

    @abc.abstractmethod
    def terminate(self) -> None:
        """Ask the whole tree to end (SIGTERM, CTRL_BREAK)."""

    @abc.abstractmethod
    def kill(self) -> None:
        """End the whole tree now; never raises."""

    @abc.abstractmethod
    def release(self) -> None:
        """The tree is ended (or never started): forget it. Idempotent."""


class GroupTree(ProcessTree):
    """POSIX: the server's own process group, signalled as one, watched by the watchdog."""

    def __init__(self) -> None:
        self._pgid = -1

    @staticmethod
    def popen_options() -> dict[str, Any]:
        return {"start_new_session": True}

    def adopt(self, proc: subprocess.Popen[bytes]) -> None:
        self._pgid = proc.pid
        _watchdog.watch(proc.pid)

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(getattr(signal, "SIGKILL", signal.SIGTERM))

    def release(self) -> None:
        if self._pgid > 0:
            _watchdog.forget(self._pgid)
            self._pgid = -1

    def _signal(self, sig: int) -> None:
        if self._pgid <= 0:
            return
        try:
            os.killpg(self._pgid, sig)
        except OSError:  # gone already (ProcessLookupError), or not ours to signal
            pass


class JobTree(ProcessTree):  # pragma: no cover - Windows only: cannot run where the tests run
    """Windows: a new process group for CTRL_BREAK, in a Job Object that kills on close."""

    # JOBOBJECT_EXTENDED_LIMIT_INFORMATION, its class number and the kill-on-close flag.
    _EXTENDED_LIMIT_INFORMATION = 9
    _KILL_ON_JOB_CLOSE = 0x2000

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._job: int | None = None

    @staticmethod
    def popen_options() -> dict[str, Any]:
        return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)}

    def adopt(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc
        try:
            self._job = _create_kill_on_close_job()
            _assign(self._job, int(proc._handle))  # type: ignore[attr-defined]
        except OSError as exc:  # (a job the process already runs in may forbid nesting: Windows 7)
            log.warning("the server's processes will not die with this one (no Job Object: %s)", exc)
            self.release()

    def terminate(self) -> None:
        if self._proc is not None:
            try:
                self._proc.send_signal(getattr(signal, "CTRL_BREAK_EVENT", signal.SIGTERM))
            except OSError:
                pass

    def kill(self) -> None:
        if self._job is not None:
            _kernel32().TerminateJobObject(self._job, 1)
        elif self._proc is not None:
            try:
                self._proc.kill()
            except OSError:
                pass

    def release(self) -> None:
        job, self._job = self._job, None
        if job is not None:
            _kernel32().CloseHandle(job)  # kills what is left in it: kill-on-close


def _kernel32() -> Any:  # pragma: no cover - Windows only
    import ctypes

    return ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]


def _assign(job: int, process: int) -> None:  # pragma: no cover - Windows only
    import ctypes

    if not _kernel32().AssignProcessToJobObject(job, process):
        raise ctypes.WinError(ctypes.get_last_error())  # type: ignore[attr-defined,unused-ignore]


def _create_kill_on_close_job() -> int:  # pragma: no cover - Windows only
    """A new Job Object whose processes all die when its last handle is closed."""
    import ctypes
    from ctypes import wintypes

    class BasicLimits(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
            ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        ]

    class IoCounters(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint64) for name in (
            "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
            "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]

    class ExtendedLimits(ctypes.Structure):
        _fields_ = [
            ("BasicLimitInformation", BasicLimits), ("IoInfo", IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    kernel32 = _kernel32()
    kernel32.CreateJobObjectW.restype = wintypes.HANDLE
    job = kernel32.CreateJobObjectW(None, None)
    if not job:
        raise ctypes.WinError(ctypes.get_last_error())  # type: ignore[attr-defined,unused-ignore]
    limits = ExtendedLimits()
    limits.BasicLimitInformation.LimitFlags = JobTree._KILL_ON_JOB_CLOSE
    if not kernel32.SetInformationJobObject(job, JobTree._EXTENDED_LIMIT_INFORMATION,
                                            ctypes.byref(limits), ctypes.sizeof(limits)):
        error = ctypes.get_last_error()  # type: ignore[attr-defined,unused-ignore]
        kernel32.CloseHandle(job)
        raise ctypes.WinError(error)  # type: ignore[attr-defined,unused-ignore]
    return int(job)


def for_this_system() -> ProcessTree:
    """The process tree of this operating system."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        return JobTree()
    return GroupTree()
