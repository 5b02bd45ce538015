"""The HTTP hot path under requests: one write per small request, the pool remembered.

A small request on a kept-alive connection goes out in one write, head and body together;
the adapter looks up the pool for the transport's URL once, and again only once it was closed.
"""

from __future__ import annotations

import http.client
import os
import socket
import sys
import threading
import time

import pytest
import requests
import urllib3
import urllib3.connection

from mcpclient import Client, RequestTimeout, StreamableHTTPTransport
from mcpclient.transports import _exchange, _sockets
from tests.helpers import RELEASED_WITHIN, require_mcp_sdk, wait_for



@pytest.fixture
def server(ending_servers):
    return ending_servers()


@pytest.fixture
def writes(monkeypatch) -> list[bytes]:
    """Every write ``http.client`` makes for our connections, in order."""
    seen: list[bytes] = []
    original = http.client.HTTPConnection.send

    def recording(self, data):
        seen.append(bytes(data))
        return original(self, data)

    monkeypatch.setattr(http.client.HTTPConnection, "send", recording)
    return seen


def posts(writes: list[bytes]) -> list[list[bytes]]:
    """The writes grouped per request (a group starts with a request line)."""
    groups: list[list[bytes]] = []
    for data in writes:
        if data.startswith((b"POST ", b"GET ", b"DELETE ")):
            groups.append([data])
        elif groups:
            groups[-1].append(data)
    return groups


def test_a_call_on_a_kept_alive_connection_is_one_write(server, writes):
    with Client(StreamableHTTPTransport(server.url), timeout=10, protocol="legacy") as client:
        client.call_tool("work", {"text": "warm"})  # (the server closed the refused GET's connection)
        del writes[:]
        assert client.call_tool("work", {"text": "one write"}).text == "one write"
    call = [group for group in posts(writes) if b'"tools/call"' in b"".join(group)]
    assert len(call) == 1 and len(call[0]) == 1, call
    head, _, body = call[0][0].partition(b"\r\n\r\n")
    assert b"Content-Length: %d" % len(body) in head
    assert body.startswith(b"{") and b'"one write"' in body


def test_a_new_connection_and_a_large_body_are_written_as_urllib3_writes_them(server, writes, monkeypatch):
    monkeypatch.setattr(_sockets, "ONE_WRITE_MAX", 1000)
    with Client(StreamableHTTPTransport(server.url), timeout=10, protocol="legacy") as client:
        first = posts(writes)[0]  # initialize, on a connection just opened: head, then body
        assert len(first) == 2 and first[0].endswith(b"\r\n\r\n") and b'"initialize"' in first[1]
        client.call_tool("work", {"text": "warm"})
        del writes[:]
        text = "x" * 2000
        assert client.call_tool("work", {"text": text}).text == text
    (call,) = [group for group in posts(writes) if b'"tools/call"' in b"".join(group)]
    assert len(call) == 2 and call[0].endswith(b"\r\n\r\n")


def test_the_pool_for_the_url_is_looked_up_once_and_again_once_closed(server, monkeypatch):
    lookups: list[str] = []
    original = requests.adapters.HTTPAdapter.get_connection_with_tls_context

    def counting(self, request, *args, **kwargs):
        lookups.append(request.url)
        return original(self, request, *args, **kwargs)

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "get_connection_with_tls_context", counting)
    transport = StreamableHTTPTransport(server.url)
    with Client(transport, timeout=10, protocol="legacy") as client:
        for n in range(5):
            assert client.call_tool("work", {"text": f"t{n}"}).text == f"t{n}"
        assert lookups == [server.url]
        adapter = transport._requester.session.get_adapter(server.url)
        (pool,) = adapter._pools.values()
        adapter.close()  # as requests' Session.close() does: the pool is closed and forgotten
        assert pool.pool is None
        assert client.call_tool("work", {"text": "after"}).text == "after"
        assert lookups == [server.url, server.url]


def _head_lines(connection_class, headers: list[tuple[str, str]], rounds: int = 1) -> list[list[bytes]]:
    """The head lines ``connection_class`` builds for the same request, ``rounds`` times over."""
    connection = connection_class("example.test", 80)
    heads = []
    for _ in range(rounds):
        connection.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        for name, value in headers:
            connection.putheader(name, value)
        heads.append(list(connection._buffer))
        connection._buffer.clear()
        connection._HTTPConnection__state = "Idle"  # as if the request had been sent
    return heads


