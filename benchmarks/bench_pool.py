"""A client per user: ``ClientPool`` against the naive ways of serving many users (issue #48).

Usage::

    python benchmarks/bench_pool.py            # 200 users x 20 calls, a pool of 32, 3 rounds
    python benchmarks/bench_pool.py --quick    # a smoke run: 8 users x 3 calls, a pool of 4, 1 round
    python benchmarks/bench_pool.py --json     # the same, as JSON on stdout

Many users at once (one thread per user, each making its calls one after another), each call
carrying that user's own bearer token, against ``benchmarks/fast_http_server.py`` (canned JSON
replies, so the numbers are the clients'). Three ways of doing it:

* ``pool``: ``mcpclient.ClientPool(factory, max_clients=32)``; ``factory(user)`` connects with the
  user's token; each call is ``pool.get(user).call_tool(...)``;
* ``per-request``: a client per call (``connect``, the call, ``close``): what a web view does
  when it keeps nothing between requests;
* ``shared-headers``: one client for everybody, a middleware setting each request's
  ``Authorization`` to the calling user's token. Only where the server does not bind its
  session to a user, as this one does not: most servers that authenticate do, and then this is
  not an option (a session opened with one user's token is that user's).

Reported for each: calls per second (all the calls over the wall time of the run), the
sessions the server opened (``initialize`` requests it answered), the peak RSS of the process
(each way runs in a fresh process), and the latency of a call as its user waits for it (the
wait for a pooled client and its open included), median and 99th percentile. Every reply is
checked (an echo of what was sent); the exit code is 1 if any was wrong or any way failed.
Rounds are interleaved and the median of each figure is reported. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import functools
import json
import resource
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from _common import BenchFailure, child_env, ratio, run_child

WAYS = ("pool", "per-request", "shared-headers")
PROFILES = {
    "full": {"rounds": 3, "users": 200, "calls": 20, "pool": 32},
    "quick": {"rounds": 1, "users": 8, "calls": 3, "pool": 4},
}
CALL_TIMEOUT = 60.0


def token_of(user: int) -> str:
    return f"token-of-user-{user}"


# -- one way, in a worker process ------------------------------------------------------------


_opened = [0]
_opened_lock = threading.Lock()


def _connect(url: str, headers: dict[str, str] | None = None, **options: Any) -> Any:
    """``mcpclient.connect``, counted."""
    import mcpclient

    with _opened_lock:
        _opened[0] += 1
    return mcpclient.connect(url, http=mcpclient.HTTP(headers=headers), timeout=CALL_TIMEOUT, **options)


def _user_client(url: str, user: int) -> Any:
    """The user's own client: its token in every request."""
    return _connect(url, {"Authorization": f"Bearer {token_of(user)}"})


def _text(result: Any) -> str:
    return "".join(part.text for part in result.content if part.type == "text")


def run_way(way: str, url: str, users: int, calls: int, pool_size: int) -> dict[str, Any]:
    """``users`` threads making ``calls`` calls each, the ``way`` way; the figures, as a dict."""
    import mcpclient

    close: Callable[[], None] = lambda: None  # noqa: E731
    if way == "pool":
        pool = mcpclient.ClientPool(functools.partial(_user_client, url), max_clients=pool_size)

        def call(user: int, sent: str) -> str:
            return _text(pool.get(user).call_tool("echo", {"text": sent}, timeout=CALL_TIMEOUT))

        close = pool.close
    elif way == "per-request":
        def call(user: int, sent: str) -> str:
            with _user_client(url, user) as client:
                return _text(client.call_tool("echo", {"text": sent}))
    else:
        current = threading.local()

        def as_user(message: Any, next_: Any) -> Any:
            user = getattr(current, "user", None)  # None: the client's own requests (its handshake)
            if user is not None and message.direction == "send" and message.kind == "request":
                message = message.with_headers({"Authorization": f"Bearer {token_of(user)}"})
            return next_(message)

        shared = _connect(url, middleware=[as_user])

        def call(user: int, sent: str) -> str:
            current.user = user
            return _text(shared.call_tool("echo", {"text": sent}))

        close = shared.close

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(users + 1)

    def one_user(user: int) -> None:
        mine: list[float] = []
        barrier.wait()
        try:
            for n in range(calls):
                sent = f"u{user}-{n}"
                started = time.perf_counter()
                got = call(user, sent)
                mine.append(time.perf_counter() - started)
                if got != sent:
                    raise BenchFailure(f"echo {sent!r} came back as {got[:100]!r}")
        except Exception as exc:
            with lock:
                errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=one_user, args=(user,), daemon=True) for user in range(users)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join(600)
    seconds = time.perf_counter() - started
    close()
    if errors:
        return {"error": f"{len(errors)} users failed, the first: {errors[0]}"}
    latencies.sort()
    return {
        "calls_per_s": len(latencies) / seconds,
        "clients_opened": _opened[0],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
    }


