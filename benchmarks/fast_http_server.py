"""A minimal, fast Streamable HTTP MCP server (standard library only) for the HTTP benchmark.

Usage::

    python benchmarks/fast_http_server.py --json|--sse [--port N] [--content-length] [--exit-on-eof]

It prints ``http://127.0.0.1:PORT/mcp`` on stdout once it listens (port 0, the default, picks
a free one), and exits on SIGTERM/SIGINT, or, with ``--exit-on-eof``, when its stdin reaches end
of file (so it never outlives the benchmark process that holds the other end of the pipe).

HTTP/1.1 with keep-alive, written on ``asyncio.Protocol`` rather than ``http.server``: one
event-loop thread parsing requests by hand serves several times more requests per second than
``ThreadingHTTPServer`` (see benchmarks/README.md), so the clients are the bottleneck.

``/mcp`` speaks the handshake era of MCP (like ``tests/servers/fast_server.py``, canned replies):

* ``POST`` a request: the reply as ``application/json`` (``--json``) or as a one-event SSE
  stream (``--sse``: ``Content-Type: text/event-stream``, one ``message`` event, end of
  stream; chunked, as servers that stream replies send them, or with ``Content-Length`` when
  ``--content-length`` is given).
  ``initialize`` answers the client's protocol version (2025-11-25 if unknown) with a new
  ``Mcp-Session-Id``; ``tools/call`` ``echo`` returns ``arguments["text"]``, ``big`` returns
  ``arguments["size"]`` ``"x"`` characters; ``tools/list``, ``ping`` and the empty lists;
  anything else is error -32601.
* ``POST`` a notification or a response: ``202 Accepted``, empty body.
* ``GET`` (the server-message stream): ``405``. ``DELETE`` (end of session): ``200``.

``GET /stats`` answers ``{"connections": accepted TCP connections, "requests": HTTP requests,
"sessions": initialize requests answered}`` so the benchmark can count the connections and the
sessions each client opens.

Request bodies must carry ``Content-Length`` (411 otherwise); ``Connection: close`` is honoured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import threading

LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
DEFAULT_VERSION = "2025-11-25"
CAPABILITIES = {"tools": {}, "resources": {}, "prompts": {}, "completions": {}}
SERVER_INFO = {"name": "fast-http-server", "version": "1.0.0"}
TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text argument back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "big",
        "description": "Return one text block of `size` 'x' characters.",
        "inputSchema": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 0}}, "required": ["size"]},
    },
]
CANNED = {
    "ping": {},
    "tools/list": {"tools": TOOLS},
    "resources/list": {"resources": []},
    "resources/templates/list": {"resourceTemplates": []},
    "prompts/list": {"prompts": []},
}

STATUS_LINES = {
    200: b"HTTP/1.1 200 OK\r\n",
    202: b"HTTP/1.1 202 Accepted\r\n",
    400: b"HTTP/1.1 400 Bad Request\r\n",
    404: b"HTTP/1.1 404 Not Found\r\n",
    405: b"HTTP/1.1 405 Method Not Allowed\r\nAllow: POST, DELETE\r\n",
    411: b"HTTP/1.1 411 Length Required\r\n",
}
MAX_HEAD = 64 * 1024

stats = {"connections": 0, "requests": 0, "sessions": 0}
sessions = iter(range(1, 1 << 62))


def answer(message: dict) -> tuple[dict, dict[str, str]]:
    """The JSON-RPC reply to one request, and extra response headers."""
    method = message.get("method")
    params = message.get("params") or {}
    msg_id = message.get("id")
    if method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "echo" and isinstance(args.get("text"), str):
            text = args["text"]
        elif name == "big" and isinstance(args.get("size"), int) and args["size"] >= 0:
            text = "x" * args["size"]
        else:
            return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32602, "message": f"bad call of {name!r}"}}, {}
        return {"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": text}], "isError": False}}, {}
    if method == "initialize":
        stats["sessions"] += 1
        requested = params.get("protocolVersion")
        result = {
            "protocolVersion": requested if requested in LEGACY_VERSIONS else DEFAULT_VERSION,
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
        }
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}, {"Mcp-Session-Id": f"bench-{next(sessions)}"}
    if method in CANNED:
        return {"jsonrpc": "2.0", "id": msg_id, "result": CANNED[method]}, {}
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"Method not found: {method}"}}, {}


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: parses requests as bytes arrive, answers in order."""

    sse = False
    chunked = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stats["connections"] += 1
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        while buffer:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD:
                    self.respond(400, close=True)
                return
            head = bytes(buffer[:end]).decode("latin-1").split("\r\n")
            method, _, rest = head[0].partition(" ")
            path = rest.partition(" ")[0]
            length = 0
            close = False
            for line in head[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                if name == "content-length":
                    length = int(value)
                elif name == "connection":
                    close = value.strip().lower() == "close"
                elif name == "transfer-encoding":
                    self.respond(411, close=True)
                    return
            if len(buffer) < end + 4 + length:
                return  # the body is still coming
            body = bytes(buffer[end + 4 : end + 4 + length])
            del buffer[: end + 4 + length]
            stats["requests"] += 1
            self.handle(method, path, body, close)
            if close or self.transport.is_closing():
                return

    def handle(self, method: str, path: str, body: bytes, close: bool) -> None:
        if path.partition("?")[0] == "/stats" and method == "GET":
            self.respond(200, json.dumps(stats).encode(), "application/json", close=close)
        elif path.partition("?")[0] != "/mcp":
            self.respond(404, close=close)
        elif method == "POST":
            try:
                message = json.loads(body)
            except ValueError:
                self.respond(400, close=close)
                return
            if not isinstance(message, dict) or "method" not in message or "id" not in message:
                self.respond(202, close=close)  # a notification or a response
                return
            reply, headers = answer(message)
            data = json.dumps(reply, separators=(",", ":")).encode()
            if self.sse:
                self.respond_sse(data, headers, close)
            else:
                self.respond(200, data, "application/json", headers, close)
        elif method == "DELETE":
            self.respond(200, close=close)
        else:
            self.respond(405, close=close)

    def respond(
        self,
        status: int,
        body: bytes = b"",
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
        close: bool = False,
    ) -> None:
        head = STATUS_LINES[status]
        if content_type:
            head += b"Content-Type: " + content_type.encode() + b"\r\n"
        for name, value in (headers or {}).items():
            head += f"{name}: {value}\r\n".encode()
        if close:
            head += b"Connection: close\r\n"
        self.transport.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        if close:
            self.transport.close()

    def respond_sse(self, data: bytes, headers: dict[str, str], close: bool) -> None:
        event = b"event: message\ndata: " + data + b"\n\n"
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        for name, value in headers.items():
            head += f"{name}: {value}\r\n".encode()
        if close:
            head += b"Connection: close\r\n"
        if self.chunked:
            self.transport.write(head + b"Transfer-Encoding: chunked\r\n\r\n%x\r\n" % len(event) + event + b"\r\n0\r\n\r\n")
        else:
            self.transport.write(head + b"Content-Length: %d\r\n\r\n" % len(event) + event)
        if close:
            self.transport.close()


def _exit_on_stdin_eof() -> None:
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except (OSError, ValueError):
        pass
    os._exit(0)


async def serve(host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Connection, host, port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    print(f"http://{host}:{bound}/mcp", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A minimal, fast Streamable HTTP MCP server.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--json", action="store_true", help="reply with application/json bodies")
    mode.add_argument("--sse", action="store_true", help="reply with one-event SSE streams")
    parser.add_argument("--content-length", action="store_true", help="SSE replies with Content-Length, not chunked")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--exit-on-eof", action="store_true", help="exit when stdin reaches end of file")
    args = parser.parse_args(argv)
    Connection.sse = args.sse
    Connection.chunked = not args.content_length
    if args.exit_on_eof:
        threading.Thread(target=_exit_on_stdin_eof, daemon=True).start()
    asyncio.run(serve(args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
