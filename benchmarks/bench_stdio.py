"""Benchmark mcpclient against the official MCP SDK and a raw pipe client, over stdio.

Usage::

    python benchmarks/bench_stdio.py            # full run, about 2 minutes
    python benchmarks/bench_stdio.py --quick    # smoke run, about 25 seconds
    python benchmarks/bench_stdio.py --json     # machine-readable results on stdout

Every client talks to the same minimal canned-reply server (``tests/servers/fast_server.py``),
so what is measured is the client's own cost. Four clients are compared:

* ``mcpclient``: ``Client(StdioTransport(...))``, threads sharing one client;
* ``mcpclient-portable``: the same over the portable pipes (``pipes="portable"``: reader and
  writer threads, Windows' way; see docs/platforms.md);
* ``sdk``: the official SDK's ``stdio_client`` + ``ClientSession``, asyncio tasks sharing one
  session (``asyncio.gather``);
* ``raw``: the floor, a bare pipe client written below (one reader thread, ``json`` on both
  ends, a ``threading.Event`` per pending call), threads sharing one client.

What is measured:

1. sequential ``tools/call`` round trips per second, and the client's CPU per call;
2. calls per second with 8 and with 32 concurrent callers, and the client's CPU per call;
3. ``import`` time of each client, in fresh interpreters (best of several);
4. RSS of an idle connected client, in fresh interpreters (median of several);
5. the time to receive one 10 MB tool result (``big`` with ``size=10_000_000``).

Each measurement of 1, 2 and 5 runs in a fresh worker process per client and round (so one
client's imports and heap never slow another's), rounds are interleaved and rotated, and the
median is reported. Every reply is checked; the exit code is 1 if any client returned a wrong
reply or failed, 0 otherwise. Speed targets are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from _common import (
    REPO,
    BenchFailure,
    check_big,
    child_env,
    echo_loop,
    innermost,
    ratio,
    run_child,
    sdk_call_text,
    sdk_echo_loop,
    cpu_per_call,
    sync_rate_cpu,
    target_lines,
)

SERVER = REPO / "tests" / "servers" / "fast_server.py"
SERVER_CMD = [sys.executable, str(SERVER)]

CLIENTS = ("mcpclient", "mcpclient-portable", "sdk", "raw")
CONCURRENCY = (8, 32)
BIG_SIZE = 10_000_000
CALL_TIMEOUT = 60.0

MODES = ("sequential", *(f"concurrent_{n}" for n in CONCURRENCY))

#: The goals of issue #15 (after those of issue #2). Reported, never asserted.
TARGETS = {
    "sequential_vs_sdk": 2.5,
    "concurrent_8_vs_sdk": 3.0,
    "cpu_vs_floor_max": 1.15,  # client CPU per call, mcpclient / the floor
    "big_vs_floor_max": 1.15,  # a 10 MB result at the floor's speed
    "import_s": 0.120,
    "idle_rss_mb": 30.0,
    "big_speedup_vs_sdk": 10.0,
}

PROFILES = {
    # rounds, seconds per rate window, import samples, RSS samples
    "full": {"rounds": 7, "window": 1.0, "import_samples": 7, "rss_samples": 3},
    "quick": {"rounds": 2, "window": 0.3, "import_samples": 3, "rss_samples": 1},
}

IMPORT_CODE = {
    "mcpclient": "from mcpclient import Client, StdioTransport",
    "sdk": "from mcp import ClientSession, StdioServerParameters\nfrom mcp.client.stdio import stdio_client",
}

_RSS_READER = """
def _rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmRSS in /proc/self/status")
"""

RSS_CODE = {
    "python": _RSS_READER + "print(_rss_mb())\n",
    "mcpclient": _RSS_READER
    + """
import sys
from mcpclient import Client, StdioTransport
client = Client(StdioTransport([sys.executable, sys.argv[1]]))
client.initialize()
print(_rss_mb())
client.close()
""",
    "sdk": _RSS_READER
    + """
import asyncio, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.executable, args=[sys.argv[1]])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            print(_rss_mb())

