"""map_tool vs a hand-written thread pool vs the official SDK with asyncio.gather (issue #33).

Usage::

    python benchmarks/bench_map.py            # 5 interleaved rounds of 4000 calls each
    python benchmarks/bench_map.py --quick    # 2 rounds of 800 calls
    python benchmarks/bench_map.py --json     # the same, as JSON on stdout

The same job for each, at the same concurrency (8): ``echo`` called once for each of N distinct
texts on ``tests/servers/fast_server.py`` (standard library only, so the figures are the
clients' cost), every reply checked against what was sent.

* ``map_tool``: ``client.map_tool("echo", rows, concurrency=8)`` on one ``Client``;
* ``threadpool``: ``ThreadPoolExecutor(8).map`` of ``client.call_tool`` on one ``Client``;
* ``sdk``: ``mcp``'s ``stdio_client`` + ``ClientSession``, N tasks under an
  ``asyncio.Semaphore(8)``, run with ``asyncio.gather``.

Each client runs in a fresh worker process per round (so one's imports and heap never slow
another's); the rounds are interleaved and their order rotates, because the machine is shared.
Printed: the median calls per second and client CPU microseconds per call (``process_time`` of
the worker: every thread of the client, none of the server's), min-max in brackets, and the
ratios. Speed is never asserted; a wrong reply exits 1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, BenchFailure, child_env, ratio, run_child  # noqa: E402

SERVER = [sys.executable, str(REPO / "tests" / "servers" / "fast_server.py")]
CLIENTS = ("map_tool", "threadpool", "sdk")
CONCURRENCY = 8
WARM_UP = 200


def _texts(n: int, tag: str) -> list[str]:
    return [f"{tag}-{i}" for i in range(n)]


def _check(got: list[str], sent: list[str]) -> None:
    if got != sent:
        wrong = next(i for i, (a, b) in enumerate(zip(got, sent)) if a != b) if len(got) == len(sent) else len(got)
        raise BenchFailure(f"reply {wrong} is wrong (or missing): {len(got)} replies for {len(sent)} calls")


def _mcpclient_round(kind: str, calls: int) -> dict[str, float]:
    from concurrent.futures import ThreadPoolExecutor

    from mcpclient import Client, StdioTransport

    with Client(StdioTransport(SERVER)) as client:
        def run(texts: list[str]) -> list[str]:
            if kind == "map_tool":
                rows = ({"text": text} for text in texts)
                return [result.text for result in client.map_tool("echo", rows, concurrency=CONCURRENCY)]  # type: ignore[union-attr]
            with ThreadPoolExecutor(CONCURRENCY) as pool:
                return list(pool.map(lambda text: client.call_tool("echo", {"text": text}).text, texts))

        run(_texts(WARM_UP, "w"))
        sent = _texts(calls, "m")
        cpu, start = time.process_time(), time.perf_counter()
        got = run(sent)
        elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    _check(got, sent)
    return {"rate": calls / elapsed, "cpu_us": used / calls * 1e6}


def _sdk_round(calls: int) -> dict[str, float]:
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> dict[str, float]:
        params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            gate = asyncio.Semaphore(CONCURRENCY)

            async def one(text: str) -> str:
                async with gate:
                    result = await session.call_tool("echo", {"text": text})
                return "".join(part.text for part in result.content if part.type == "text")

            await asyncio.gather(*(one(text) for text in _texts(WARM_UP, "w")))
            sent = _texts(calls, "m")
            cpu, start = time.process_time(), time.perf_counter()
            got = list(await asyncio.gather(*(one(text) for text in sent)))
            elapsed, used = time.perf_counter() - start, time.process_time() - cpu
        _check(got, sent)
        return {"rate": calls / elapsed, "cpu_us": used / calls * 1e6}

    return asyncio.run(main())


def worker_main(kind: str, calls: int) -> int:
    result = _sdk_round(calls) if kind == "sdk" else _mcpclient_round(kind, calls)
    print(json.dumps(result))
    return 0


def run(rounds: int, calls: int, log: Any) -> dict[str, Any]:
    env = child_env()
    samples: dict[str, list[dict[str, float]]] = {kind: [] for kind in CLIENTS}
    failures: list[str] = []
    for number in range(rounds):
        order = CLIENTS[number % len(CLIENTS):] + CLIENTS[:number % len(CLIENTS)]
        for kind in order:
            log(f"round {number + 1}/{rounds}: {kind}")
            try:
                line = run_child([str(Path(__file__).resolve()), "--worker", kind, "--calls", str(calls)], env)
                samples[kind].append(json.loads(line))
            except (BenchFailure, ValueError) as exc:
                failures.append(f"{kind}: {exc}")
    medians: dict[str, dict[str, float | None]] = {}
    spread: dict[str, dict[str, tuple[float, float] | None]] = {}
    for kind, rows in samples.items():
        medians[kind] = {key: statistics.median(r[key] for r in rows) if rows else None for key in ("rate", "cpu_us")}
        spread[kind] = {key: (min(r[key] for r in rows), max(r[key] for r in rows)) if rows else None
                        for key in ("rate", "cpu_us")}
    m, p, s = medians["map_tool"], medians["threadpool"], medians["sdk"]
    ratios = {
        "rate map/threadpool": ratio(m["rate"], p["rate"]), "rate map/sdk": ratio(m["rate"], s["rate"]),
        "cpu threadpool/map": ratio(p["cpu_us"], m["cpu_us"]), "cpu sdk/map": ratio(s["cpu_us"], m["cpu_us"]),
    }
    return {"calls": calls, "rounds": rounds, "concurrency": CONCURRENCY, "medians": medians, "spread": spread,
            "ratios": ratios, "failures": failures}


def report(results: dict[str, Any]) -> str:
    def cell(kind: str, key: str, fmt: str) -> str:
        value, span = results["medians"][kind][key], results["spread"][kind][key]
        if value is None:
            return f"{'-':>22}"
        return f"{value:{fmt}} ({span[0]:{fmt}}-{span[1]:{fmt}})".rjust(22)

    def shown(value: float | None) -> str:
        return f"{value:.2f}x" if value is not None else "-"

    r = results["ratios"]
    head = f"{'':<14}" + "".join(f"{kind:>22}" for kind in CLIENTS)
    lines = [
        f"{results['calls']} echo calls at concurrency {results['concurrency']}, median of {results['rounds']} rounds",
        head + f"{'map/pool':>10}{'map/sdk':>10}",
        f"{'calls/s':<14}" + "".join(cell(kind, "rate", ".0f") for kind in CLIENTS)
        + f"{shown(r['rate map/threadpool']):>10}{shown(r['rate map/sdk']):>10}",
        head + f"{'pool/map':>10}{'sdk/map':>10}",
        f"{'CPU us/call':<14}" + "".join(cell(kind, "cpu_us", ".1f") for kind in CLIENTS)
        + f"{shown(r['cpu threadpool/map']):>10}{shown(r['cpu sdk/map']):>10}",
    ]
    lines += [f"FAILED {failure}" for failure in results["failures"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds of 800 calls")
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (progress on stderr)")
    parser.add_argument("--worker", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=None)
    args = parser.parse_args(argv)
    calls = args.calls or (800 if args.quick else 4000)
    if args.worker:
        return worker_main(args.worker, calls)
    results = run(2 if args.quick else 5, calls, lambda msg: print(msg, file=sys.stderr, flush=True))
    print(json.dumps(results) if args.json else report(results))
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
