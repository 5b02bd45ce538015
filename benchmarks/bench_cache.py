"""What the result cache saves: a cached call vs an uncached one, per store (issue #29).

Usage::

    python benchmarks/bench_cache.py            # 5 interleaved rounds of 1 s per case
    python benchmarks/bench_cache.py --quick    # 2 rounds of 0.25 s
    python benchmarks/bench_cache.py --json     # the same, as JSON on stdout

One server for every case: ``tests/servers/sdk_cache_server.py`` (the official SDK's
``MCPServer`` over Streamable HTTP, stateless, the 2026-07-28 era), whose ``tools/list`` and
``server/discover`` are public for 60 s and whose ``resources/read`` of ``user://me`` is
private for 60 s. Cases, each timed in this process for a window, in interleaved rounds
whose order rotates (the machine is shared):

* ``list_tools()`` on one open client: ``uncached`` (``cache=False``: every call asks the
  server), ``memory`` (``MemoryStore``), ``file`` (``FileStore`` in a temporary directory)
  and ``redis`` (``RedisStore`` on a ``redis-server`` this script starts on a free loopback
  port; ``-`` when the binary is missing);
* ``read_resource("user://me")`` under ``cache_partition="alice"``: ``uncached`` and ``file``;
* opening a client and closing it: ``probe`` (no store: ``server/discover`` each time) and
  ``remembered`` (a ``FileStore`` holding the discover answer: nothing sent at opening).

Printed: the median operations per second (min-max in brackets) and the ratios, cached over
uncached and memory over the shared stores. The uncached figures are this server's: a request
on a kept-alive connection to it costs about 45 ms here, most of it a TCP delayed-ACK stall on
the server's side (a plain ``requests`` POST to it shows the same), so the cached/uncached
ratios are what a client of such a server saves, not a property of the client; the shared
stores' figures, and memory over them, are the client's own. Every answer is checked (the tool names, the
profile text); a wrong one exits 1. Speed is never asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, BenchFailure, ratio  # noqa: E402

if importlib.util.find_spec("mcpclient") is None:
    sys.path.insert(0, str(REPO))  # not installed: the one in this repository

from mcpclient import Client  # noqa: E402
from mcpclient.cache import CacheStore, FileStore, MemoryStore, RedisStore  # noqa: E402
from mcpclient.transports import StreamableHTTPTransport  # noqa: E402

SERVER = REPO / "tests" / "servers" / "sdk_cache_server.py"
PROFILES = {"full": {"rounds": 5, "window": 1.0}, "quick": {"rounds": 2, "window": 0.25}}
STORES = ("memory", "file", "redis")
CASES = (
    *(f"list/{kind}" for kind in ("uncached", *STORES)),
    "read/uncached", "read/file",
    "open/probe", "open/remembered",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = proc.stdout.readline().decode() if proc.stdout is not None else ""
    if not line.startswith("LISTENING "):
        stop(proc)
        raise BenchFailure(f"the cache server did not start (it printed {line!r})")
    return proc, line.split()[1]


def start_redis() -> tuple[subprocess.Popen[bytes] | None, str | None]:
    """A throw-away redis-server on 127.0.0.1 (no persistence), or (None, None) without one."""
    binary = shutil.which("redis-server")
    if binary is None:
        return None, None
    port = _free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 10
    while time.monotonic() < end and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    stop(proc)
    return None, None


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.kill()
    if proc is not None:
        proc.wait(5)


def rate(operation: Callable[[], None], window: float) -> float:
    """Operations per second of ``operation`` run back to back for ``window`` seconds."""
    operation()  # warm: fills the cache, opens the connection
    count, start = 0, time.perf_counter()
    end = start + window
    while time.perf_counter() < end:
        operation()
        count += 1
    return count / (time.perf_counter() - start)


class Bench:
    def __init__(self, url: str, stores: dict[str, CacheStore | None]) -> None:
        self.url = url
        self.stores = stores

    def client(self, store: CacheStore | None) -> Client:
        """A client for alice: with ``store`` (private results under her partition), or none."""
        options: dict[str, Any] = {"cache": store, "cache_partition": "alice"} if store is not None else {}
        return Client(StreamableHTTPTransport(self.url, headers={"X-User": "alice"}), timeout=10, **options)

    def case(self, name: str, window: float) -> float | None:
        group, kind = name.split("/")
        if group == "open":
            store = self.stores["file"] if kind == "remembered" else None

            def open_close() -> None:
                with self.client(store) as client:
                    if client.server_info.name != "cache-test":
                        raise BenchFailure(f"the server is {client.server_info.name!r}")
            return rate(open_close, window)
        store = None if kind == "uncached" else self.stores[kind]
        if kind != "uncached" and store is None:
            return None  # no redis-server here
        with self.client(store) as client:
            if group == "list":
                def list_tools() -> None:
                    if [tool.name for tool in client.list_tools()] != ["echo"]:
                        raise BenchFailure("list_tools() gave the wrong tools")
                return rate(list_tools, window)

            def read() -> None:
                if client.read_resource("user://me")[0].text != "the profile of alice":
                    raise BenchFailure("read_resource() gave the wrong profile")
            return rate(read, window)


def run(profile: dict[str, Any], log: Callable[[str], None]) -> dict[str, Any]:
    rounds, window = profile["rounds"], profile["window"]
    samples: dict[str, list[float]] = {name: [] for name in CASES}
    failures: list[str] = []
    server, url = start_server()
    redis_proc, redis_url = start_redis()
    folder = tempfile.mkdtemp(prefix="mcpclient-bench-cache-")
    stores: dict[str, CacheStore | None] = {"memory": MemoryStore(), "file": FileStore(Path(folder) / "store"),
                                            "redis": RedisStore(redis_url) if redis_url else None}
    try:
        bench = Bench(url, stores)
        for number in range(rounds):
            order = CASES[number % len(CASES):] + CASES[:number % len(CASES)]
            for name in order:
                log(f"round {number + 1}/{rounds}: {name}")
                try:
                    value = bench.case(name, window)
                except (BenchFailure, OSError) as exc:
                    failures.append(f"{name}: {exc}")
                    continue
                if value is not None:
                    samples[name].append(value)
    finally:
        for store in stores.values():
            if store is not None:
                store.close()
        stop(redis_proc)
        stop(server)
        shutil.rmtree(folder, ignore_errors=True)
    medians = {name: statistics.median(values) if values else None for name, values in samples.items()}
    spread = {name: (min(values), max(values)) if values else None for name, values in samples.items()}
    m = medians
    ratios = {
        **{f"list {kind}/uncached": ratio(m[f"list/{kind}"], m["list/uncached"]) for kind in STORES},
        "read file/uncached": ratio(m["read/file"], m["read/uncached"]),
        "open remembered/probe": ratio(m["open/remembered"], m["open/probe"]),
        "list memory/file": ratio(m["list/memory"], m["list/file"]),
        "list memory/redis": ratio(m["list/memory"], m["list/redis"]),
    }
    return {"rounds": rounds, "window_s": window, "redis": redis_url is not None, "per_s": medians,
            "spread": spread, "ratios": ratios, "failures": failures}


def report(results: dict[str, Any]) -> str:
    def cell(name: str) -> str:
        value, span = results["per_s"][name], results["spread"][name]
        if value is None:
            return f"{name:<18}{'-':>12}"
        return f"{name:<18}{value:>12.0f}  ({span[0]:.0f}-{span[1]:.0f})"

    lines = [f"operations per second, median of {results['rounds']} rounds of {results['window_s']:g} s",
             *(cell(name) for name in CASES), "", "ratios"]
    lines += [f"  {name:<24}{value:>10.1f}x" if value is not None else f"  {name:<24}{'-':>11}"
              for name, value in results["ratios"].items()]
    lines += [f"FAILED {failure}" for failure in results["failures"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds of 0.25 s per case")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (progress on stderr)")
    args = parser.parse_args(argv)
    results = run(PROFILES["quick" if args.quick else "full"], lambda msg: print(msg, file=sys.stderr, flush=True))
    print(json.dumps(results) if args.json else report(results))
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