asyncio.run(main())
""",
}


# -- the floor ------------------------------------------------------------------------------
# The design card's client with nothing else: one reader thread, a threading.Event per pending
# call, json on both ends, a write lock. No validation, no timeouts but one, no telemetry.


class _RawSlot:
    __slots__ = ("event", "reply")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reply: dict[str, Any] | None = None


class RawClient:
    """The least a thread-safe stdio JSON-RPC client can do: the floor to compare against."""

    def __init__(self, cmd: list[str]) -> None:
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._stdin = self._proc.stdin
        self._write_lock = threading.Lock()
        self._pending: dict[int, _RawSlot] = {}
        self._next_id = iter(range(1, 1 << 62)).__next__
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read_loop(self) -> None:
        loads = json.loads
        pending = self._pending
        for line in self._proc.stdout:  # type: ignore[union-attr]
            message = loads(line)
            slot = pending.pop(message.get("id"), None)
            if slot is not None:
                slot.reply = message
                slot.event.set()
        for slot in list(pending.values()):  # EOF: wake everyone
            slot.event.set()

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with self._write_lock:
            self._stdin.write(data)  # type: ignore[union-attr]
            self._stdin.flush()  # type: ignore[union-attr]

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = self._next_id()
        slot = _RawSlot()
        self._pending[request_id] = slot
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if not slot.event.wait(CALL_TIMEOUT) or slot.reply is None:
            self._pending.pop(request_id, None)
            raise BenchFailure(f"raw: no reply to {method}")
        if "result" not in slot.reply:
            raise BenchFailure(f"raw: error reply to {method}: {slot.reply!r:.200}")
        return slot.reply["result"]

    def call_text(self, name: str, arguments: dict[str, Any]) -> str:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise BenchFailure(f"raw: tool {name} failed: {result!r:.200}")
        return "".join(part["text"] for part in result["content"] if part.get("type") == "text")

    def close(self) -> None:
        self._stdin.close()  # type: ignore[union-attr]
        self._proc.wait(10)
        self._reader.join(10)
        self._proc.stdout.close()  # type: ignore[union-attr]


# -- thread-based drivers (mcpclient and raw) ------------------------------------------------


def _open_sync(client: str) -> tuple[Callable[[str, dict[str, Any]], str], Callable[[], None]]:
    """Return ``(call_text(name, arguments), close())`` for a connected, initialized client."""
    if client == "raw":
        raw = RawClient(SERVER_CMD)
        return raw.call_text, raw.close
    from mcpclient import Client, StdioTransport

    pipes = "portable" if client == "mcpclient-portable" else None
    mc = Client(StdioTransport(SERVER_CMD, pipes=pipes), timeout=CALL_TIMEOUT)
    mc.initialize()

    def call_text(name: str, arguments: dict[str, Any]) -> str:
        result = mc.call_tool(name, arguments)
        if result.is_error:
            raise BenchFailure(f"mcpclient: tool {name} failed: {result.text[:200]!r}")
        return result.text

    return call_text, mc.close


def _run_sync_round(client: str, window: float) -> dict[str, float]:
    call_text, close = _open_sync(client)
    try:
        echo_loop(call_text, "warm", time.perf_counter() + min(0.2, window))
        out: dict[str, float] = {}
        for mode, callers in zip(MODES, (1, *CONCURRENCY)):
            out[mode], out[f"cpu_{mode}"] = sync_rate_cpu(call_text, callers, window)
        if call_text("big", {"size": 10}) != "x" * 10:  # warm the path
            raise BenchFailure("big with size=10 did not return 10 'x'")
        start = time.perf_counter()
        text = call_text("big", {"size": BIG_SIZE})
        out["big_s"] = time.perf_counter() - start
        check_big(text, BIG_SIZE)
        return out
    finally:
        close()


# -- the official SDK (asyncio) --------------------------------------------------------------


def _run_sdk_round(window: float) -> dict[str, float]:
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    call_text, echo_loop = sdk_call_text, sdk_echo_loop

    async def rate(session: Any, callers: int) -> tuple[float, float]:
        cpu = time.process_time()
        start = time.perf_counter()
        end = start + window
        counts = await asyncio.gather(*(echo_loop(session, f"t{i}", end) for i in range(callers)))
        return sum(counts) / (time.perf_counter() - start), cpu_per_call(cpu, sum(counts))

    async def main() -> dict[str, float]:
        params = StdioServerParameters(command=SERVER_CMD[0], args=SERVER_CMD[1:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                # The first call of each tool also lists tools (output-schema cache): warm it.
                await echo_loop(session, "warm", time.perf_counter() + min(0.2, window))
                out: dict[str, float] = {}
                for mode, callers in zip(MODES, (1, *CONCURRENCY)):
                    out[mode], out[f"cpu_{mode}"] = await rate(session, callers)
                if await call_text(session, "big", {"size": 10}) != "x" * 10:  # lists tools once
                    raise BenchFailure("big with size=10 did not return 10 'x'")
                start = time.perf_counter()
                text = await call_text(session, "big", {"size": BIG_SIZE})
                out["big_s"] = time.perf_counter() - start
                check_big(text, BIG_SIZE)
                return out

    return asyncio.run(main())


def worker_main(client: str, window: float) -> int:
    """One round for one client, in this (fresh) process; prints a JSON object."""
    try:
        out: dict[str, Any] = _run_sdk_round(window) if client == "sdk" else _run_sync_round(client, window)
    except Exception as exc:
        exc = innermost(exc)  # anyio's groups
        out = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(out), flush=True)
    return 0


# -- the orchestrator ------------------------------------------------------------------------


def _measure_imports(
    samples: int, env: dict[str, str], failures: list[str], log: Callable[[str], None]
) -> dict:
    times: dict[str, list[float]] = {name: [] for name in IMPORT_CODE}
    # Timed as installed packages import: from cached bytecode (``pip install`` compiles it).
    # With PYTHONDONTWRITEBYTECODE set (as on CI machines) a source checkout would compile
    # every module on every run instead, some 60 ms of mcpclient's time that a user never
    # pays; a private cache directory, filled by one untimed import of each, keeps both sides
    # fair and leaves the checkout untouched.
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cache = tempfile.mkdtemp(prefix="bench-pycache-")
    env["PYTHONPYCACHEPREFIX"] = cache
    try:
        for name, statement in IMPORT_CODE.items():
            try:
                run_child(["-c", f"{statement}\nprint(0)"], env)
            except Exception as exc:
                failures.append(f"{name} import: {exc}")
        _time_imports(samples, env, times, failures)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    log("  import: " + ", ".join(f"{k} {min(v) * 1000:.0f} ms" for k, v in times.items() if v))
    return {name: min(v) for name, v in times.items() if v}


def _time_imports(samples: int, env: dict[str, str], times: dict[str, list[float]], failures: list[str]) -> None:
    for _ in range(samples):
        for name, statement in IMPORT_CODE.items():
            code = f"import time\nt0 = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t0)\n"
            try:
                times[name].append(float(run_child(["-c", code], env)))
            except Exception as exc:
                failures.append(f"{name} import: {exc}")


def _measure_rss(samples: int, env: dict[str, str], failures: list[str], log: Callable[[str], None]) -> dict:
    values: dict[str, list[float]] = {name: [] for name in RSS_CODE}
    for _ in range(samples):
        for name, code in RSS_CODE.items():
            try:
                values[name].append(float(run_child(["-c", code, str(SERVER)], env)))
            except Exception as exc:
                failures.append(f"{name} idle RSS: {exc}")
    log("  idle RSS: " + ", ".join(f"{k} {statistics.median(v):.1f} MB" for k, v in values.items() if v))
    return {name: statistics.median(v) for name, v in values.items() if v}


def run(profile: dict[str, Any], log: Callable[[str], None]) -> dict[str, Any]:
    env = child_env()
    failures: list[str] = []
    samples: dict[str, dict[str, list[float]]] = {c: {} for c in CLIENTS}
    started = time.perf_counter()
    for rnd in range(profile["rounds"]):
        order = CLIENTS[rnd % len(CLIENTS) :] + CLIENTS[: rnd % len(CLIENTS)]
        for client in order:
            args = [str(Path(__file__).resolve()), "--worker", client, "--window", str(profile["window"])]
            try:
                out = json.loads(run_child(args, env))
            except Exception as exc:
                out = {"error": str(exc)}
            if "error" in out:
                failures.append(f"{client} round {rnd + 1}: {out['error']}")
                continue
            for key, value in out.items():
                samples[client].setdefault(key, []).append(value)
        log(f"  round {rnd + 1}/{profile['rounds']} done ({time.perf_counter() - started:.0f}s)")

    imports = _measure_imports(profile["import_samples"], env, failures, log)
    rss = _measure_rss(profile["rss_samples"], env, failures, log)

    medians = {c: {k: statistics.median(v) for k, v in samples[c].items()} for c in CLIENTS}
    rates = {c: {k: v for k, v in medians[c].items() if k in MODES} for c in CLIENTS}
    cpu = {c: {k[4:]: v for k, v in medians[c].items() if k.startswith("cpu_")} for c in CLIENTS}
    big = {c: medians[c]["big_s"] for c in CLIENTS if "big_s" in medians[c]}
    return {
        "profile": {k: profile[k] for k in ("rounds", "window", "import_samples", "rss_samples")},
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "calls_per_s": rates,
        "cpu_us_per_call": cpu,
        "big_result_s": big,
        "import_s": imports,
        "idle_rss_mb": rss,
        "ratios": _ratios(rates, cpu, big, imports),
        "spread": {c: {k: [min(v), max(v)] for k, v in samples[c].items()} for c in CLIENTS},
        "elapsed_s": time.perf_counter() - started,
        "failures": failures,
    }


def _ratios(rates: dict, cpu: dict, big: dict, imports: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in MODES:
        mine = rates["mcpclient"].get(mode)
        out[mode] = {
            "mcpclient/sdk": ratio(mine, rates["sdk"].get(mode)),
            "mcpclient/raw": ratio(mine, rates["raw"].get(mode)),
            # CPU per call (lower is better): mcpclient's over the floor's, and the SDK's over ours
            "cpu_mcpclient/raw": ratio(cpu["mcpclient"].get(mode), cpu["raw"].get(mode)),
            "cpu_sdk/mcpclient": ratio(cpu["sdk"].get(mode), cpu["mcpclient"].get(mode)),
            # the portable pipes over the default ones (calls/s, and CPU per call)
            "portable/mcpclient": ratio(rates["mcpclient-portable"].get(mode), mine),
            "cpu_portable/mcpclient": ratio(cpu["mcpclient-portable"].get(mode), cpu["mcpclient"].get(mode)),
        }
    out["big_speedup_vs_sdk"] = ratio(big.get("sdk"), big.get("mcpclient"))
    out["big_mcpclient/raw"] = ratio(big.get("mcpclient"), big.get("raw"))
    out["big_portable/mcpclient"] = ratio(big.get("mcpclient-portable"), big.get("mcpclient"))
    out["import_speedup_vs_sdk"] = ratio(imports.get("sdk"), imports.get("mcpclient"))
    return out


def _target_rows(results: dict[str, Any]) -> list[tuple[str, float | None, str, str, bool | None]]:
    """(name, value, formatted value, goal, met) for each target of issue #15."""
    r = results["ratios"]

    def row(name: str, value: float | None, fmt: str, goal: str, ok: Callable[[float], bool]):
        shown = "n/a" if value is None else fmt.format(value)
        return (name, value, shown, goal, None if value is None else ok(value))

    cpu_max = TARGETS["cpu_vs_floor_max"]
    rows = []
    for mode in MODES:
        rows.append(
            row(
                f"CPU/call {mode} vs floor",
                r[mode]["cpu_mcpclient/raw"],
                "{:.2f}x",
                f"<= {cpu_max:.2f}x",
                lambda v: v <= cpu_max,
            )
        )
    rows += [
        row(
            "sequential vs SDK",
            r["sequential"]["mcpclient/sdk"],
            "{:.2f}x",
            f">= {TARGETS['sequential_vs_sdk']:.1f}x",
            lambda v: v >= TARGETS["sequential_vs_sdk"],
        ),
        row(
            "8 callers vs SDK",
            r["concurrent_8"]["mcpclient/sdk"],
            "{:.2f}x",
            f">= {TARGETS['concurrent_8_vs_sdk']:.1f}x",
            lambda v: v >= TARGETS["concurrent_8_vs_sdk"],
        ),
        row(
            "import mcpclient",
            results["import_s"].get("mcpclient"),
            "{:.3f}s",
            f"<= {TARGETS['import_s']:.3f}s",
            lambda v: v <= TARGETS["import_s"],
        ),
        row(
            "idle RSS mcpclient",
            results["idle_rss_mb"].get("mcpclient"),
            "{:.1f} MB",
            f"<= {TARGETS['idle_rss_mb']:.0f} MB",
            lambda v: v <= TARGETS["idle_rss_mb"],
        ),
        row(
            "10 MB result vs floor",
            r["big_mcpclient/raw"],
            "{:.2f}x",
            f"<= {TARGETS['big_vs_floor_max']:.2f}x",
            lambda v: v <= TARGETS["big_vs_floor_max"],
        ),
        row(
            "10 MB result vs SDK",
            r["big_speedup_vs_sdk"],
            "{:.1f}x",
            f">= {TARGETS['big_speedup_vs_sdk']:.0f}x",
            lambda v: v >= TARGETS["big_speedup_vs_sdk"],
        ),
    ]
    return rows