HEADERS = [
    ("Host", "example.test"), ("Content-Type", "application/json"), ("Mcp-Session-Id", "s-1"),
    ("Content-Length", "12"), ("X-Latin", "caf\xe9"), ("Authorization", "Bearer t0k3n"),
]


def test_remembered_header_lines_are_the_lines_http_client_builds():
    stock = _head_lines(urllib3.connection.HTTPConnection, HEADERS)[0]
    first, again, third = _head_lines(_sockets._Connection, HEADERS, rounds=3)
    assert first == again == third == stock
    connection = _sockets._Connection("example.test", 80)
    assert set(connection._mcp_lines or {}) == set()  # nothing remembered before a request


@pytest.mark.parametrize("name, value", [("X-A", "a\r\nInjected: yes"), ("Bad:Name", "v"), (" Lead", "v"), ("X-B", "a\nb")])
def test_a_bad_header_is_refused_every_time(name, value):
    connection = _sockets._Connection("example.test", 80)
    for _ in range(2):  # never remembered, so refused again
        connection.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        with pytest.raises(ValueError):
            connection.putheader(name, value)
        connection._buffer.clear()
        connection._HTTPConnection__state = "Idle"
    assert not connection._mcp_lines


def test_at_most_so_many_header_lines_are_remembered():
    headers = [("Content-Length", str(n)) for n in range(3 * _sockets.LINES_KEPT)]
    connection = _sockets._Connection("example.test", 80)
    connection.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
    for name, value in headers:
        connection.putheader(name, value)
        assert len(connection._mcp_lines) <= _sockets.LINES_KEPT


def _urllib3_response(headers: dict[str, str]) -> urllib3.HTTPResponse:
    return urllib3.HTTPResponse(body=b"{}", headers=headers, status=200, reason="OK", preload_content=False)


def _prepared(url: str = "http://127.0.0.1:9/mcp?x=1") -> requests.PreparedRequest:
    return requests.Request("POST", url, data=b"{}").prepare()


def test_a_response_without_cookies_is_built_as_requests_builds_it():
    adapter = _sockets.AbortableAdapter()
    request = _prepared()
    ours = adapter.build_response(request, _urllib3_response({"Content-Type": "application/json; charset=utf-8"}))
    theirs = requests.adapters.HTTPAdapter.build_response(
        adapter, request, _urllib3_response({"Content-Type": "application/json; charset=utf-8"})
    )
    assert type(ours) is type(theirs)
    mine, stock = dict(vars(ours)), dict(vars(theirs))
    assert set(mine) == set(stock)  # an attribute requests adds is noticed here
    for name in ("raw", "cookies"):
        mine.pop(name), stock.pop(name)
    assert mine == stock
    assert dict(ours.cookies) == dict(theirs.cookies) == {}
    assert ours.encoding == "utf-8" and ours.headers["content-type"].startswith("application/json")


def test_a_response_setting_cookies_is_built_by_requests():
    adapter = _sockets.AbortableAdapter()
    response = adapter.build_response(_prepared(), _urllib3_response({"Set-Cookie": "lb=7; Path=/"}))
    assert response.status_code == 200 and "set-cookie" in response.headers


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/mcp?x=1", "http://127.0.0.1:9//double/path", "http://127.0.0.1:9"])
def test_the_request_path_is_what_requests_works_out(url):
    adapter = _sockets.AbortableAdapter()
    request = _prepared(url)
    stock = requests.adapters.HTTPAdapter.request_url(adapter, request, {})
    assert adapter.request_url(request, {}) == adapter.request_url(request, None) == stock
    proxied = {"http": "http://proxy.test:3128"}
    assert adapter.request_url(request, proxied) == requests.adapters.HTTPAdapter.request_url(adapter, request, proxied)


