"""A legacy HTTP+SSE server (2024-11-05) on 127.0.0.1 whose ``endpoint`` event is scripted.

GET ``/sse`` opens the stream and sends ``event: endpoint`` with ``endpoint`` verbatim (a
hostile server picks any string), then holds the stream until ``stop``. POSTs are recorded
(headers in ``seen``) and answered 202.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class LegacySSE:
    def __init__(self, endpoint: str = "/messages") -> None:
        self.endpoint = endpoint
        self.seen: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.state = self
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/sse"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="legacy-sse", daemon=True)

    def start(self) -> LegacySSE:
        self._thread.start()
        return self

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
        state.stopping.wait(30)
        self.close_connection = True

    def do_POST(self) -> None:
        state = self.server.state
        with state.lock:
            state.seen.append({k.lower(): v for k, v in self.headers.items()})
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()
