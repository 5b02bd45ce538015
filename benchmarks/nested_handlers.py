"""Handlers that call back: mcpclient and the official SDK client side by side (issue #28).

Usage::

    python benchmarks/nested_handlers.py                 # 24 and 48 concurrent calls
    python benchmarks/nested_handlers.py --calls 24 --timeout 10
    python benchmarks/nested_handlers.py --json          # the same, as JSON on stdout

Both clients talk to the same server, ``tests/servers/sdk_server.py`` over stdio (the official
SDK's ``MCPServer``), in the legacy era, where the server sends ``elicitation/create`` to the
client while a ``tools/call`` waits. N callers at once each call the tool ``elicit``; the
client's elicitation handler then makes a nested call to the same server before it answers:

* ``tool``: the handler calls ``echo``, a plain tool;
* ``elicit``: the handler calls ``elicit`` again, so the server elicits from inside the nested
  call (that inner elicitation is answered at once).

mcpclient runs the N callers as threads sharing one ``Client`` (16 dispatch workers, the
default); the SDK as asyncio tasks sharing one ``mcp.Client``. Every call has a timeout
(``--timeout``); a call that hits it counts as failed. Printed per client and case: how many
of the N calls succeeded and how long all of them took. The exit code is 1 when any
mcpclient call failed, 0 otherwise (the SDK's numbers are for reading only).

The script imports the ``mcpclient`` your interpreter finds, falling back to the one in this
repository, like the other benchmarks.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SERVER = REPO / "tests" / "servers" / "sdk_server.py"
CASES = ("tool", "elicit")
CLIENTS = ("mcpclient", "sdk")


def _answer(inner: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": inner[:40] or "n"}}


def run_mcpclient(case: str, calls: int, timeout: float) -> dict[str, Any]:
    try:
        import mcpclient  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO))
    from mcpclient import Client, StdioTransport
    from mcpclient import types as t

    client = Client(StdioTransport([sys.executable, str(SERVER)]), protocol="legacy", timeout=timeout)

    def handler(request: t.ElicitationRequest) -> t.ElicitationResult:
        if not request.message.startswith("outer"):
            return t.ElicitationResult(**_answer("inner"))
        if case == "tool":
            text = client.call_tool("echo", {"text": "nested"}).text
        else:
            text = client.call_tool("elicit", {"message": "inner"}).text
        return t.ElicitationResult(**_answer(text))

    client.set_elicitation_handler(handler)
    results: list[str] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        try:
            result = client.call_tool("elicit", {"message": f"outer {i}"})
            outcome = "ok" if not result.is_error and result.text.startswith("accept") else f"bad: {result.text[:80]}"
        except Exception as exc:  # counted, not raised: the point is how many end well
            outcome = f"{type(exc).__name__}: {exc}"[:120]
        with lock:
            results.append(outcome)

    with client:
        start = time.perf_counter()
        threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(calls)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout * 4 + 30)
        elapsed = time.perf_counter() - start
    return _summary(results, calls, elapsed)


def run_sdk(case: str, calls: int, timeout: float) -> dict[str, Any]:
    import asyncio

    from mcp import Client as SDKClient
    from mcp import StdioServerParameters
    from mcp_types import ElicitResult

    holder: dict[str, Any] = {}

    async def on_elicit(context: Any, params: Any) -> ElicitResult:
        if not params.message.startswith("outer"):
            return ElicitResult(**_answer("inner"))
        sdk = holder["client"]
        if case == "tool":
            result = await sdk.call_tool("echo", {"text": "nested"})
        else:
            result = await sdk.call_tool("elicit", {"message": "inner"})
        text = "".join(getattr(block, "text", "") for block in result.content)
        return ElicitResult(**_answer(text))

    async def one(sdk: Any, i: int) -> str:
        try:
            result = await asyncio.wait_for(sdk.call_tool("elicit", {"message": f"outer {i}"}), timeout)
            text = "".join(getattr(block, "text", "") for block in result.content)
            return "ok" if not result.is_error and text.startswith("accept") else f"bad: {text[:80]}"
        except Exception as exc:  # counted, as above
            return f"{type(exc).__name__}: {exc}"[:120]

    async def main() -> dict[str, Any]:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
        async with SDKClient(params, mode="legacy", elicitation_callback=on_elicit) as sdk:
            holder["client"] = sdk
            start = time.perf_counter()
            results = await asyncio.gather(*(one(sdk, i) for i in range(calls)))
            return _summary(list(results), calls, time.perf_counter() - start)

    return asyncio.run(main())


def _summary(results: list[str], calls: int, elapsed: float) -> dict[str, Any]:
    failures = [r for r in results if r != "ok"]
    return {"ok": calls - len(failures), "calls": calls, "seconds": round(elapsed, 3), "first_failure": failures[:1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, nargs="+", default=[24, 48], help="concurrent calls (default 24 48)")
    parser.add_argument("--timeout", type=float, default=10.0, help="each call's timeout in seconds (default 10)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--verbose", action="store_true", help="show the clients' log lines (handlers that failed)")
    args = parser.parse_args(argv)
    if not args.verbose:  # a failed nested call is logged with its traceback: counted here instead
        for name in ("mcpclient", "mcp"):
            logging.getLogger(name).addHandler(logging.NullHandler())
    runners = {"mcpclient": run_mcpclient, "sdk": run_sdk}
    results: dict[str, dict[str, dict[str, Any]]] = {client: {} for client in CLIENTS}
    for calls in args.calls:
        for case in CASES:
            for client in CLIENTS:
                try:
                    outcome = runners[client](case, calls, args.timeout)
                except Exception as exc:  # a client that cannot run at all is reported, not fatal
                    outcome = {"ok": 0, "calls": calls, "seconds": 0.0, "first_failure": [f"{type(exc).__name__}: {exc}"]}
                results[client][f"{case}_{calls}"] = outcome
                print(f"{client:>9} {case:>6} x{calls:<3} {outcome['ok']:>3}/{calls} ok in {outcome['seconds']:6.2f}s"
                      f"  {outcome['first_failure'][0] if outcome['first_failure'] else ''}",
                      file=sys.stderr if args.json else sys.stdout, flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    failed = any(r["ok"] < r["calls"] for r in results["mcpclient"].values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
