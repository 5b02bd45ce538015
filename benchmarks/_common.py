"""What the benchmarks share: the echo loops, rate windows and the worker-process plumbing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
WORKER_TIMEOUT = 120.0

CallText = Callable[[str, "dict[str, Any]"], str]


class BenchFailure(Exception):
    """A client returned a wrong reply (or none)."""


def echo_loop(call_text: CallText, tag: str, end: float) -> int:
    """Call ``echo`` until ``end`` (perf_counter), checking every reply; return the count."""
    n = 0
    clock = time.perf_counter
    while clock() < end:
        text = f"{tag}-{n}"
        got = call_text("echo", {"text": text})
        if got != text:
            raise BenchFailure(f"echo {text!r} came back as {got[:100]!r}")
        n += 1
    return n


def sync_count(call_text: CallText, callers: int, window: float) -> tuple[int, float]:
    """(calls, seconds) of ``callers`` threads running ``echo_loop`` for ``window`` seconds."""
    if callers == 1:
        start = time.perf_counter()
        n = echo_loop(call_text, "s", start + window)
        return n, time.perf_counter() - start
    counts = [0] * callers
    errors: list[BaseException] = []
    barrier = threading.Barrier(callers + 1)
    box: list[float] = []

    def worker(i: int) -> None:
        barrier.wait()
        try:
            counts[i] = echo_loop(call_text, f"t{i}", box[0] + window)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(callers)]
    for thread in threads:
        thread.start()
    box.append(time.perf_counter())
    barrier.wait()
    for thread in threads:
        thread.join(WORKER_TIMEOUT)
    elapsed = time.perf_counter() - box[0]
    if errors:
        raise errors[0]
    return sum(counts), elapsed


def sync_rate(call_text: CallText, callers: int, window: float) -> float:
    """Calls per second of ``callers`` threads running ``echo_loop`` for ``window`` seconds."""
    n, elapsed = sync_count(call_text, callers, window)
    return n / elapsed


def sync_rate_cpu(call_text: CallText, callers: int, window: float) -> tuple[float, float]:
    """(calls per second, client CPU microseconds per call) of ``sync_count``.

    The CPU is ``time.process_time`` of this process, every thread of it (callers, reader)
    and none of the server's, which is another process: on a shared machine it is steadier
    than the rate, which also counts the time spent waiting for the other engineers' work.
    """
    cpu = time.process_time()
    n, elapsed = sync_count(call_text, callers, window)
    return n / elapsed, cpu_per_call(cpu, n)


def cpu_per_call(start: float, calls: int) -> float:
    """Microseconds of this process's CPU per call since ``process_time()`` was ``start``."""
    return (time.process_time() - start) / max(calls, 1) * 1e6


def check_big(text: str, size: int) -> None:
    if len(text) != size:
        raise BenchFailure(f"big result has {len(text)} characters, expected {size}")
    if text.count("x") != size:
        raise BenchFailure("big result is not all 'x'")


def mcpclient_root() -> str:
    """The directory holding the mcpclient this process would import (else the repository)."""
    import importlib.util

    spec = importlib.util.find_spec("mcpclient")
    return str(Path(spec.origin).parent.parent) if spec and spec.origin else str(REPO)


def child_env() -> dict[str, str]:
    """The environment of every child: it imports the same mcpclient as this process would."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (mcpclient_root(), env.get("PYTHONPATH", "")) if p)
    return env


def run_child(args: list[str], env: dict[str, str]) -> str:
    """Run ``python *args`` and return the last line it printed."""
    # ``python -c`` puts the working directory first on sys.path: run where our mcpclient is,
    # so that a copy named by PYTHONPATH is not shadowed by the one in the current directory.
    proc = subprocess.run(
        [sys.executable, *args],
        env=env,
        cwd=env["PYTHONPATH"].split(os.pathsep)[0],
        stdout=subprocess.PIPE,
        timeout=WORKER_TIMEOUT,
        text=True,
    )
    if proc.returncode != 0:
        raise BenchFailure(f"child {args[:2]} exited with code {proc.returncode}")
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise BenchFailure(f"child {args[:2]} printed nothing")
    return lines[-1]


def stop_server(proc: subprocess.Popen[str], *, terminate: bool = False, wait: float = 5.0) -> None:
    """Stop a server the benchmark started: close its stdin (a server run with
    ``--exit-on-eof`` ends there), terminate it if asked, wait, else kill it."""
    proc.stdin.close()  # type: ignore[union-attr]
    if terminate:
        proc.terminate()
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()  # type: ignore[union-attr]


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def innermost(exc: BaseException) -> BaseException:
    """The first leaf of an (anyio) exception group, else ``exc``."""
    while isinstance(getattr(exc, "exceptions", None), tuple) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


async def sdk_call_text(session: Any, name: str, arguments: dict[str, Any]) -> str:
    """Call a tool through the official SDK's ClientSession and return its joined text."""
    result = await session.call_tool(name, arguments)
    if result.is_error:
        raise BenchFailure(f"sdk: tool {name} failed: {result.content!r:.200}")
    return "".join(part.text for part in result.content if part.type == "text")


async def sdk_echo_loop(session: Any, tag: str, end: float) -> int:
    """The SDK's side of ``echo_loop``: distinct echoes until ``end``, each checked."""
    n = 0
    clock = time.perf_counter
    while clock() < end:
        text = f"{tag}-{n}"
        got = await sdk_call_text(session, "echo", {"text": text})
        if got != text:
            raise BenchFailure(f"echo {text!r} came back as {got[:100]!r}")
        n += 1
    return n


def target_lines(rows: list[tuple[Any, ...]], name_width: int, value_width: int) -> list[str]:
    """One report line per ``(name, value, shown, goal, ok)`` target row; ok None means unknown."""
    lines = []
    for name, _value, shown, goal, ok in rows:
        mark = "?" if ok is None else ("ok" if ok else "MISS")
        lines.append(f"  {name:<{name_width}}{shown:>{value_width}}   goal {goal:<9} {mark}")
    return lines
