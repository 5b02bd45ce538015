"""Side by side: how soon a call to a stalled HTTP server ends, mcpclient and the official SDK.

The official SDK's server (tests/servers/sdk_server.py) is started on 127.0.0.1, one echo call
goes through, then the server process is stopped with SIGSTOP: its kernel still accepts
connections and takes the bytes, and nothing answers. Then, for each client:

* ``timeout``: a call with a 2 s timeout, seconds until it raised;
* ``cancel``: a call cancelled 0.5 s in, seconds from the cancel until it raised (mcpclient
  only: the SDK's asyncio cancel is the task's, which ends at once by construction);
* ``close``: seconds that closing the client took afterwards.

Run: ``python benchmarks/stalled_server.py`` (needs the ``mcp`` package). Prints one line per
transport and client.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SERVER = REPO / "tests" / "servers" / "sdk_server.py"
TIMEOUT = 2.0
CANCEL_AFTER = 0.5

TRANSPORTS = {
    "streamable-http (SSE replies)": ("--transport", "streamable-http"),
    "streamable-http (JSON replies)": ("--transport", "streamable-http", "--json-response"),
    "HTTP+SSE (2024-11-05)": ("--transport", "sse"),
}


def start(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", "0", *args],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("LISTENING "):
        proc.kill()
        raise RuntimeError(f"sdk_server did not start: {line!r}")
    return proc, line.split()[1]


def stop(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGCONT)
    proc.kill()
    proc.wait()


def timed(fn: Any) -> tuple[float, str]:
    start = time.monotonic()
    try:
        fn()
        outcome = "returned"
    except BaseException as exc:  # what ended it is part of the result
        outcome = type(exc).__name__
    return time.monotonic() - start, outcome


def open_mcpclient(url: str, legacy_sse: bool) -> Any:
    from mcpclient import Client, SSETransport, StreamableHTTPTransport

    transport: Any = SSETransport(url) if legacy_sse else StreamableHTTPTransport(url)
    client = Client(transport, timeout=None, protocol="legacy")
    client.initialize()
    client.call_tool("echo", {"text": "up"})
    return client


def measure_mcpclient(client: Any) -> dict[str, str]:
    from mcpclient import CancelToken

    out: dict[str, str] = {}
    seconds, what = timed(lambda: client.call_tool("echo", {"text": "x"}, timeout=TIMEOUT))
    out["timeout"] = f"{seconds:5.2f}s ({what})"
    token = CancelToken()
    threading.Timer(CANCEL_AFTER, token.cancel).start()
    seconds, what = timed(lambda: client.call_tool("echo", {"text": "x"}, cancel=token, timeout=60))
    out["cancel"] = f"{seconds - CANCEL_AFTER:5.2f}s ({what})"
    seconds, _ = timed(client.close)
    out["close"] = f"{seconds:5.2f}s"
    return out


def measure_sdk(url: str, legacy_sse: bool, proc: subprocess.Popen[str]) -> dict[str, str]:
    from mcp import ClientSession
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    out: dict[str, str] = {}

    async def main() -> None:
        opened = sse_client(url) if legacy_sse else streamable_http_client(url)
        close_start = 0.0
        try:
            async with opened as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.call_tool("echo", {"text": "up"})
                    os.kill(proc.pid, signal.SIGSTOP)
                    start = time.monotonic()
                    try:
                        await session.call_tool("echo", {"text": "x"}, read_timeout_seconds=TIMEOUT)
                        what = "returned"
                    except BaseException as exc:  # recorded
                        what = type(exc).__name__
                    out["timeout"] = f"{time.monotonic() - start:5.2f}s ({what})"
                    out["cancel"] = "  n/a"
                    close_start = time.monotonic()
        except BaseException:  # an error on the way out is the SDK's; the time is what counts
            pass
        out["close"] = f"{time.monotonic() - close_start:5.2f}s"

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
    except BaseException as exc:  # recorded
        out.setdefault("timeout", f"failed: {type(exc).__name__}")
    return out


def main() -> None:
    print(f"stalled server (SIGSTOP after the handshake): call timeout {TIMEOUT}s, cancel after {CANCEL_AFTER}s")
    for name, args in TRANSPORTS.items():
        legacy_sse = "--transport" in args and args[1] == "sse"
        proc, url = start(*args)
        try:
            client = open_mcpclient(url, legacy_sse)
            os.kill(proc.pid, signal.SIGSTOP)
            ours = measure_mcpclient(client)
        finally:
            stop(proc)
        proc, url = start(*args)
        try:
            theirs = measure_sdk(url, legacy_sse, proc)
        finally:
            stop(proc)
        for who, row in (("mcpclient", ours), ("mcp SDK", theirs)):
            print(f"{name:32} {who:10} timeout {row.get('timeout', '?'):22} "
                  f"cancel {row.get('cancel', '?'):22} close {row.get('close', '?')}")


if __name__ == "__main__":
    main()
