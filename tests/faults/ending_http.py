"""A raw-socket MCP server on 127.0.0.1 whose replies can be withheld, trickled or bloated.

``http.server`` cannot send a byte of the status line at a time or keep a close-delimited
body open, so this double writes HTTP by hand. One thread per connection, keep-alive.

Server-wide settings: ``drop_discover`` (a ``server/discover`` POST has its connection closed
without an answer, as an old server that dies on an unknown method would), ``modern`` (answers ``server/discover`` as a 2026-07-28 server, which
keeps no session), ``stateless`` (no ``Mcp-Session-Id``), ``reply`` (``"json"`` or ``"sse"``
bodies for normal answers), ``get_stream`` (``None``: GET gets 405; ``"close_delimited"`` or ``"chunked"``:
a silent event stream of that framing), and ``legacy_sse`` (the 2024-11-05 HTTP+SSE transport:
GET ``/sse`` is the event stream, close-delimited and silent after its ``endpoint`` event,
POST ``/messages`` answers 202 and replies go on the stream), and ``tls`` (an
``ssl.SSLContext``: an HTTPS server, its URL ``https``).

``tools/call`` arguments pick the behaviour of that POST (``key`` names the call):

* ``hold``: read the request, then send nothing until the client goes away.
* ``trickle_headers`` / ``trickle_body``: a byte every ``interval`` seconds (0.2), in the
  status line and headers, or in a JSON body announced with a Content-Length.
* ``close_delimited``: headers without Content-Length or chunking (``Connection: close``), then
  silence; ``content_type`` says JSON or SSE.
* ``wrong_id``: a JSON reply whose id is not the request's.
* ``gzip``: a gzip body inflating to ``size`` bytes of a text result (JSON or SSE per
  ``reply``), a few hundred KB on the wire for hundreds of MB.
* (legacy_sse only) ``noreply``: 202 and no reply on the stream; ``big_event``: 202, then an
  event of ``size`` bytes on the stream.
* ``progress``: an SSE reply carrying a progress notification every ``interval`` seconds for
  the call's ``progressToken``, and never the result (until the client goes away).
* ``retry_after``: HTTP 503 with ``Retry-After: <seconds>`` the first time, not executed.
* ``after_reply``: a chunked SSE reply, then per ``after``: ``"end"``, the end of the stream in
  the same write; ``"late"``, ``seconds`` of silence, a ``notifications/message`` log event
  (``data`` is the key), then the end; ``"split"``, half the end, ``seconds`` of silence, the
  other half; ``"trailer"``, the end with a trailer field.

``stall()`` makes the whole server a TCP peer that accepts and reads but never answers (a
stalled process whose kernel still takes connections): every request read from then on, of
any method (a ``notifications/cancelled`` POST, the DELETE), is counted in ``held[method]``
and held until the client goes away.

``methods`` counts the POSTs read, by JSON-RPC method. For every key: ``arrived[key]`` is
set when its request was read, ``gone[key]`` when the client
closed or shut down that connection afterwards; ``posts`` and ``executions`` count, and
``accepted`` and ``ended`` count the TCP connections opened and those the client closed.
"""

from __future__ import annotations

import collections
import json
import select
import socket
import ssl
import threading
import zlib
from typing import Any

INIT = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "ending-http", "version": "1"}}
DISCOVER = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "ending-http", "version": "1"}}


class _Gone(Exception):
    pass


