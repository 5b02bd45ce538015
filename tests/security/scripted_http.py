"""A scripted HTTP server on 127.0.0.1 for the OAuth layer: each path answers as told.

``routes`` maps a path to an ``Answer`` (status, reason phrase, headers, body) or to a
function of the request's path, headers and body returning one. ``chunk_header``, when set, sends the
body chunked with that text as the first chunk's size line (which no HTTP parser can read).
Every request's path and headers (names lower-cased) are recorded in ``seen``. Several of these
on different ports are different origins.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union

from attrs import define, field


@define
class Answer:
    status: int = 200
    body: bytes = b""
    reason: str | None = None
    headers: dict[str, str] = field(factory=lambda: {"Content-Type": "application/json"})
    chunk_header: str | None = None


Route = Union[Answer, Callable[[str, dict[str, str], bytes], Answer]]


class ScriptedHTTP:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.state = self
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="scripted-http", daemon=True)

    def __enter__(self) -> ScriptedHTTP:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)

    def headers_seen(self) -> list[str]:
        """Every header line received, as ``name: value``."""
        with self.lock:
            return [f"{name}: {value}" for _, headers in self.seen for name, value in headers.items()]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    state: ScriptedHTTP

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_GET(self) -> None:
        self._answer(b"")

    def do_POST(self) -> None:
        self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def do_DELETE(self) -> None:
        self._answer(b"")

    def _answer(self, body: bytes) -> None:
        state = self.server.state
        path = self.path.partition("?")[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            state.seen.append((path, headers))
        route = state.routes.get(path, Answer(404, b"{}"))
        answer = route(path, headers, body) if callable(route) else route
        self.send_response(answer.status, answer.reason)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if answer.chunk_header is not None:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(f"{answer.chunk_header}\r\n{{}}\r\n0\r\n\r\n".encode())
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)
