"""The HTTP hot path under requests: one write per small request, the pool remembered.

A small request on a kept-alive connection goes out in one write, head and body together;
the adapter looks up the pool for the transport's URL once, and again only once it was closed.
"""

from __future__ import annotations

import http.client

import pytest
import requests

from mcpclient import Client, StreamableHTTPTransport
from mcpclient.transports import _exchange



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
    monkeypatch.setattr(_exchange, "ONE_WRITE_MAX", 1000)
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
