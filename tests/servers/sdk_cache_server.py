"""A Streamable HTTP MCP server (the official SDK's ``MCPServer``, stateless) that gives its
results cache hints (SEP-2549) and counts the requests it gets, for the cache-store tests.

Usage::

    python tests/servers/sdk_cache_server.py [--port N] [--discover-scope public|private] [--legacy]

``server/discover`` is kept for 60 s, public unless ``--discover-scope private``;
``tools/list`` is public for 60 s; ``resources/read`` of ``user://me`` is private for 60 s
and answers with the caller (so a result served to the wrong user shows): its ``X-User``
header, else the credential of its ``Authorization`` header (a Basic one's user name), else
its ``api_key`` query value, else ``nobody``.

``--record PATH`` appends, for every request it gets, a JSON line ``{"method", "caller", "tag"}``
(``tag``: a ``tools/call``'s ``tag`` argument, a read's URI, else null): what each request
really carried, as the server saw it; and it adds the tool ``whoami(tag)``, which answers
``"<caller> <tag>"`` (the caller as above), so a test can tell whose credentials a call carried
and which call it was.

``--legacy``: a 2025-11-25 server only (no ``server/discover``, no 2026 era), with no cache
hints, as a legacy server has none, and declaring ``listChanged`` and resource
``subscribe`` (the promise to announce changes that once made mcpclient keep its answers as
public).
``GET /counts`` answers ``{method: how many requests}``; ``LISTENING http://127.0.0.1:PORT/mcp``
is printed once the socket accepts connections.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import socket
import sys
import threading
from collections import Counter
from functools import partial
from typing import Any
from urllib.parse import parse_qs

import anyio
import mcp.types as types
import uvicorn
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

counts: Counter[str] = Counter()
lock = threading.Lock()


def caller(request: Any) -> str:
    """Who the request says it is (see the module's docstring)."""
    if request is None:
        return "nobody"
    user = request.headers.get("x-user")
    if user:
        return str(user)
    scheme, _, credential = str(request.headers.get("authorization", "")).partition(" ")
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(credential).decode().partition(":")[0]
        except (binascii.Error, UnicodeDecodeError):
            return "a bad Basic header"
    if credential:
        return credential
    keys = parse_qs(request.url.query).get("api_key")
    return keys[0] if keys else "nobody"


def build(discover_scope: str = "public", legacy: bool = False, whoami: bool = False) -> MCPServer:
    hints = {} if legacy else {"cache_hints": {
        "server/discover": CacheHint(ttl_ms=60_000, scope="private" if discover_scope == "private" else "public"),
        "tools/list": CacheHint(ttl_ms=60_000, scope="public"),
        "resources/read": CacheHint(ttl_ms=60_000, scope="private"),
    }}
    mcp = MCPServer("cache-test", **hints)

    @mcp.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    if whoami:
        @mcp.tool(name="whoami")
        def who(tag: str, ctx: Context) -> str:  # type: ignore[type-arg]
            """Who the request says it is, and the caller's tag."""
            return f"{caller(ctx.request_context.request)} {tag}"

    @mcp.resource("user://{name}")
    def me(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
        return f"the profile of {caller(ctx.request_context.request)}"

    if legacy:
        lowlevel = mcp._lowlevel_server  # no public accessor; needed for the subscribe handler

        async def on_subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
            return types.EmptyResult()

        lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, on_subscribe)
        lowlevel.create_initialization_options = partial(  # type: ignore[method-assign]
            lowlevel.create_initialization_options,
            NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True),
        )

        async def refuse_discover(ctx: Any, call_next: Any) -> Any:
            if ctx.method == "server/discover":
                raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data="server/discover")
            return await call_next(ctx)

        mcp.middleware.append(refuse_discover)
    return mcp


def legacy_only(app: Any) -> Any:
    """Refuse a POST of the 2026 era (its ``MCP-Protocol-Version``) as a 2025 server does."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            version = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"mcp-protocol-version"), None)
            if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
                while (await receive()).get("more_body"):
                    pass
                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": types.INVALID_REQUEST, "message": f"Bad Request: Unsupported protocol version: {version}"}
                }).encode()
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return wrapped


#: Where ``--record`` appends what each request carried (None: nowhere).
record: Any = None


def record_request(scope: dict[str, Any], item: dict[str, Any]) -> None:
    """Append ``{"method", "caller", "tag"}`` for one JSON-RPC request (under ``lock``)."""
    from starlette.requests import Request

    params = item.get("params") if isinstance(item.get("params"), dict) else {}
    arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
    tag = arguments.get("tag", params.get("uri"))
    record.write(json.dumps({"method": item["method"], "caller": caller(Request(scope)), "tag": tag}) + "\n")
    record.flush()


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
                            if record is not None:
                                record_request(scope, item)
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


async def serve(port: int, discover_scope: str, legacy: bool) -> None:
    app = build(discover_scope, legacy, whoami=record is not None).streamable_http_app(
        json_response=True, stateless_http=True)
    app = counting(legacy_only(app) if legacy else app)
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
    parser.add_argument("--legacy", action="store_true")
    parser.add_argument("--record", help="append what each request carried to this file, a JSON line each")
    args = parser.parse_args()
    global record
    if args.record:
        record = open(args.record, "a", encoding="utf-8")  # noqa: SIM115 - open for the server's life
    anyio.run(serve, args.port, args.discover_scope, args.legacy)


if __name__ == "__main__":
    main()
