"""A Streamable HTTP MCP server (the official SDK's ``MCPServer``, stateless) that gives its
results cache hints (SEP-2549) and counts the requests it gets, for the cache-store tests.

Usage::

    python tests/servers/sdk_cache_server.py [--port N] [--discover-scope public|private]

``server/discover`` is kept for 60 s, public unless ``--discover-scope private``;
``tools/list`` is public for 60 s; ``resources/read`` of ``user://me`` is private for 60 s
and answers with the caller's ``X-User`` header (so a result served to the wrong user shows).
``GET /counts`` answers ``{method: how many requests}``; ``LISTENING http://127.0.0.1:PORT/mcp``
is printed once the socket accepts connections.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
from collections import Counter
from typing import Any

import anyio
import uvicorn
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer

counts: Counter[str] = Counter()
lock = threading.Lock()


def build(discover_scope: str = "public") -> MCPServer:
    mcp = MCPServer("cache-test", cache_hints={
        "server/discover": CacheHint(ttl_ms=60_000, scope="private" if discover_scope == "private" else "public"),
        "tools/list": CacheHint(ttl_ms=60_000, scope="public"),
        "resources/read": CacheHint(ttl_ms=60_000, scope="private"),
    })

    @mcp.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @mcp.resource("user://{name}")
    def me(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
        request = ctx.request_context.request
        user = request.headers.get("x-user", "nobody") if request is not None else "nobody"
        return f"the profile of {user}"

    return mcp


def counting(app: Any) -> Any:
    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/counts":
            with lock:
                body = json.dumps(dict(counts)).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] == "http" and scope["method"] == "POST":
            messages, data = [], b""
            while True:
                message = await receive()
                messages.append(message)
                data += message.get("body", b"")
                if not message.get("more_body"):
                    break
            try:
                parsed = json.loads(data)
                for item in parsed if isinstance(parsed, list) else [parsed]:
                    if isinstance(item, dict) and "method" in item:
                        with lock:
                            counts[str(item["method"])] += 1
            except ValueError:
                pass
            queued = iter(messages)

            async def replay() -> Any:
                try:
                    return next(queued)
                except StopIteration:
                    return await receive()

            await app(scope, replay, send)
            return
        await app(scope, receive, send)

    return wrapped


async def serve(port: int, discover_scope: str) -> None:
    app = counting(build(discover_scope).streamable_http_app(json_response=True, stateless_http=True))
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.01)
        sys.stdout.write(f"LISTENING http://127.0.0.1:{sock.getsockname()[1]}/mcp\n")
        sys.stdout.flush()

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--discover-scope", choices=("public", "private"), default="public")
    args = parser.parse_args()
    anyio.run(serve, args.port, args.discover_scope)


if __name__ == "__main__":
    main()
