"""What the seam costs: the commit before it against another, each installed in its own venv.

Usage::

    python benchmarks/seam_cost.py                    # 0ddf20e against the working tree
    python benchmarks/seam_cost.py --after main       # ... against a commit
    python benchmarks/seam_cost.py --otel             # and the working tree with opentelemetry-api
    python benchmarks/seam_cost.py --quick            # 2 short rounds, one callgrind pair
    python benchmarks/seam_cost.py --json             # the same, as JSON on stdout

Each side (``--before``, default 0ddf20e, the last commit before the seam of issue #29; and
``--after``, a commit or, by default, the working tree) is copied out of git and installed
with ``pip install`` (its own dependencies only, bytecode compiled) into a fresh virtualenv,
kept in a cache directory (``--cache``) keyed by the commit or by the tree's content, so a
second run reuses it. ``--otel`` adds a third side: the after side with ``opentelemetry-api``
installed and nothing configured (OpenTelemetry's no-op state), which should cost what the
after side costs.

Measured, in rounds that alternate the sides (their order rotating), every figure from a
fresh interpreter of the side's venv (``python -I``: nothing else on its path):

* client CPU per sequential ``call_tool`` (``time.process_time`` of the client's process over
  a window of calls, after a warm-up) and calls per second, against the raw servers of the
  perf bench: ``tests/servers/fast_server.py`` over stdio, ``benchmarks/fast_http_server.py``
  (JSON replies) over Streamable HTTP;
* ``import mcpclient`` (interpreter start excluded; best of several per round), and under
  callgrind its instructions (those of ``python -I -c "import mcpclient"`` minus those of
  the interpreter alone), which no load moves;
* the first ``connect()`` to the stdio server and its first call, in wall time and client
  CPU, and whether it imported the HTTP stack (requests, urllib3) or OpenTelemetry;
* the Python and C functions a stdio ``call_tool`` enters on the calling thread
  (``sys.setprofile``, the worker's own loop included): what the call path does, exactly;
* with valgrind installed, instructions per ``call_tool`` under callgrind (stdio with the
  spinning read off, and HTTP): the client process's instructions for N2 calls minus those
  for N1, over N2 - N1, so start-up and the first calls' warm-up cancel out. The HTTP figure
  holds within 1%; the stdio one moves by several thousand from run to run, more on a busy
  machine (under valgrind a call takes milliseconds, and the stdio reader thread, which
  takes the pipe back after 4 ms without an inline reader, wakes more often when the client
  runs slower), hence several pairs per side, alternated, and the median.

Each cell is the median over the rounds with the min-max in brackets; the last columns are
the ratios of the medians (after/before, after+otel/after). Speed is reported, never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
STDIO_SERVER = REPO / "tests" / "servers" / "fast_server.py"
HTTP_SERVER = REPO / "benchmarks" / "fast_http_server.py"
BEFORE_SEAM = "0ddf20e"
WORKER_TIMEOUT = 600.0

# The worker runs in each side's venv with ``python -I -c``: the standard library and that
# side's mcpclient only. argv: mode, then the mode's arguments.
WORKER = r'''
import json, sys, time
mode = sys.argv[1]


def modules():
    # opentelemetry.trace, not the namespace package "opentelemetry" that looking for it imports
    return {name: name in sys.modules for name in ("requests", "urllib3", "opentelemetry.trace")}


def open_client(kind, target, spin=True):
    from mcpclient import Client, StdioTransport
    if kind == "stdio":
        transport = StdioTransport([target, sys.argv[-1]])
        transport.spin_reads = spin
    else:
        from mcpclient import StreamableHTTPTransport
        transport = StreamableHTTPTransport(target)
    client = Client(transport, timeout=60)
    client.initialize()
    return client


def echo(client, text):
    got = client.call_tool("echo", {"text": text}).content[0].text
    if got != text:
        raise SystemExit(f"echo {text!r} came back as {got!r:.100}")


if mode == "import":
    start = time.perf_counter()
    import mcpclient  # noqa: F401
    print(json.dumps({"seconds": time.perf_counter() - start, **modules()}))
elif mode == "first":
    import mcpclient
    cpu, wall = time.process_time(), time.perf_counter()
    client = mcpclient.connect([sys.argv[2], sys.argv[-1]])
    echo(client, "first")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    client.close()
    print(json.dumps({"seconds": wall, "cpu": cpu, **modules()}))
elif mode == "cpu":
    kind, target, window = sys.argv[2], sys.argv[3], float(sys.argv[4])
    client = open_client(kind, target)
    end = time.perf_counter() + min(0.2, window)
    n = 0
    while time.perf_counter() < end:
        echo(client, f"w{n}")
        n += 1
    cpu, start, n = time.process_time(), time.perf_counter(), 0
    end = start + window
    while time.perf_counter() < end:
        echo(client, f"s{n}")
        n += 1
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    client.close()
    print(json.dumps({"calls": n, "rate": n / elapsed, "cpu_us": cpu / n * 1e6}))
elif mode == "profile":  # Python and C functions entered per call on the calling thread
    client = open_client("stdio", sys.argv[2], spin=False)
    for i in range(50):
        echo(client, f"w{i}")
    counts = {"call": 0, "c_call": 0}

    def profile(frame, event, arg):
        if event in counts:
            counts[event] += 1

    n = 20
    sys.setprofile(profile)
    for i in range(n):
        echo(client, f"p{i}")
    sys.setprofile(None)
    client.close()
    print(json.dumps({"python": counts["call"] / n, "c": counts["c_call"] / n}))
elif mode == "pass":  # under callgrind: the interpreter alone, what "import" is measured over
    print(json.dumps({}))
elif mode == "calls":  # under callgrind: N calls, the spinning read off (it burns a varying count)
    kind, target, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
    client = open_client(kind, target, spin=False)
    for i in range(n):
        echo(client, f"c{i}")
    client.close()
    print(json.dumps({"calls": n}))
'''


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- the sides: a tree each, installed in a venv of its own -------------------------------------


class Side:
    def __init__(self, name: str, python: Path) -> None:
        self.name = name
        self.python = python


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, stdout=subprocess.PIPE, text=True).stdout


def _tree_key(paths: list[str]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.encode() + b"\0")
        file = REPO / path
        if file.is_file():
            digest.update(file.read_bytes())
    return "tree-" + digest.hexdigest()[:16]


def _export(ref: str | None, into: Path) -> None:
    """The files of commit ``ref`` (None: the working tree, untracked files included) in ``into``."""
    into.mkdir(parents=True)
    if ref is not None:
        archive = subprocess.run(["git", "archive", ref], cwd=REPO, check=True, stdout=subprocess.PIPE).stdout
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
        return
    for path in _git("ls-files", "-co", "--exclude-standard").splitlines():
        source = REPO / path
        if source.is_file() and not source.is_symlink():
            target = into / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def prepare(name: str, ref: str | None, cache: Path, extra: list[str]) -> Side:
    """The venv of ``ref`` (a commit, or None for the working tree) with ``extra`` packages."""
    if ref is None:
        key = _tree_key(_git("ls-files", "-co", "--exclude-standard").splitlines())
    else:
        key = _git("rev-parse", "--verify", ref + "^{commit}").strip()[:16]
    if extra:
        key += "-" + hashlib.sha256(" ".join(extra).encode()).hexdigest()[:8]
    venv = cache / key
    python = venv / "bin" / "python"
    if python.exists() and (venv / "ready").exists():
        log(f"{name}: {ref or 'working tree'} (cached venv {venv.name})")
        return Side(name, python)
    log(f"{name}: installing {ref or 'the working tree'} into a fresh venv ({venv.name})")
    shutil.rmtree(venv, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="seam-cost-") as tmp:
        source = Path(tmp) / "src"
        _export(ref, source)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(source), *extra],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if pip.returncode != 0:
            raise SystemExit(f"{name}: pip install failed:\n{pip.stdout[-3000:]}")
    (venv / "ready").write_text(ref or "working tree")
    return Side(name, python)


# -- running the worker -------------------------------------------------------------------------


def worker(side: Side, *args: str, prefix: list[str] | None = None) -> dict[str, Any]:
    proc = subprocess.run(
        [*(prefix or []), str(side.python), "-I", "-c", WORKER, *args, str(STDIO_SERVER)],
        cwd=tempfile.gettempdir(), capture_output=True, text=True,
        timeout=WORKER_TIMEOUT,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{side.name}: worker {args[:2]} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stderr"] = proc.stderr
    return result


def callgrind_total(side: Side, *args: str) -> int:
    """The client process's instructions under callgrind, the worker run with ``args``."""
    out = worker(side, *args, prefix=[
        "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--trace-children=no"])
    line = next(line for line in out["stderr"].splitlines() if "Collected :" in line)
    return int(line.rsplit(":", 1)[1].strip())


