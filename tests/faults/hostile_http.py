"""A hostile Streamable HTTP MCP server (standard library only) for the fault suite.

Run it in-process (``HostileHTTP().start()``) or as a process::

    python tests/faults/hostile_http.py        # prints "LISTENING <url>", serves until killed

It listens on 127.0.0.1 only, speaks the legacy era (``initialize`` with a session id,
``ping``, ``tools/call``; any other request gets -32601), answers GET with 405 and DELETE with
200. It counts, per call key (``arguments["key"]``), every POST received (``posts``) and
every execution (``executions``), and records the headers of every request (``seen``) and
every notification (``notifications``).

``tools/call`` arguments choose the fault; ``times`` (default 1) says for how many POSTs of
that key it is played before the call is answered normally:

* ``{"fault": "status", "status": 503, "retry_after": "0"}``: that status, not executed
  (``retry_after`` omitted: no header). A 500 or 502 is sent *after* executing, as a server
  that crashed mid-way would.
* ``{"fault": "reset"}``: execute, then reset the connection (RST) instead of answering.
* ``{"fault": "stall"}``: execute, start an SSE reply with half an event, then stall.
* ``{"fault": "content_type"}``: execute, answer 200 with ``text/html``.
* ``{"fault": "mislabelled", "label": "text/plain"}``: execute, answer 200 with the JSON-RPC
  reply labelled ``label`` (``""``: no Content-Type); ``"body"`` replaces the reply.
* ``{"fault": "hang"}``: never answer, not executed.
* ``{"fault": "expire"}``: end the session before this POST: 404, not executed (the
  server-wide ``lost_session`` says how an unknown session is answered: 404 as the spec asks,
  or 400 with JSON-RPC -32000 "Bad Request: No valid session ID provided" as the TypeScript
  SDK's examples do; 200, a broken server: it serves any session id; any other status: that
  status, a broken server too). ``restart()`` forgets every session.

``init_result`` is the ``initialize`` result it answers (change it before the client opens);
``notification_status`` (default None: 202) the status every notification POST gets.
``idle_close`` (seconds, default None): a kept-alive connection that idled at least that long
is closed (RST) when its next request arrives, unanswered, as a server whose keep-alive timer
fires just as the client reuses the connection (``dropped`` counts them). ``tools/list``
offers ``echo`` (no hints), ``reader`` (``readOnlyHint``) and ``setter`` (``idempotentHint``).
* ``{"fault": "redirect", "to": url}``: 307 to ``url``, not executed.
* ``{"fault": "echo_auth", "status": 401}``: that status with the request's Authorization
  header (and every other header) echoed in the body, not executed; with ``"pad": n``, the
  body is ``n`` bytes of padding then the credential alone.
* ``{"fault": "sse"}``: answer on an SSE stream instead of a JSON body.
"""

from __future__ import annotations

import collections
import itertools
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "hostile-http", "version": "1.0"},
}