class EndingServer:
    def __init__(self, *, stateless: bool = False, reply: str = "json", get_stream: str | None = None,
                 legacy_sse: bool = False, interval: float = 0.2, modern: bool = False,
                 drop_discover: bool = False, tls: ssl.SSLContext | None = None) -> None:
        self.modern = modern
        self.drop_discover = drop_discover
        self.stateless = stateless or modern
        self.reply = reply
        self.get_stream = get_stream
        self.legacy_sse = legacy_sse
        self.interval = interval
        self.lock = threading.Lock()
        self.arrived: collections.defaultdict[str, threading.Event] = collections.defaultdict(threading.Event)
        self.gone: collections.defaultdict[str, threading.Event] = collections.defaultdict(threading.Event)
        self.posts: collections.Counter[str] = collections.Counter()
        self.executions: collections.Counter[str] = collections.Counter()
        self.accepted = 0
        self.ended = 0
        self.held: collections.Counter[str] = collections.Counter()
        self.methods: collections.Counter[str] = collections.Counter()
        self.stalled = threading.Event()
        self.stream_open = threading.Event()
        self.stream_gone = threading.Event()
        self.stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._stream: socket.socket | None = None
        self._listener = socket.create_server(("127.0.0.1", 0))
        port = self._listener.getsockname()[1]
        self.tls = tls
        self.origin = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
        self.url = self.origin + ("/sse" if legacy_sse else "/mcp")

    def start(self) -> EndingServer:
        threading.Thread(target=self._accept, name="ending-http", daemon=True).start()
        return self

    def kill(self) -> None:
        """Server death: stop listening and close every connection."""
        self.stopping.set()
        try:
            self._listener.close()
        except OSError:
            pass
        with self.lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
                conn.close()
            except OSError:
                pass

    stop = kill

    def stall(self) -> None:
        """From now on, read every request and never answer it (see the module docstring)."""
        self.stalled.set()

    # -- plumbing ---------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self._conns.add(conn)
                self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        if self.tls is not None:
            try:
                conn = self.tls.wrap_socket(conn, server_side=True)
            except (OSError, ssl.SSLError):
                conn.close()
                return
        reader = conn.makefile("rb")
        try:
            while not self.stopping.is_set():
                line = reader.readline()
                if not line:
                    return
                method, path = line.decode().split(" ")[:2]
                headers: dict[str, str] = {}
                while True:
                    raw = reader.readline()
                    if raw in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = raw.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = reader.read(int(headers.get("content-length", "0")))
                if not self._handle(conn, method, path, headers, body):
                    return
        except (OSError, ValueError, _Gone):
            return
        finally:
            with self.lock:
                self._conns.discard(conn)
                self.ended += 1
            try:
                conn.close()
            except OSError:
                pass

    def _wait_gone(self, conn: socket.socket, seconds: float | None = None) -> bool:
        """Block until the client closes the connection (True) or ``seconds`` pass (False)."""
        waited = 0.0
        while not self.stopping.is_set():
            step = 0.05
            readable, _, _ = select.select([conn], [], [], step)
            if readable:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return True
                if not data:
                    return True
            waited += step
            if seconds is not None and waited >= seconds:
                return False
        return False

    def _send(self, conn: socket.socket, status: str, body: bytes = b"", content_type: str | None = None,
              extra: dict[str, str] | None = None) -> None:
        head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}"]
        if content_type:
            head.append(f"Content-Type: {content_type}")
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)

    def _answer(self, conn: socket.socket, message: dict[str, Any], extra: dict[str, str] | None = None) -> None:
        data = json.dumps(message).encode()
        if self.reply == "sse":
            self._send(conn, "200 OK", b"event: message\ndata: " + data + b"\n\n", "text/event-stream", extra)
        else:
            self._send(conn, "200 OK", data, "application/json", extra)

    # -- requests ---------------------------------------------------------------------------

    def _handle(self, conn: socket.socket, method: str, path: str, headers: dict[str, str], body: bytes) -> bool:
        if self.stalled.is_set():
            name = method if method != "POST" else str(json.loads(body).get("method"))
            with self.lock:
                self.held[name] += 1
            self._wait_gone(conn)
            return False
        if method == "GET":
            return self._get(conn, path)
        if method == "DELETE":
            self._send(conn, "200 OK")
            return True
        message = json.loads(body)
        with self.lock:
            self.methods[str(message.get("method"))] += 1
        if self.legacy_sse:
            mode = self._mode(message)
            if mode == "hold":
                return self._hold(conn, message)
            self._send(conn, "202 Accepted")
            if mode == "noreply":
                self.arrived[str(self._args(message).get("key", ""))].set()
                return True
            if mode == "big_event" and self._stream is not None:
                self._stream.sendall(b"event: message\ndata: " + b"x" * int(self._args(message)["size"]))
                return True
            reply = self._reply(message)
            if reply is not None and self._stream is not None:
                data = json.dumps(reply).encode()
                self._stream.sendall(b"event: message\ndata: " + data + b"\n\n")
            return True
        if "id" not in message:
            self._send(conn, "202 Accepted")
            return True
        if message.get("method") == "initialize":
            extra = {} if self.stateless else {"Mcp-Session-Id": "s-1"}
            self._answer(conn, {"jsonrpc": "2.0", "id": message["id"], "result": INIT}, extra)
            return True
        if message.get("method") == "server/discover" and self.drop_discover:
            self.arrived["server/discover"].set()
            return False  # the connection is closed with no answer
        if message.get("method") == "server/discover" and self.modern:
            self._answer(conn, {"jsonrpc": "2.0", "id": message["id"], "result": DISCOVER})
            return True
        if message.get("method") != "tools/call":
            self._answer(conn, {"jsonrpc": "2.0", "id": message["id"], "result": {}})
            return True
        return self._tools_call(conn, message)

    @staticmethod
    def _args(message: dict[str, Any]) -> dict[str, Any]:
        return (message.get("params") or {}).get("arguments") or {}

    def _mode(self, message: dict[str, Any]) -> str:
        return str(self._args(message).get("mode", "")) if message.get("method") == "tools/call" else ""

    def _reply(self, message: dict[str, Any]) -> dict[str, Any] | None:
        if "id" not in message:
            return None
        if message.get("method") == "initialize":
            return {"jsonrpc": "2.0", "id": message["id"], "result": INIT}
        if message.get("method") == "tools/call":
            key = str(self._args(message).get("key", ""))
            with self.lock:
                self.executions[key] += 1
            return {"jsonrpc": "2.0", "id": message["id"],
                    "result": {"content": [{"type": "text", "text": str(self._args(message).get("text", "done"))}]}}
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}

    def _hold(self, conn: socket.socket, message: dict[str, Any]) -> bool:
        key = str(self._args(message).get("key", ""))
        self.arrived[key].set()
        if self._wait_gone(conn):
            self.gone[key].set()
        return False

    def _tools_call(self, conn: socket.socket, message: dict[str, Any]) -> bool:
        args = self._args(message)
        key = str(args.get("key", ""))
        mode = str(args.get("mode", ""))
        with self.lock:
            self.posts[key] += 1
            attempt = self.posts[key]
        if mode == "retry_after" and attempt == 1:
            self.arrived[key].set()
            self._send(conn, "503 Service Unavailable", b"{}", "application/json",
                       {"Retry-After": str(args.get("seconds", 3))})
            return True
        if mode == "hold":
            return self._hold(conn, message)
        self.arrived[key].set()
        if mode == "trickle_headers":
            self._trickle(conn, key, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Slow: " + b"a" * 10_000)
            return False
        if mode == "trickle_body":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
            self._trickle(conn, key, b'{"jsonrpc": "2.0", "id": ' + b" " * 100_000)
            return False
        if mode == "progress":
            token = ((message.get("params") or {}).get("_meta") or {}).get("progressToken")
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            for n in range(1, 10_000):
                event = json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                                    "params": {"progressToken": token, "progress": n}}).encode()
                chunk = b"event: message\ndata: " + event + b"\n\n"
                try:
                    conn.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                except OSError:
                    self.gone[key].set()
                    return False
                if self._wait_gone(conn, self.interval):
                    self.gone[key].set()
                    return False
            return False
        if mode == "close_delimited":
            content_type = str(args.get("content_type", "application/json"))
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n".encode())
            if self._wait_gone(conn):
                self.gone[key].set()
            return False
        reply = self._reply(message)
        assert reply is not None
        if mode == "after_reply":
            return self._after_reply(conn, key, reply, str(args.get("after", "end")), float(args.get("seconds", 1.0)))
        if mode == "wrong_id":
            reply["id"] = message["id"] + 1000
        if mode == "gzip":
            self._gzip(conn, message, int(args["size"]))
            return True
        self._answer(conn, reply)
        return True

    def _after_reply(self, conn: socket.socket, key: str, reply: dict[str, Any], after: str, seconds: float) -> bool:
        def chunk(message: dict[str, Any]) -> bytes:
            event = b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"
            return f"{len(event):x}\r\n".encode() + event + b"\r\n"

        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        log = {"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": "info", "logger": "after", "data": key}}
        try:
            if after == "end":
                conn.sendall(head + chunk(reply) + b"0\r\n\r\n")
            elif after == "trailer":
                conn.sendall(head + chunk(reply) + b"0\r\nX-Done: 1\r\n\r\n")
            elif after == "split":
                conn.sendall(head + chunk(reply) + b"0\r\n")
                if self._wait_gone(conn, seconds):
                    self.gone[key].set()
                    return False
                conn.sendall(b"\r\n")
            else:  # late
                conn.sendall(head + chunk(reply))
                if self._wait_gone(conn, seconds):
                    self.gone[key].set()
                    return False
                conn.sendall(chunk(log) + b"0\r\n\r\n")
        except OSError:
            self.gone[key].set()
            return False
        return True

    def _trickle(self, conn: socket.socket, key: str, data: bytes) -> None:
        for i in range(len(data)):
            try:
                conn.sendall(data[i:i + 1])
            except OSError:
                self.gone[key].set()
                return
            if self._wait_gone(conn, self.interval):
                self.gone[key].set()
                return

    def _gzip(self, conn: socket.socket, message: dict[str, Any], size: int) -> None:
        head = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"content": [
            {"type": "text", "text": "@"}]}}).encode()
        before, after = head.split(b"@")
        if self.reply == "sse":
            before, after = b"event: message\ndata: " + before, after + b"\n\n"
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        parts = [packer.compress(before)]
        block = b"a" * (1 << 20)
        for _ in range(size >> 20):
            parts.append(packer.compress(block))
        parts.append(packer.compress(block[: size & ((1 << 20) - 1)]))
        parts += [packer.compress(after), packer.flush()]
        body = b"".join(parts)
        content_type = "text/event-stream" if self.reply == "sse" else "application/json"
        self._send(conn, "200 OK", body, content_type, {"Content-Encoding": "gzip"})

    def _get(self, conn: socket.socket, path: str) -> bool:
        if self.legacy_sse:
            self._stream = conn  # before the endpoint event: the client may POST at once
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                         b"event: endpoint\ndata: /messages\n\n")
        elif self.get_stream == "close_delimited":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
        elif self.get_stream == "chunked":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                         b"3\r\n:\n\n\r\n")
        else:
            self._send(conn, "405 Method Not Allowed")
            return True
        self.stream_open.set()
        if self._wait_gone(conn):
            self.stream_gone.set()
        return False
