"""map_tool vs the official SDK with asyncio.gather, on two servers and three concurrencies (issues #33, #46).

Usage::

    python benchmarks/bench_map.py            # 3 interleaved rounds of 2000 calls per concurrency
    python benchmarks/bench_map.py --quick    # 1 round of 100 calls
    python benchmarks/bench_map.py --json     # the same, as JSON on stdout (progress on stderr)

The same job for both clients: ``echo`` called once for each of N distinct texts, every reply
checked against what was sent, at concurrency 1, 8 and 32, on three setups:

* ``fast stdio``: ``tests/servers/fast_server.py``, a canned-reply server in the standard
  library (one ``json.loads`` and one ``json.dumps`` a message), so the client's cost shows;
* ``fast http``: ``benchmarks/fast_http_server.py --sse``, the same over Streamable HTTP (each
  reply a one-event SSE stream, as the SDK's server sends them);
* ``sdk stdio``: ``tests/servers/sdk_server.py``, the official SDK's own server (``MCPServer``);
* ``sdk http``: the same server over Streamable HTTP (``--transport streamable-http``).

The clients, on the handshake era both (the SDK's ``ClientSession.initialize``):

* ``map_tool``: ``client.map_tool("echo", rows, concurrency=C)`` on one mcpclient ``Client``;
* ``sdk``: ``mcp``'s ``ClientSession`` (``stdio_client`` or ``streamable_http_client``), N
  tasks under an ``asyncio.Semaphore(C)``, run with ``asyncio.gather``.

Each client and setup runs in a fresh worker process per round (with a fresh server), warms
up, then runs the three concurrencies in turn; the rounds are interleaved and their order
rotates, because the machine is shared. Printed per setup and concurrency: the median calls
per second of each client with min-max in brackets, their ratio, the client CPU microseconds
per call (``process_time`` of the worker: every thread of the client, none of the server's)
and how busy the server was (its CPU time over the wall time: 100% is one core, and a server
near it is what bounds the rate). Speed is never asserted; a wrong reply exits 1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, BenchFailure, child_env, ratio, run_child, stop_server  # noqa: E402

SERVERS = {
    "fast": [sys.executable, str(REPO / "tests" / "servers" / "fast_server.py")],
    "sdk": [sys.executable, str(REPO / "tests" / "servers" / "sdk_server.py")],
}
FAST_HTTP = REPO / "benchmarks" / "fast_http_server.py"
SETUPS = ("fast stdio", "fast http", "sdk stdio", "sdk http")
CLIENTS = ("map_tool", "sdk")
CONCURRENCIES = (1, 8, 32)
WARM_UP = 100
PROFILES = {"full": {"rounds": 3, "calls": 2000}, "quick": {"rounds": 1, "calls": 100}}


def _texts(n: int, tag: str) -> list[str]:
    return [f"{tag}-{i}" for i in range(n)]


def _check(got: list[str], sent: list[str]) -> None:
    if got != sent:
        wrong = next(i for i, (a, b) in enumerate(zip(got, sent)) if a != b) if len(got) == len(sent) else len(got)
        raise BenchFailure(f"reply {wrong} is wrong (or missing): {len(got)} replies for {len(sent)} calls")


class _Children:
    """The CPU time of this worker's child processes (the server, its own children), read
    from /proc while they run: the server of a stdio client is its child, and the worker
    starts the HTTP server itself. None where it cannot be read (no psutil)."""

    def __init__(self) -> None:
        try:
            import psutil
        except ImportError:
            self._me = None
        else:
            self._me = psutil.Process()

    def cpu(self) -> float | None:
        if self._me is None:
            return None
        total = 0.0
        for child in self._me.children(recursive=True):
            try:
                times = child.cpu_times()
            except Exception:  # it ended meanwhile
                continue
            total += times.user + times.system
        return total


class _Clock:
    """One measured batch: wall time, the client's CPU time and the server's, from start to
    ``done``."""

    def __init__(self, children: _Children) -> None:
        self._children = children
        self._server = children.cpu()
        self._cpu = time.process_time()
        self._start = time.perf_counter()

    def done(self, got: list[str], sent: list[str]) -> dict[str, Any]:
        elapsed, used = time.perf_counter() - self._start, time.process_time() - self._cpu
        server = self._children.cpu()
        _check(got, sent)
        busy = None if server is None or self._server is None else (server - self._server) / elapsed
        return {"rate": len(sent) / elapsed, "cpu_us": used / len(sent) * 1e6, "server_busy": busy}


class _HTTPServer:
    """A server over Streamable HTTP on a free loopback port, started by the worker: the
    SDK's (``LISTENING <url>``) or ``benchmarks/fast_http_server.py`` (``<url>``)."""

    def __init__(self, name: str) -> None:
        command = ([*SERVERS["sdk"], "--transport", "streamable-http", "--port", "0"] if name == "sdk"
                   else [sys.executable, str(FAST_HTTP), "--sse", "--exit-on-eof"])
        self._proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True)
        line = self._proc.stdout.readline().strip()  # type: ignore[union-attr]
        self.url = line.split()[-1] if line else ""
        if not self.url.startswith("http://"):
            self.close()
            raise BenchFailure(f"the {name} server did not start (it printed {line!r})")

    def close(self) -> None:
        stop_server(self._proc, terminate=True, wait=10)