def worker_main(way: str, url: str, users: int, calls: int, pool_size: int) -> int:
    try:
        out = run_way(way, url, users, calls, pool_size)
    except Exception as exc:
        out = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(out), flush=True)
    return 0


# -- the orchestrator ------------------------------------------------------------------------


def run(profile: dict[str, Any], log: Callable[[str], None]) -> dict[str, Any]:
    from bench_http import Server

    env = child_env()
    samples: dict[str, dict[str, list[float]]] = {way: {} for way in WAYS}
    failures: list[str] = []
    for rnd in range(profile["rounds"]):
        shift = rnd % len(WAYS)
        for way in WAYS[shift:] + WAYS[:shift]:
            server = Server("json")
            try:
                args = [str(Path(__file__).resolve()), "--worker", way, "--url", server.url,
                        "--users", str(profile["users"]), "--calls", str(profile["calls"]),
                        "--pool", str(profile["pool"])]
                try:
                    out = json.loads(run_child(args, env))
                except Exception as exc:
                    out = {"error": str(exc)}
                if "error" not in out:
                    out["sessions"] = server.stats()["sessions"]
            finally:
                server.close()
            if "error" in out:
                failures.append(f"{way} round {rnd + 1}: {out['error']}")
                continue
            for key, value in out.items():
                samples[way].setdefault(key, []).append(value)
            log(f"  round {rnd + 1}, {way}: {out['calls_per_s']:.0f} calls/s")
    medians = {way: {key: statistics.median(values) for key, values in figures.items()}
               for way, figures in samples.items()}
    pool = medians.get("pool", {})
    ratios = {
        f"pool/{way} calls_per_s": ratio(pool.get("calls_per_s"), medians.get(way, {}).get("calls_per_s"))
        for way in WAYS[1:]
    }
    return {"profile": profile, "medians": medians, "ratios": ratios, "failures": failures}


def report(results: dict[str, Any]) -> str:
    profile = results["profile"]
    lines = [f"{profile['users']} users x {profile['calls']} calls, a pool of {profile['pool']}, "
             f"median of {profile['rounds']} round(s)", ""]
    lines.append(f"  {'way':<16}{'calls/s':>10}{'sessions':>10}{'peak RSS MB':>13}{'p50 ms':>9}{'p99 ms':>9}")
    for way in WAYS:
        m = results["medians"].get(way)
        if not m:
            lines.append(f"  {way:<16}{'failed':>10}")
            continue
        lines.append(f"  {way:<16}{m['calls_per_s']:>10.0f}{m['sessions']:>10.0f}{m['peak_rss_mb']:>13.1f}"
                     f"{m['p50_ms']:>9.1f}{m['p99_ms']:>9.1f}")
    lines.append("")
    for name, value in results["ratios"].items():
        lines.append(f"  {name}: {value:.2f}" if value else f"  {name}: n/a")
    for failure in results["failures"]:
        lines.append(f"  FAILED {failure}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 8 users x 3 calls, a pool of 4")
    parser.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    parser.add_argument("--worker", choices=WAYS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--users", type=int, default=200, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=20, help=argparse.SUPPRESS)
    parser.add_argument("--pool", type=int, default=32, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker_main(args.worker, args.url, args.users, args.calls, args.pool)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    profile = PROFILES["quick" if args.quick else "full"]
    log("benchmarking a client per user against benchmarks/fast_http_server.py ...")
    results = run(profile, log)
    print(json.dumps(results, indent=2) if args.json else report(results))
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
