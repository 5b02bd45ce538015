"""Run a function in a forked child, as a pre-fork server's worker would, with a deadline."""

from __future__ import annotations

import os
import signal
import time
from typing import Callable


def in_child(fn: Callable[[], str], timeout: float = 10.0) -> str:
    """Fork, run ``fn`` in the child, and return what it returned (or how it failed).

    A child still running after ``timeout`` seconds is killed and "HANG" is returned, so a
    hang in the child fails the test instead of hanging it.
    """
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        os.close(read)
        try:
            outcome = fn()
        except BaseException as exc:  # noqa: BLE001 - report anything to the parent
            outcome = f"raised {type(exc).__name__}: {exc}"
        try:
            os.write(write, outcome.encode()[:60000])
        finally:
            os._exit(0)
    os.close(write)
    end = time.monotonic() + timeout
    try:
        while True:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > end:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "HANG"
            time.sleep(0.01)
        chunks = []
        while chunk := os.read(read, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(read)
