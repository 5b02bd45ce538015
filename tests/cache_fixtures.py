"""Real parts for the cache-store tests: Debian's ``redis-server`` and the SDK cache server,
each on a free loopback port and killed afterwards."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

from tests.helpers import free_port, wait_for_port  # noqa: F401 (others import free_port from here)

ROOT = Path(__file__).resolve().parents[1]


def cli(*words: str) -> subprocess.CompletedProcess[str]:
    """A run of the real ``mcpclient`` command, in a child process (``--no-input -t 30``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "mcpclient", *words, "--no-input", "-t", "30"],
                          capture_output=True, text=True, env=env, cwd=str(ROOT), stdin=subprocess.DEVNULL,
                          timeout=90)


def redis_binary() -> str:
    """The redis-server binary; skips when it is missing, except in CI where that fails."""
    found = shutil.which("redis-server")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is missing in CI: .ci/run installs Debian's redis-server")
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    return found


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A redis-server on 127.0.0.1 with no persistence; (process, URL)."""
    port = free_port()
    proc = subprocess.Popen(
        [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--protected-mode", "yes"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, timeout=10, process=proc)
    except AssertionError:
        proc.kill()
        proc.wait(5)
        raise
    return proc, f"redis://127.0.0.1:{port}/0"


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(5)


@pytest.fixture
def redis_url() -> Iterator[str]:
    proc, url = start_redis()
    try:
        yield url
    finally:
        stop(proc)


class CacheServer:
    """tests/servers/sdk_cache_server.py, counting the requests it gets."""

    def __init__(self, *args: str) -> None:
        self.args = args

    def __enter__(self) -> CacheServer:
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "tests/servers/sdk_cache_server.py"), *self.args],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if not line.startswith("LISTENING "):
            stop(self.proc)
            raise AssertionError(f"the cache server did not start: {line!r}")
        self.url = line.split()[1]
        return self

    def counts(self) -> dict[str, int]:
        with urllib.request.urlopen(self.url.replace("/mcp", "/counts"), timeout=5) as response:
            counts: dict[str, int] = json.loads(response.read())
            return counts

    def __exit__(self, *exc_info: object) -> None:
        stop(self.proc)


class RecordingServer(CacheServer):
    """The cache server with ``--record``: what each request carried, as the server saw it
    (``records()``: ``{"method", "caller", "tag"}`` each)."""

    def __init__(self, folder: Path, *args: str) -> None:
        self.record = folder / "requests.jsonl"
        super().__init__("--record", str(self.record), *args)

    def records(self) -> list[dict[str, object]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line.endswith("}")]