def test_a_plain_connection_stays_blocking_and_its_deadlines_are_the_exchanges(server):
    transport = StreamableHTTPTransport(server.url)
    with Client(transport, timeout=60, protocol="legacy") as client:  # a call past its own timeout: 60 s
        client.call_tool("work", {"text": "warm"})
        adapter = transport._requester.session.get_adapter(server.url)
        (pool,) = adapter._pools.values()
        socks = [conn.sock for conn in list(pool.pool.queue) if conn is not None and conn.sock is not None]
        assert socks and all(type(sock) is _sockets.ExchangeSocket for sock in socks)
        assert all(sock.gettimeout() is None for sock in socks)  # urllib3 set timeouts twice a request
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("work", {"mode": "hold"}, timeout=0.5)  # on a kept-alive connection
        assert time.monotonic() - started < 0.5 + RELEASED_WITHIN
        assert client.call_tool("work", {"text": "after"}).text == "after"
        # The watchdog (the only deadline these sockets have) leaves when idle and comes back.
        wait_for(lambda: transport._exchanges._thread is None, timeout=_exchange.IDLE_EXIT + RELEASED_WITHIN,
                 what="the idle watchdog gone")
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("work", {"mode": "hold"}, timeout=0.5)
        assert time.monotonic() - started < 0.5 + RELEASED_WITHIN


def test_a_peeking_receive_returns_at_once():
    left, right = socket.socketpair(socket.AF_UNIX)
    sock = _sockets.ExchangeSocket.adopt(left)
    reader = sock.makefile("rb")
    try:
        assert left.fileno() == -1 and sock.gettimeout() is None
        sock.peeking = True
        started = time.monotonic()
        assert reader.peek(5) == b""  # nothing there: no wait
        with pytest.raises(BlockingIOError):
            sock.recv(5, socket.MSG_PEEK)
        assert time.monotonic() - started < RELEASED_WITHIN  # (a blocking peek would never return)
        right.sendall(b"hello")
        wait_for(lambda: reader.peek(5)[:5] == b"hello", timeout=RELEASED_WITHIN)
        sock.peeking = False
        assert reader.read(5) == b"hello"  # peeking consumed nothing
    finally:
        reader.close()
        sock.close()
        right.close()


def test_a_server_that_stops_reading_a_request_cannot_hold_the_call_past_its_timeout():
    """The socket is blocking: a send stuck on a full TCP window ends at the deadline (the
    watchdog aborts the exchange), not at some socket timeout.

    The listener's receive buffer is made small before it listens (the window is set at the
    handshake), so a few megabytes fill the window whatever the machine's TCP autotuning allows;
    the bound is the deadline plus slack for a loaded machine, far below any socket timeout
    (without the watchdog the send would block until the test's own timeout)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[socket.socket] = []
    accepter = threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True)
    accepter.start()
    transport = StreamableHTTPTransport(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", listen=False)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "big", "arguments": {"text": "x" * 8_000_000}}}
    try:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            transport.send(message, timeout=1.0)
        elapsed = time.monotonic() - started
        assert elapsed < 1.0 + RELEASED_WITHIN, elapsed
        accepter.join(timeout=5.0)
        assert accepted  # it connected, then the server read nothing
    finally:
        transport.close()
        listener.close()
        for sock in accepted:
            sock.close()


def test_below_the_requester_no_code_of_the_exchange_registry_runs(shared_sdk_server):
    """A ``call_tool`` over Streamable HTTP enters ``_exchange.py`` above the requester only:
    no function of it runs with requests, urllib3 or ``_sockets.py`` under it on the stack
    (the sockets go to the exchange's ``_sockets.Held``; ``_sockets`` imports no exchange)."""
    require_mcp_sdk()
    server = shared_sdk_server("--transport", "streamable-http")
    registry = os.path.abspath(_exchange.__file__)
    below = (os.path.abspath(_sockets.__file__), os.path.dirname(requests.__file__), os.path.dirname(urllib3.__file__))
    entered: list[str] = []
    under_sockets: list[str] = []

    def profile(frame, event, arg):
        if event != "call" or frame.f_code.co_filename != registry:
            return
        entered.append(frame.f_code.co_name)
        caller = frame.f_back
        while caller is not None:
            if caller.f_code.co_filename.startswith(below):
                under_sockets.append(f"{frame.f_code.co_name} from {caller.f_code.co_name}")
                return
            caller = caller.f_back

    with Client(StreamableHTTPTransport(server.url), timeout=30, protocol="legacy") as client:
        client.call_tool("echo", {"text": "warm"})
        sys.setprofile(profile)
        try:
            assert client.call_tool("echo", {"text": "x"}).text == "x"
        finally:
            sys.setprofile(None)
    assert "open" in entered  # the registry did run, above: the watch saw it
    assert under_sockets == []
