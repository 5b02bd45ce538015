"""A TCP relay on 127.0.0.1 in front of a real HTTP server, which cuts one connection.

It passes bytes both ways, unchanged, and keeps what each connection carried. The first
connection whose bytes from the server contain ``cut_after`` is cut right after those bytes
reach the client, as a dropped network link would: the server is not told, and goes on.
A request that resumes a stream (it carries ``Last-Event-ID``) reaches the server only
``hold`` seconds after the cut (the link is down that long), so that what the server sends
meanwhile is missed. ``cut_methods`` limits the cut to connections whose last request used
one of them (``(b"GET",)``: the listening stream only).
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any


class Link:
    """One client connection through the relay: what went each way."""

    def __init__(self) -> None:
        self.sent = bytearray()  # client to server
        self.received = bytearray()  # server to client
        self.cut = False


class CuttingRelay:
    def __init__(self, upstream_port: int, cut_after: bytes | None = None, hold: float = 0.0,
                 cut_methods: tuple[bytes, ...] = (b"GET", b"POST")) -> None:
        self.upstream_port = upstream_port
        self.cut_after = cut_after
        self.hold = hold
        self.cut_methods = cut_methods
        self.cut_at: float | None = None
        self._up = threading.Event()
        self.links: list[Link] = []
        self._lock = threading.Lock()
        self._cut_done = False
        self._sockets: list[socket.socket] = []
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="test-relay").start()

    def url(self, path: str = "/mcp") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def cut_link(self) -> Link | None:
        return next((link for link in self.links if link.cut), None)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        except OSError:
            _shut(client)
            return
        link = Link()
        with self._lock:
            self.links.append(link)
            self._sockets += [client, upstream]
        threading.Thread(target=self._pump, args=(client, upstream, link, False), daemon=True).start()
        threading.Thread(target=self._pump, args=(upstream, client, link, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, link: Link, from_server: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                (link.received if from_server else link.sent).extend(data)
                if not from_server and self.cut_at is not None and b"last-event-id:" in data.lower():
                    self._up.wait(max(0.0, self.cut_at + self.hold - time.monotonic()))  # (close() ends it)
                sink.sendall(data)
                if from_server and self._should_cut(link):
                    break
        except OSError:
            pass
        for sock in (source, sink):
            _shut(sock)

    def _should_cut(self, link: Link) -> bool:
        if self.cut_after is None:
            return False
        with self._lock:
            if self._cut_done or self.cut_after not in link.received:
                return False
            if last_method(link.sent) not in self.cut_methods:
                return False
            self._cut_done = link.cut = True
            self.cut_at = time.monotonic()
            return True

    def close(self) -> None:
        self._closed = True
        self._up.set()
        _shut(self._listener)
        with self._lock:
            for sock in self._sockets:
                _shut(sock)

    def __enter__(self) -> CuttingRelay:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def last_method(sent: bytes | bytearray) -> bytes | None:
    """The method of the last request in ``sent`` (requests follow bodies with no line break)."""
    found = {method: bytes(sent).rfind(method + b" /") for method in (b"GET", b"POST", b"DELETE")}
    method, at = max(found.items(), key=lambda item: item[1])
    return method if at >= 0 else None


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