class HostileHTTP:
    """The server state and its ThreadingHTTPServer, on 127.0.0.1 and a free port."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.posts: collections.Counter[str] = collections.Counter()
        self.executions: collections.Counter[str] = collections.Counter()
        self.seen: list[dict[str, str]] = []
        self.notifications: list[dict[str, Any]] = []
        self.record_headers = True
        self.sessions: set[str] = set()
        self.lost_session = 404
        self.idle_close: float | None = None
        self.init_result: dict[str, Any] = dict(INIT_RESULT)
        self.notification_status: int | None = None
        self.dropped = 0
        self.session_ids = itertools.count(1)
        self.stopping = threading.Event()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.state = self
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host}:{port}/mcp"
        self.origin = f"http://{host}:{port}"
        self._thread: threading.Thread | None = None

    def start(self) -> HostileHTTP:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="hostile-http", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def restart(self) -> None:
        """A restart that forgets its sessions (the port stays)."""
        with self.lock:
            self.sessions.clear()

    def headers_with(self, text: str) -> list[dict[str, str]]:
        with self.lock:
            return [h for h in self.seen if any(text in v for v in h.values())]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256  # 64 callers connect at once
    allow_reuse_address = True
    state: HostileHTTP

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # resets and stalls are deliberate: no tracebacks on stderr


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- plumbing ---------------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        self._last_done: float | None = None  # when this connection's last reply went out
        # Headers and body go out in two writes: without this, Nagle and delayed ACKs add 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle_one_request(self) -> None:
        state = self.server.state
        last = self._last_done
        if state.idle_close is not None and last is not None and self.rfile.peek(1):  # waits for it
            if time.monotonic() - last >= state.idle_close:
                with state.lock:
                    state.dropped += 1
                self._reset()
                return
        super().handle_one_request()
        self._last_done = time.monotonic()

    def _record(self) -> None:
        state = self.server.state
        if state.record_headers:
            with state.lock:
                state.seen.append({k.lower(): v for k, v in self.headers.items()})

    def _send(self, status: int, body: bytes = b"", content_type: str | None = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _unknown_session(self) -> None:
        status = self.server.state.lost_session
        if status == 400:
            self._send(400, json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32000, "message": "Bad Request: No valid session ID provided"}}).encode())
        elif status == 404:
            self._send(404, b'{"error": "unknown session"}')
        else:
            self._send(status, b"something went wrong", content_type="text/plain")

    def _json(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send(200, json.dumps(message).encode(), headers=headers)

    def _reset(self) -> None:
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    # -- verbs ------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._record()
        self._send(405, content_type=None)

    def do_DELETE(self) -> None:
        self._record()
        with self.server.state.lock:
            self.server.state.sessions.discard(self.headers.get("Mcp-Session-Id", ""))
        self._send(200, content_type=None)

    def do_POST(self) -> None:
        self._record()
        state = self.server.state
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        message = json.loads(body)
        method = message.get("method")
        msg_id = message.get("id")
        if method == "initialize":
            session = f"session-{next(state.session_ids)}"
            with state.lock:
                state.sessions.add(session)
            self._json({"jsonrpc": "2.0", "id": msg_id, "result": state.init_result}, {"Mcp-Session-Id": session})
            return
        with state.lock:
            known = self.headers.get("Mcp-Session-Id") in state.sessions or state.lost_session == 200
        if not known:
            self._unknown_session()
            return
        if msg_id is None:  # a notification (or a reply)
            with state.lock:
                state.notifications.append(message)
            if state.notification_status is not None:
                self._send(state.notification_status, b"server error", content_type="text/plain")
                return
            self._send(202, content_type=None)
            return
        if method == "ping":
            self._json({"jsonrpc": "2.0", "id": msg_id, "result": {}})
        elif method == "tools/list":
            schema = {"type": "object"}
            self._json({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": [
                {"name": "echo", "inputSchema": schema},
                {"name": "reader", "inputSchema": schema, "annotations": {"readOnlyHint": True}},
                {"name": "setter", "inputSchema": schema, "annotations": {"idempotentHint": True}},
            ]}})
        elif method == "tools/call":
            self._tools_call(message)
        else:
            self._json({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"no {method}"}})

    def _tools_call(self, message: dict[str, Any]) -> None:
        state = self.server.state
        msg_id = message["id"]
        args = (message.get("params") or {}).get("arguments") or {}
        key = str(args.get("key", ""))
        with state.lock:
            state.posts[key] += 1
            attempt = state.posts[key]
        fault = args.get("fault") if attempt <= int(args.get("times", 1)) else None
        status = int(args.get("status", 500))

        def execute() -> dict[str, Any]:
            with state.lock:
                state.executions[key] += 1
            text = str(args.get("text", key))
            return {"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": text}]}}

        if fault == "status":
            if status in (500, 502):
                execute()
            extra = {"Retry-After": str(args["retry_after"])} if "retry_after" in args else {}
            self._send(status, b'{"detail": "try again"}', headers=extra)
        elif fault == "reset":
            execute()
            self._reset()
        elif fault == "stall":
            execute()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b'event: message\ndata: {"jsonrpc": "2.0", "id"')
            self.wfile.flush()
            state.stopping.wait(30)
            self.close_connection = True
        elif fault == "hang":
            state.stopping.wait(30)  # never answers (until the server stops)
            self.close_connection = True
        elif fault == "content_type":
            execute()
            self._send(200, b"<html>hello</html>", content_type="text/html")
        elif fault == "mislabelled":
            body = json.dumps(execute()).encode() if "body" not in args else str(args["body"]).encode()
            self._send(200, body, content_type=str(args.get("label", "")) or None)
        elif fault == "expire":
            with state.lock:
                state.sessions.discard(self.headers.get("Mcp-Session-Id", ""))
            self._unknown_session()
        elif fault == "redirect":
            self._send(307, content_type=None, headers={"Location": str(args["to"])})
        elif fault == "echo_auth":
            if "pad" in args:  # the credential alone, after ``pad`` bytes
                credential = self.headers.get("Authorization") or self.headers.get("X-Api-Key") or ""
                echoed = b"p" * int(args["pad"]) + credential.encode()
            else:
                echoed = json.dumps({"you sent": dict(self.headers.items())}).encode()
            self._send(status, echoed)
        elif fault == "sse":
            data = json.dumps(execute()).encode()
            self._send(200, b"event: message\ndata: " + data + b"\n\n", content_type="text/event-stream")
        else:
            self._json(execute())


if __name__ == "__main__":
    server = HostileHTTP()
    if sys.argv[1:2] == ["--lost-session"]:  # how an unknown session is answered: 404, 400, 200, 500...
        server.lost_session = int(sys.argv[2])
    server.record_headers = False  # a long-running process must not grow without bound
    print(f"LISTENING {server.url}", flush=True)
    try:
        server.httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        sys.exit(0)