def callgrind_per_call(side: Side, kind: str, target: str, n1: int, n2: int) -> float:
    """Instructions of one call: the client process's total for ``n2`` calls minus ``n1``'s."""
    totals = [callgrind_total(side, "calls", kind, target, str(n)) for n in (n1, n2)]
    return (totals[1] - totals[0]) / (n2 - n1)


class HTTPServer:
    """``fast_http_server.py --json`` in its own process, for the whole run."""

    def __enter__(self) -> str:
        self.proc = subprocess.Popen(
            [sys.executable, str(HTTP_SERVER), "--json", "--exit-on-eof"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- the run ------------------------------------------------------------------------------------


def measure(sides: list[Side], args: argparse.Namespace) -> dict[str, dict[str, list[float]]]:
    figures: dict[str, dict[str, list[float]]] = {side.name: {} for side in sides}
    flags: dict[str, dict[str, bool]] = {side.name: {} for side in sides}

    def add(side: Side, figure: str, value: float) -> None:
        figures[side.name].setdefault(figure, []).append(value)

    with HTTPServer() as url:
        for round_ in range(args.rounds):
            order = sides[round_ % len(sides):] + sides[:round_ % len(sides)]
            log(f"round {round_ + 1}/{args.rounds}: " + ", ".join(side.name for side in order))
            for side in order:
                for kind, target in (("stdio", sys.executable), ("http", url)):
                    out = worker(side, "cpu", kind, target, str(args.window))
                    add(side, f"{kind} CPU us/call", out["cpu_us"])
                    add(side, f"{kind} calls/s", out["rate"])
                imports = [worker(side, "import") for _ in range(args.imports)]
                add(side, "import mcpclient ms", min(out["seconds"] for out in imports) * 1000)
                first = worker(side, "first", sys.executable)
                add(side, "first connect+call ms", first["seconds"] * 1000)
                add(side, "first connect+call CPU ms", first["cpu"] * 1000)
                for module in ("requests", "urllib3", "opentelemetry.trace"):
                    flags[side.name][f"import mcpclient imports {module}"] = imports[0][module]
                    flags[side.name][f"a stdio connect imports {module}"] = first[module]
        for side in sides:  # the same in every round: once is enough
            out = worker(side, "profile", sys.executable)
            add(side, "stdio Python functions/call", out["python"])
            add(side, "stdio C functions/call", out["c"])
        if args.callgrind:
            for side in sides:  # one process, no threads: the same count every run
                log(f"callgrind: {side.name} import")
                add(side, "import mcpclient instructions (M)",
                    (callgrind_total(side, "import") - callgrind_total(side, "pass")) / 1e6)
            for round_ in range(args.callgrind_rounds):
                for side in sides:
                    for kind, target in (("stdio", sys.executable), ("http", url)):
                        log(f"callgrind {round_ + 1}/{args.callgrind_rounds}: {side.name} {kind}")
                        per_call = callgrind_per_call(side, kind, target, args.n1, args.n2)
                        add(side, f"{kind} instructions/call (k)", per_call / 1000)
    for name, found in flags.items():
        for flag, value in found.items():
            figures[name][flag] = [float(value)]
    return figures


def cell(values: list[float] | None) -> str:
    if not values:
        return "-"
    median = statistics.median(values)
    digits = 0 if median >= 100 else 1
    if len(values) == 1:
        return f"{median:.{digits}f}"
    return f"{median:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def report(figures: dict[str, dict[str, list[float]]], ratios: list[tuple[str, str]]) -> str:
    names = list(figures)
    rows = sorted({figure for found in figures.values() for figure in found}, key=_row_order)
    head = ["figure", *names, *(f"{a}/{b}" for a, b in ratios)]
    table = [head]
    for row in rows:
        if " imports " in row:
            table.append([row, *("yes" if figures[n].get(row, [0])[0] else "no" for n in names),
                          *("" for _ in ratios)])
            continue
        line = [row, *(cell(figures[n].get(row)) for n in names)]
        for a, b in ratios:
            va, vb = figures[a].get(row), figures[b].get(row)
            line.append(f"{statistics.median(va) / statistics.median(vb):.2f}x" if va and vb else "")
        table.append(line)
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    return "\n".join("  ".join(text.ljust(width) for text, width in zip(line, widths)).rstrip() for line in table)


def _row_order(row: str) -> tuple[int, str]:
    order = ("instructions", "functions", "CPU us", "calls/s", "import mcpclient ms", "first", "imports")
    return next((i for i, key in enumerate(order) if key in row), len(order)), row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE_SEAM, help="the commit before (default: %(default)s)")
    parser.add_argument("--after", default=None, help="the commit after (default: the working tree)")
    parser.add_argument("--otel", action="store_true", help="add the after side with opentelemetry-api installed")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--window", type=float, default=1.0, help="seconds of calls per CPU figure")
    parser.add_argument("--imports", type=int, default=5, help="imports timed per side and round (the best counts)")
    parser.add_argument("--no-callgrind", dest="callgrind", action="store_false")
    parser.add_argument("--callgrind-rounds", type=int, default=4,
                        help="callgrind pairs per side and transport (stdio's count moves with the machine's load: "
                             "a busy machine slows the client under valgrind and its reader thread wakes more)")
    parser.add_argument("--n1", type=int, default=200, help="calls of the shorter callgrind run")
    parser.add_argument("--n2", type=int, default=1200, help="calls of the longer callgrind run")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 0.3 s, one callgrind pair")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache_home / "mcpclient-seam-cost")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.window, args.imports, args.callgrind_rounds = 2, 0.3, 3, 1
    if args.callgrind and shutil.which("valgrind") is None:
        log("valgrind is not installed: no instruction counts")
        args.callgrind = False
    args.cache.mkdir(parents=True, exist_ok=True)
    sides = [prepare("before", args.before, args.cache, []), prepare("after", args.after, args.cache, [])]
    ratios = [("after", "before")]
    if args.otel:
        sides.append(prepare("after+otel", args.after, args.cache, ["opentelemetry-api"]))
        ratios.append(("after+otel", "after"))
    started = time.perf_counter()
    figures = measure(sides, args)
    log(f"done in {time.perf_counter() - started:.0f} s")
    if args.json:
        print(json.dumps({"before": args.before, "after": args.after or "working tree", "figures": figures}, indent=2))
    else:
        print(f"before: {args.before}   after: {args.after or 'the working tree'}   "
              f"(median (min-max) of {args.rounds} rounds; instructions: {args.callgrind_rounds} callgrind pairs "
              f"of {args.n1} and {args.n2} calls)")
        print(report(figures, ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
