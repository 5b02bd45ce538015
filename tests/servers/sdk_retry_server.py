"""An MCP server (official MCP Python SDK, ``MCPServer``) whose tools count their runs, for the
retry tests: what a test asserts about "ran once" is the server's own record.

Tools (each run is counted by the server itself; ``ran()`` reports the counts as JSON, and is
not counted):

* ``lookup(key)``: ``readOnlyHint``; returns ``"value of <key>"``;
* ``append(item)``: ``destructiveHint``; returns ``"appended <item>"``;
* ``busy(key, times=1)``: ``readOnlyHint``; the first ``times`` runs for ``key`` answer the
  JSON-RPC error -32050 ("busy, try again"), the next ones ``"ready <key>"``;
* ``busy_append(item, times=1)``: no annotations (so it may change something), as ``busy``;
* ``ran()``: ``readOnlyHint``; the counts, ``{"tool": runs}``.

``python tests/servers/sdk_retry_server.py [--transport stdio|streamable-http] [--port N]
[--stateless] [--legacy-only]``: over Streamable HTTP it listens on 127.0.0.1 and prints
``LISTENING http://127.0.0.1:PORT/mcp`` once it accepts connections (as ``sdk_server.py``).
``--stateless``: no sessions (each POST stands alone, as a 2026-07-28 server serves);
``--legacy-only``: the handshake era only (``server/discover`` refused), built as
``sdk_server.py`` builds it.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the checkout's tests
from tests.servers.sdk_server import run_http, run_stdio  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)

#: The JSON-RPC error code ``busy`` answers with: a server's "try again later".
BUSY = -32050

RUNS: Counter[str] = Counter()
BUSY_LEFT: Counter[str] = Counter()
READ_ONLY = types.ToolAnnotations(readOnlyHint=True)
DESTRUCTIVE = types.ToolAnnotations(readOnlyHint=False, destructiveHint=True)


async def refuse_discover(ctx: Any, call_next: Any) -> Any:
    """A legacy-only server does not know ``server/discover`` (as ``sdk_server --legacy-only``)."""
    if ctx.method == "server/discover":
        raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data="server/discover")
    return await call_next(ctx)


def _busy(tool: str, key: str, times: int) -> None:
    """Count a run of ``tool`` for ``key``; raise the busy error for the first ``times`` of them."""
    RUNS[tool] += 1
    seen = f"{tool}:{key}"
    BUSY_LEFT[seen] += 1
    if BUSY_LEFT[seen] <= times:
        raise MCPError(code=BUSY, message="busy, try again")


def build_server(legacy_only: bool = False) -> MCPServer:
    mcp = MCPServer("retry-test-server", version="1.0.0")
    if legacy_only:
        mcp.middleware.append(refuse_discover)

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def lookup(key: str) -> str:
        """Read a value."""
        RUNS["lookup"] += 1
        return f"value of {key}"

    @mcp.tool(annotations=DESTRUCTIVE, structured_output=False)
    def append(item: str) -> str:
        """Append an item to a list."""
        RUNS["append"] += 1
        return f"appended {item}"

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def busy(key: str, times: int = 1) -> str:
        """Busy the first times, then ready."""
        _busy("busy", key, times)
        return f"ready {key}"

    @mcp.tool(structured_output=False)
    def busy_append(item: str, times: int = 1) -> str:
        """Busy the first times, then append."""
        _busy("busy_append", item, times)
        return f"appended {item}"

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def ran() -> str:
        """How many times each tool ran."""
        return json.dumps(dict(RUNS), sort_keys=True)

    return mcp


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="streamable-http")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--legacy-only", action="store_true")
    args = parser.parse_args(argv)
    mcp = build_server(args.legacy_only)
    if args.transport == "stdio":
        anyio.run(run_stdio, mcp, args.legacy_only)
    else:
        args.json_response = args.event_store = False  # what sdk_server's runner reads besides
        anyio.run(run_http, mcp, args)


if __name__ == "__main__":
    main()
