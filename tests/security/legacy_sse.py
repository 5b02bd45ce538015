"""A legacy HTTP+SSE server (2024-11-05) on 127.0.0.1 whose ``endpoint`` event is scripted.

GET ``/sse`` opens the stream and sends ``event: endpoint`` with ``endpoint`` verbatim (a
hostile server picks any string), then holds the stream until ``stop``, sending each event
``push`` queues. POSTs are recorded (headers in ``seen``) and answered 202, or with
``post_status`` and the reason phrase ``post_reason(headers)`` when set; ``answer(message,
headers)``, when set, gives the raw ``data`` texts sent as ``message`` events for each POST.
``scripted`` starts one that answers a legacy client's handshake and pings.
"""

from __future__ import annotations

import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


class LegacySSE:
    def __init__(self, endpoint: str = "/messages") -> None:
        self.endpoint = endpoint
        self.seen: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.events: queue.Queue[str] = queue.Queue()
        self.post_status = 202
        self.post_reason: Callable[[dict[str, str]], str] | None = None
        self.answer: Callable[[Any, dict[str, str]], list[str]] | None = None
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.state = self
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/sse"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="legacy-sse", daemon=True)

    def start(self) -> LegacySSE:
        self._thread.start()
        return self

    def push(self, data: str) -> None:
        self.events.put(data)

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    state: LegacySSE

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        state = self.server.state
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(f"event: endpoint\ndata: {state.endpoint}\n\n".encode())
        self.wfile.flush()
        while not state.stopping.is_set():
            try:
                data = state.events.get(timeout=0.05)
            except queue.Empty:
                continue
            self.wfile.write(f"event: message\ndata: {data}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def do_POST(self) -> None:
        state = self.server.state
        with state.lock:
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.seen.append(headers)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if state.answer is not None:
            for data in state.answer(json.loads(body), headers):
                state.push(data)
        self.send_response(state.post_status, state.post_reason(headers) if state.post_reason else None)
        self.send_header("Content-Length", "0")
        self.end_headers()


INIT = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy", "version": "1"}}


def scripted(answer_call: Callable[[Any], str]) -> LegacySSE:
    """A started legacy server; ``answer_call(id)`` is the JSON text of its reply to ``tools/call``."""
    server = LegacySSE()

    def answer(message: Any, headers: dict[str, str]) -> list[str]:
        if "id" not in message:
            return []
        if message["method"] == "tools/call":
            return [answer_call(message["id"])]
        result = INIT if message["method"] == "initialize" else {}
        return [json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})]

    server.answer = answer
    return server.start()
