"""An HTTP front on 127.0.0.1 before a real MCP server, playing faults on the requests it is told.

It passes every request on to the server behind it and streams the answer back, unchanged but
for its connection: each response closes its connection (nothing is kept alive, so a dropped
connection is never one the client reused). ``fault(method, action, tool=None, times=1)`` queues
a fault for the next POSTs of the JSON-RPC ``method`` (a ``tools/call`` of ``tool``, if given),
played in the order queued:

* ``Refuse(status, retry_after)``: answer ``status`` (with ``Retry-After: retry_after`` when
  given) and never pass the request on: the server does not see it;
* ``Drop()``: pass the request on, read the server's whole answer (the call ran), then close the
  connection with nothing sent back, as a link that fails just then.

``down()`` closes the listener and every connection; the port stays bound but does not listen,
so a new connection is refused (``ECONNREFUSED``), as for a server restarting. ``up()`` listens
again on the same port. ``posts`` records ``(method, tool, done)`` for each POST, ``done``
being ``"passed"``, ``"refused 503"``, ``"dropped"``.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from urllib.parse import urlsplit
from http.server import BaseHTTPRequestHandler
from typing import Any

import attrs

from tests.http.relay import _shut

#: Headers of one hop only: never passed on.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "upgrade",
                        "content-length"})


@attrs.frozen
class Refuse:
    status: int = 503
    retry_after: str | None = None


@attrs.frozen
class Drop:
    pass


@attrs.define
class _Fault:
    method: str
    tool: str | None
    action: Any
    times: int


class FaultyFront:
    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname, parts.port)
        self.path = parts.path
        self.posts: list[tuple[str | None, str | None, str]] = []
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._closed = False
        self._listener = self._bound(0)
        self.port = self._listener.getsockname()[1]
        self.up()

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    # -- faults -------------------------------------------------------------------------------

    def fault(self, method: str, action: Any, *, tool: str | None = None, times: int = 1) -> None:
        with self._lock:
            self._faults.append(_Fault(method, tool, action, times))

    def _take(self, method: str | None, tool: str | None) -> Any:
        with self._lock:
            for fault in self._faults:
                if fault.method == method and (fault.tool is None or fault.tool == tool):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault.action
        return None

    def seen(self, method: str, tool: str | None = None) -> list[str]:
        """What was done with each POST of ``method`` (and ``tool``), in order."""
        with self._lock:
            return [done for m, t, done in self.posts if m == method and (tool is None or t == tool)]

    # -- up and down --------------------------------------------------------------------------

    def _bound(self, port: int) -> socket.socket:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        return sock

    def up(self) -> None:
        with self._lock:
            listener = self._listener
            listener.listen(64)
        threading.Thread(target=self._accept, args=(listener,), daemon=True, name="test-front").start()

    def down(self) -> None:
        """Refuse new connections and cut every open one."""
        self._cut(rebind=True)

    def _cut(self, rebind: bool) -> None:
        with self._lock:
            _shut(self._listener)
            if rebind:
                self._listener = self._bound(self.port)  # bound, not listening: connections are refused
            sockets, self._sockets = list(self._sockets), set()
        for sock in sockets:
            _shut(sock)

    def close(self) -> None:
        self._closed = True
        self._cut(rebind=False)

    def __enter__(self) -> FaultyFront:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _accept(self, listener: socket.socket) -> None:
        while not self._closed:
            try:
                sock, address = listener.accept()
            except OSError:
                return
            with self._lock:
                self._sockets.add(sock)
            threading.Thread(target=self._serve, args=(sock, address), daemon=True).start()

    def _serve(self, sock: socket.socket, address: Any) -> None:
        try:
            _Handler(sock, address, self)  # type: ignore[arg-type]
        except (OSError, http.client.HTTPException):  # a connection cut by down() or close()
            pass
        finally:
            with self._lock:
                self._sockets.discard(sock)
            _shut(sock)

    def _upstream(self) -> http.client.HTTPConnection:
        connection = http.client.HTTPConnection(*self.upstream)
        connection.connect()
        with self._lock:
            if connection.sock is not None:
                self._sockets.add(connection.sock)
        return connection


class _Handler(BaseHTTPRequestHandler):
    server: FaultyFront  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"

    def __init__(self, sock: socket.socket, address: Any, front: FaultyFront) -> None:
        super().__init__(sock, address, front)  # type: ignore[arg-type]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._pass(None)

    def do_DELETE(self) -> None:
        self._pass(None)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        method, tool = _names(body)
        action = self.server._take(method, tool)
        if isinstance(action, Refuse):
            self.server.posts.append((method, tool, f"refused {action.status}"))
            self.send_response(action.status)
            if action.retry_after is not None:
                self.send_header("Retry-After", action.retry_after)
            self.send_header("Content-Length", "4")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"busy")
            self.close_connection = True
            return
        if isinstance(action, Drop):
            upstream = self._forward(body)
            upstream.getresponse().read()  # the server answered: the call ran
            upstream.close()
            self.server.posts.append((method, tool, "dropped"))
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.server.posts.append((method, tool, "passed"))
        self._pass(body)

    def _forward(self, body: bytes | None) -> http.client.HTTPConnection:
        upstream = self.server._upstream()
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
        upstream.request(self.command, self.path, body=body, headers=headers)
        return upstream

    def _pass(self, body: bytes | None) -> None:
        upstream = self._forward(body)
        try:
            response = upstream.getresponse()
            self.send_response(response.status, response.reason)
            for name, value in response.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            if response.getheader("Content-Length") is not None:
                self.send_header("Content-Length", response.getheader("Content-Length"))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.flush()
            while chunk := response.read1(65536):
                self.wfile.write(chunk)
                self.wfile.flush()
        finally:
            upstream.close()
            self.close_connection = True


def _names(body: bytes) -> tuple[str | None, str | None]:
    """The JSON-RPC method of a POST, and the tool's name for ``tools/call``."""
    try:
        message = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(message, dict):
        return None, None
    method = message.get("method")
    params = message.get("params")
    tool = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
    return method, tool


__all__ = ["Drop", "FaultyFront", "Refuse"]
