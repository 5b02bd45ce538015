"""Run gunicorn (or any WSGI server process) on 127.0.0.1 and load it from threads."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence
from tests.helpers import free_port, wait_for_port
from tests.helpers import pid_alive as alive  # noqa: F401 (the web tests import these from here)
from tests.helpers import proc_children as children

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def mcp_servers(pid: int, script: str = "demo_server.py") -> set[int]:
    """The MCP servers ``pid`` started (its children running ``script``; not the watchdog)."""
    return {child for child in children(pid) if script in cmdline(child)}


def get(port: int, path: str, timeout: float = 10.0) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        return response.status, json.loads(body) if body.startswith(b"{") else {"raw": body.decode(errors="replace")}
    finally:
        conn.close()


def load(port: int, paths: Sequence[str], threads: int = 16,
         on_done: Callable[[int, tuple[int, dict[str, Any]]], None] | None = None) -> list[tuple[int, dict[str, Any]]]:
    """GET every path from ``threads`` threads; a request that fails raises (no hang: each
    has a 10 s timeout)."""
    def one(index: int) -> tuple[int, dict[str, Any]]:
        answer = get(port, paths[index])
        if on_done is not None:
            on_done(index, answer)
        return answer

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(one, range(len(paths))))


class Gunicorn:
    """``gunicorn`` serving ``app`` (module:variable under ``examples/``) on a free port."""

    def __init__(self, app: str, *options: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.args = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{self.port}",
                     "--pythonpath", str(EXAMPLES), "--graceful-timeout", "5", "--timeout", "30",
                     *options, app]
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Gunicorn:
        self.proc = subprocess.Popen(self.args, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        try:
            wait_for_port(self.port, timeout=30, process=self.proc)
        except AssertionError:
            if self.proc.poll() is not None:
                raise AssertionError(f"gunicorn exited: {self.proc.stderr.read().decode()[-2000:]}") from None  # type: ignore[union-attr]
            self.stop()
            raise
        return self

    def workers(self, count: int, timeout: float = 15.0) -> set[int]:
        assert self.proc is not None
        end = time.monotonic() + timeout
        while True:
            found = {pid for pid in children(self.proc.pid) if "gunicorn" in cmdline(pid)}
            if len(found) == count or time.monotonic() > end:
                return found
            time.sleep(0.05)

    def stop(self) -> str:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def iterate_until(predicate: Callable[[], Any], timeout: float = 5.0) -> Iterator[None]:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"not met within {timeout} s")
        yield
        time.sleep(0.05)
