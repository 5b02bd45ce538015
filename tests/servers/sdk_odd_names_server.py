"""A stdio MCP server built with the official MCP Python SDK whose tool names break the
specification's format (SEP-986: 1 to 128 of ``A-Z a-z 0-9 _ - .``), as some servers' do.

Tools: ``get weather`` (a space), ``search,web`` (a comma), ``ok_name`` (fine).
Run with ``python tests/servers/sdk_odd_names_server.py`` (stdio).
"""

from __future__ import annotations

import logging
import sys

from mcp.server.mcpserver import MCPServer


def build_server() -> MCPServer:
    mcp = MCPServer("sdk-odd-names", version="1.0.0")

    def weather(city: str) -> str:
        return f"sunny in {city}"

    def search(query: str) -> str:
        return f"results for {query}"

    def ok(x: int) -> str:
        return str(x)

    mcp.add_tool(weather, name="get weather", structured_output=False)
    mcp.add_tool(search, name="search,web", structured_output=False)
    mcp.add_tool(ok, name="ok_name", structured_output=False)
    return mcp


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)  # the SDK warns about its own names
    build_server().run("stdio")
