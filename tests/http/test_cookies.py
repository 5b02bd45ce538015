"""Cookies a server sets come back on the requests after it (load balancers pin sessions so).

Over a real socket, through the transport's own session (whose requests go to the adapter
directly, the cookies stored from each response that sets one) and through a session the
user passes in (``Session.send``, which stores them itself).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from mcpclient import Client, StreamableHTTPTransport

INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "cookie-jar", "version": "1"},
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _CookieServer

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((message.get("method"), self.headers.get("Cookie")))
        extra: list[tuple[str, str]] = []
        if message.get("method") == "initialize":
            body = {"jsonrpc": "2.0", "id": message["id"], "result": INIT}
            extra = [("Set-Cookie", "lb=node-7; Path=/"), ("Set-Cookie", "theme=dark; Path=/")]
        elif "id" in message:
            text = f"cookie {self.headers.get('Cookie')}"
            body = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": text}]}}
            if message.get("method") == "tools/call" and message["params"]["arguments"].get("rotate"):
                extra = [("Set-Cookie", "lb=node-9; Path=/")]
        else:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "s-1")
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_DELETE = do_GET


class _CookieServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str | None, str | None]] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}/mcp"


@pytest.fixture
def server():
    httpd = _CookieServer()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


@pytest.mark.parametrize("own_session", [True, False], ids=["own session", "user session"])
def test_cookies_a_server_sets_are_sent_back(server, own_session):
    session = None if own_session else requests.Session()
    with Client(StreamableHTTPTransport(server.url, session=session, listen=False), timeout=10) as client:
        assert client.call_tool("echo", {}).text == "cookie lb=node-7; theme=dark"
        assert client.call_tool("echo", {"rotate": True}).text == "cookie lb=node-7; theme=dark"
        assert client.call_tool("echo", {}).text == "cookie lb=node-9; theme=dark"
    methods = [method for method, cookie in server.seen]
    after = methods.index("initialize") + 1  # (the era probe's server/discover came first)
    assert all(cookie is None for method, cookie in server.seen[:after]), server.seen
    assert len(server.seen) > after and all(cookie for method, cookie in server.seen[after:]), server.seen
    if session is not None:
        assert session.cookies.get("lb") == "node-9"
        session.close()