def _mcpclient_worker(setup: str, calls: int) -> dict[str, Any]:
    from mcpclient import connect

    server_name, transport = setup.split()
    http = _HTTPServer(server_name) if transport == "http" else None
    options: dict[str, Any] = {"protocol": "legacy", "timeout": 60}
    if http is None:
        options["stderr"] = None
    try:
        with connect(http.url if http is not None else SERVERS[server_name], **options) as client:
            def run(texts: list[str], concurrency: int) -> list[str]:
                rows = ({"text": text} for text in texts)
                return [r.text for r in client.map_tool("echo", rows, concurrency=concurrency)]  # type: ignore[union-attr]

            run(_texts(WARM_UP, "w"), 8)
            children = _Children()
            results: dict[str, Any] = {}
            for concurrency in CONCURRENCIES:
                sent = _texts(calls, f"c{concurrency}")
                clock = _Clock(children)
                results[str(concurrency)] = clock.done(run(sent, concurrency), sent)
            results["protocol"] = client.protocol_version
            return results
    finally:
        if http is not None:
            http.close()


def _sdk_worker(setup: str, calls: int) -> dict[str, Any]:
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    server_name, transport = setup.split()
    http = _HTTPServer(server_name) if transport == "http" else None

    async def main() -> dict[str, Any]:
        if http is not None:
            streams = streamable_http_client(http.url)
        else:
            command = SERVERS[server_name]
            streams = stdio_client(StdioServerParameters(command=command[0], args=command[1:]))
        async with streams as pair:
            read, write = pair[0], pair[1]
            async with ClientSession(read, write) as session:
                initialized = await session.initialize()

                async def run(texts: list[str], concurrency: int) -> list[str]:
                    gate = asyncio.Semaphore(concurrency)

                    async def one(text: str) -> str:
                        async with gate:
                            result = await session.call_tool("echo", {"text": text})
                        return "".join(part.text for part in result.content if part.type == "text")

                    return list(await asyncio.gather(*(one(text) for text in texts)))

                await run(_texts(WARM_UP, "w"), 8)
                children = _Children()
                results: dict[str, Any] = {}
                for concurrency in CONCURRENCIES:
                    sent = _texts(calls, f"c{concurrency}")
                    clock = _Clock(children)
                    results[str(concurrency)] = clock.done(await run(sent, concurrency), sent)
                results["protocol"] = initialized.protocol_version
                return results

    try:
        return asyncio.run(main())
    finally:
        if http is not None:
            http.close()


def worker_main(kind: str, setup: str, calls: int) -> int:
    result = _sdk_worker(setup, calls) if kind == "sdk" else _mcpclient_worker(setup, calls)
    print(json.dumps(result))
    return 0


