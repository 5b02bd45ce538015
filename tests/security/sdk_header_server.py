"""A Streamable HTTP MCP server (official MCP Python SDK) that reports the request's Authorization.

One tool, ``authorization(flag)``: waits until the file ``flag`` exists (so a test can look
at the client process while the call is in flight), then returns the ``Authorization``
header of the request as text. Listens on 127.0.0.1, a free port, and prints
``LISTENING http://127.0.0.1:PORT/mcp`` once ready (as tests/servers/sdk_server.py does).

``python tests/security/sdk_header_server.py``
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.servers.sdk_server import run_http  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)


def build_server() -> MCPServer:
    mcp = MCPServer("sdk-header", version="1.0.0")

    @mcp.tool(structured_output=False)
    async def authorization(ctx: Context, flag: str = "") -> str:
        """The Authorization header of this request, once ``flag`` exists."""
        with anyio.fail_after(30):
            while flag and not os.path.exists(flag):
                await anyio.sleep(0.02)
        return (ctx.headers or {}).get("authorization") or "(none)"

    return mcp


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    args = argparse.Namespace(transport="streamable-http", legacy_only=False, json_response=False,
                              stateless=False, event_store=False, port=0)
    anyio.run(run_http, build_server(), args)
