"""A stdio MCP server (official MCP Python SDK) that tells what its environment gave it.

One tool, ``whoami``: answers ``my token is <SERVICE_TOKEN>`` (the variable a config entry's
``env`` gives it), as a server quoting its configuration back would.

``python tests/security/sdk_env_server.py``
"""

from __future__ import annotations

import os
import warnings

import anyio
from mcp.server.mcpserver import MCPServer

warnings.filterwarnings("ignore", category=DeprecationWarning)


def build_server() -> MCPServer:
    mcp = MCPServer("env-echo", version="1.0.0")

    @mcp.tool(structured_output=False)
    def whoami() -> str:
        """The token this server was given."""
        return f"my token is {os.environ.get('SERVICE_TOKEN', '(none)')}"

    return mcp


if __name__ == "__main__":
    anyio.run(build_server().run_stdio_async)
