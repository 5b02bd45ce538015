"""A stdio MCP server (official MCP Python SDK, low-level ``Server``) that declares tools and
nothing else: no resources, no prompts, no completions, as many small servers are.

The low-level server declares a capability only for the handlers it is given, so its
``initialize`` (and ``server/discover``) answer carries ``tools`` alone.

Tools: ``echo(text)`` -> ``text``.
Dual era, as the SDK's stdio loop is.
``python tests/servers/sdk_tools_only_server.py [--name NAME] [--bare]``: ``NAME`` (default
``sdk-tools-only``) is the ``serverInfo`` name; ``--bare`` leaves the tools out too, so the
server declares no capability at all.
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

warnings.filterwarnings("ignore", category=DeprecationWarning)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema=schema)])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(text))])


def build_server(name: str = "sdk-tools-only", *, bare: bool = False) -> Server[Any]:
    if bare:
        return Server(name, version="1.0.0")
    return Server(name, version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(name: str, bare: bool) -> None:
    server = build_server(name, bare=bare)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="sdk-tools-only")
    parser.add_argument("--bare", action="store_true")
    args = parser.parse_args()
    anyio.run(main, args.name, args.bare)