def _summary(rows: list[float | None]) -> dict[str, Any]:
    values = [v for v in rows if v is not None]
    if not values:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def run(rounds: int, calls: int, log: Callable[[str], None]) -> dict[str, Any]:
    env = child_env()
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {s: {k: [] for k in CLIENTS} for s in SETUPS}
    failures: list[str] = []
    protocols: dict[str, dict[str, str]] = {s: {} for s in SETUPS}
    started = time.monotonic()
    for number in range(rounds):
        for index, setup in enumerate(SETUPS):
            turn = (number + index) % len(CLIENTS)
            for kind in CLIENTS[turn:] + CLIENTS[:turn]:
                log(f"round {number + 1}/{rounds}: {setup}: {kind}")
                try:
                    line = run_child([str(Path(__file__).resolve()), "--worker", kind, "--setup", setup,
                                      "--calls", str(calls)], env)
                    sample = json.loads(line)
                except (BenchFailure, ValueError, subprocess.TimeoutExpired) as exc:
                    failures.append(f"{setup}: {kind}: {exc}")
                    continue
                protocols[setup][kind] = sample.pop("protocol")
                samples[setup][kind].append(sample)
    table: dict[str, dict[str, Any]] = {}
    for setup in SETUPS:
        table[setup] = {}
        for concurrency in CONCURRENCIES:
            cell: dict[str, Any] = {}
            for kind in CLIENTS:
                rows = [sample[str(concurrency)] for sample in samples[setup][kind]]
                cell[kind] = {key: _summary([r[key] for r in rows]) for key in ("rate", "cpu_us", "server_busy")}
            cell["rate map/sdk"] = ratio(cell["map_tool"]["rate"]["median"], cell["sdk"]["rate"]["median"])
            cell["cpu sdk/map"] = ratio(cell["sdk"]["cpu_us"]["median"], cell["map_tool"]["cpu_us"]["median"])
            table[setup][str(concurrency)] = cell
    return {"rounds": rounds, "calls": calls, "concurrencies": list(CONCURRENCIES), "table": table,
            "protocols": protocols, "seconds": round(time.monotonic() - started, 1), "failures": failures}


def report(results: dict[str, Any]) -> str:
    def rate(s: dict[str, Any]) -> str:
        if s["median"] is None:
            return f"{'-':>19}"
        return f"{s['median']:.0f} ({s['min']:.0f}-{s['max']:.0f})".rjust(19)

    def num(value: float | None, fmt: str, suffix: str = "") -> str:
        return "-" if value is None else f"{value:{fmt}}{suffix}"

    def busy(s: dict[str, Any]) -> str:
        return "-" if s["median"] is None else f"{s['median'] * 100:.0f}%"

    lines = [f"{results['calls']} echo calls per concurrency, median of {results['rounds']} rounds (min-max); "
             f"client CPU per call; server busy (100% = one core)"]
    head = (f"{'setup':<11}{'conc':>5}{'map_tool calls/s':>19}{'sdk calls/s':>19}{'map/sdk':>9}"
            f"{'CPU us/call map':>16}{'sdk':>8}{'sdk/map':>9}{'server busy map':>17}{'sdk':>6}")
    lines.append(head)
    for setup in SETUPS:
        for concurrency in results["concurrencies"]:
            cell = results["table"][setup][str(concurrency)]
            m, s = cell["map_tool"], cell["sdk"]
            lines.append(
                f"{setup:<11}{concurrency:>5}{rate(m['rate'])}{rate(s['rate'])}"
                f"{num(cell['rate map/sdk'], '.2f', 'x'):>9}"
                f"{num(m['cpu_us']['median'], '.0f'):>16}{num(s['cpu_us']['median'], '.0f'):>8}"
                f"{num(cell['cpu sdk/map'], '.2f', 'x'):>9}{busy(m['server_busy']):>17}{busy(s['server_busy']):>6}"
            )
    versions = {version for kinds in results["protocols"].values() for version in kinds.values()}
    shown = (f"protocol {versions.pop()} for every setup and client" if len(versions) == 1 else
             "protocols: " + ", ".join(f"{setup} {kind} {version}" for setup, kinds in results["protocols"].items()
                                       for kind, version in kinds.items()))
    lines.append(f"{shown}; {results['seconds']:.0f} s in all")
    lines += [f"FAILED {failure}" for failure in results["failures"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round of 100 calls per concurrency")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (progress on stderr)")
    parser.add_argument("--worker", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--setup", choices=SETUPS, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv)
    profile = PROFILES["quick" if args.quick else "full"]
    calls = args.calls or profile["calls"]
    if args.worker:
        return worker_main(args.worker, args.setup, calls)
    results = run(args.rounds or profile["rounds"], calls, lambda msg: print(msg, file=sys.stderr, flush=True))
    print(json.dumps(results) if args.json else report(results))
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