def report(results: dict[str, Any]) -> str:
    rates, spread = results["calls_per_s"], results["spread"]
    p = results["profile"]
    lines = [
        f"mcpclient stdio benchmark: Python {results['python']}, {results['cpus']} CPUs, "
        f"{p['rounds']} rounds x {p['window']}s windows, medians (min-max), {results['elapsed_s']:.0f}s",
        "",
        f"{'calls/s':<16}" + "".join(f"{c:>22}" for c in CLIENTS) + f"{'mc/sdk':>9}{'mc/raw':>9}{'port/mc':>9}",
    ]
    for mode in MODES:
        cells = ""
        for c in CLIENTS:
            v, mm = rates[c].get(mode), spread[c].get(mode)
            cells += f"{v:>9.0f} ({mm[0]:>5.0f}-{mm[1]:<5.0f})" if v else f"{'failed':>22}"
        ratio = results["ratios"][mode]
        fmt = lambda x: f"{x:>8.2f}x" if x else f"{'n/a':>9}"  # noqa: E731
        lines.append(f"{mode:<16}{cells}{fmt(ratio['mcpclient/sdk'])}{fmt(ratio['mcpclient/raw'])}"
                     f"{fmt(ratio['portable/mcpclient'])}")
    cpu = results["cpu_us_per_call"]
    lines += ["", f"{'CPU us/call':<16}" + "".join(f"{c:>22}" for c in CLIENTS) + f"{'sdk/mc':>9}{'mc/raw':>9}{'port/mc':>9}"]
    for mode in MODES:
        cells = ""
        for c in CLIENTS:
            v, mm = cpu[c].get(mode), spread[c].get(f"cpu_{mode}")
            cells += f"{v:>9.1f} ({mm[0]:>5.0f}-{mm[1]:<5.0f})" if v else f"{'failed':>22}"
        ratio = results["ratios"][mode]
        fmt = lambda x: f"{x:>8.2f}x" if x else f"{'n/a':>9}"  # noqa: E731
        lines.append(f"{mode:<16}{cells}{fmt(ratio['cpu_sdk/mcpclient'])}{fmt(ratio['cpu_mcpclient/raw'])}"
                     f"{fmt(ratio['cpu_portable/mcpclient'])}")
    lines.append("")
    big = results["big_result_s"]
    port = results["ratios"].get("big_portable/mcpclient")
    lines.append(
        f"{'10 MB result':<16}"
        + "".join(
            f"{big[c]:>9.3f}s({spread[c]['big_s'][0]:>5.2f}-{spread[c]['big_s'][1]:<5.2f})"
            if c in big
            else f"{'failed':>22}"
            for c in CLIENTS
        )
        + (f"{'':>18}{port:>8.2f}x" if port else "")
    )
    imp, rss = results["import_s"], results["idle_rss_mb"]
    lines += [
        "",
        "import time (best): " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in imp.items()),
        "idle RSS (median):  " + ", ".join(f"{k} {v:.1f} MB" for k, v in rss.items()),
        "",
        "issue #15 targets (reported, not asserted; raw is the floor):",
    ]
    lines += target_lines(_target_rows(results), 32, 10)
    if results["failures"]:
        lines += ["", "FAILURES:"] + [f"  {f}" for f in results["failures"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a ~25 s smoke run (fewer, shorter rounds)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    parser.add_argument("--worker", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--window", type=float, default=1.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker_main(args.worker, args.window)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    profile = PROFILES["quick" if args.quick else "full"]
    log(f"benchmarking mcpclient, sdk and raw against {SERVER.name} ...")
    results = run(profile, log)
    results["targets"] = {
        name: {"value": value, "goal": goal, "met": ok}
        for name, value, _shown, goal, ok in _target_rows(results)
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(report(results))
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
