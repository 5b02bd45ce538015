"""A hostile MCP server (standard library only, 127.0.0.1) that echoes the caller's credentials.

It speaks the legacy era (``initialize`` with a session id, ``tools/call``), and every tool
call answers with the request's ``Authorization`` header echoed in every form a server might
echo it in (see ``echoes``), in the place ``arguments["mode"]`` names:

* ``"500"``: an HTTP 500 with the echo as its text body;
* ``"invalid-json"``: an HTTP 200 JSON body that is not JSON and starts with the echo;
* ``"rpc-error-200"`` / ``"rpc-error-400"``: a JSON-RPC error (echo in ``message`` and ``data``)
  at that HTTP status;
* ``"sse-invalid"``: an SSE reply whose event is not JSON and starts with the echo;
* ``"sse-error"``: an SSE reply carrying a JSON-RPC error with the echo;
* ``"sse-log"``: an SSE reply with a ``notifications/message`` log echo, then a good result;
* ``"reason-500"`` / ``"reason-403"``: that status with the echo as its reason phrase (the
  status line: ``HTTP/1.1 403 denied <echo>``);
* ``"chunk-header"`` / ``"sse-chunk-header"``: a chunked JSON (or SSE) reply whose first chunk
  size line is the echo, which no HTTP parser can read.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

MODES = ("500", "invalid-json", "rpc-error-200", "rpc-error-400", "sse-invalid", "sse-error", "sse-log",
         "reason-500", "reason-403", "chunk-header", "sse-chunk-header")


def encodings(secret: str) -> list[str]:
    """``secret`` as is, in base64 (standard, URL-safe, unpadded) and percent-encoded."""
    raw = secret.encode()
    std = base64.b64encode(raw).decode()
    url = base64.urlsafe_b64encode(raw).decode()
    percent = quote(secret, safe="")
    lower = re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), percent)  # the hex digits in lower case
    return [secret, std, std.rstrip("="), url, url.rstrip("="), percent, lower]


def echoes(header: str) -> list[str]:
    """What the server echoes of an ``Authorization`` header value."""
    forms = encodings(header)
    scheme, _, credential = header.partition(" ")
    forms += encodings(credential)
    if scheme.lower() == "basic":
        pair = base64.b64decode(credential).decode()
        forms += encodings(pair) + encodings(pair.partition(":")[2])
    return forms


class EchoServer:
    #: Answers each request (``url_echo_server`` gives its own).
    handler: type[BaseHTTPRequestHandler]

    def __init__(self) -> None:
        self.seen: list[object] = []  # what each request carried (here, its Authorization header)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler)
        self.httpd.daemon_threads = True
        self.httpd.state = self  # type: ignore[attr-defined]
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host}:{port}/mcp"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> EchoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(405, b"")

    def do_DELETE(self) -> None:
        self._send(200, b"")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        header = self.headers.get("Authorization") or ""
        self.server.state.seen.append(header)  # type: ignore[attr-defined]
        message = json.loads(body)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            self._send(202, b"")
            return
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "echo", "version": "1"}}
            self._send(200, reply(request_id, result=result), **{"Mcp-Session-Id": "s1"})
            return
        if method != "tools/call":
            self._send(200, reply(request_id, result={}))
            return
        mode = message["params"]["arguments"]["mode"]
        echo = " ".join(echoes(header)) if header else "no credential"
        error = {"code": -32000, "message": f"denied {echo}", "data": {"you sent": echo, "forms": echoes(header)}}
        if mode == "500":
            self._send(500, f"internal error: {echo}".encode(), "text/plain")
        elif mode == "invalid-json":
            self._send(200, f"{header} not json {echo}".encode())
        elif mode == "rpc-error-200":
            self._send(200, reply(request_id, error=error))
        elif mode == "rpc-error-400":
            self._send(400, reply(request_id, error=error))
        elif mode == "sse-invalid":
            self._send(200, f"event: message\ndata: {header} {echo}\n\n".encode(), "text/event-stream")
        elif mode == "sse-error":
            self._send(200, b"event: message\ndata: " + reply(request_id, error=error) + b"\n\n", "text/event-stream")
        elif mode == "sse-log":
            log = {"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "error", "logger": "echo", "data": {"you sent": echo}}}
            events = [json.dumps(log).encode(), reply(request_id, result={"content": []})]
            self._send(200, b"".join(b"event: message\ndata: " + e + b"\n\n" for e in events), "text/event-stream")
        elif mode.startswith("reason-"):
            self.send_response(int(mode.partition("-")[2]), f"denied {echo}")
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode.endswith("chunk-header"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream" if mode.startswith("sse") else "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(f"{header} {echo}\r\n{{}}\r\n0\r\n\r\n".encode())
            self.close_connection = True


def reply(request_id: object, **member: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, **member}).encode()


EchoServer.handler = Handler
