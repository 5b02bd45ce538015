"""A lost session in both forms (404, and the TypeScript SDK's 400 -32000): a new session
once, the request re-sent because such an answer proves it never ran; never a loop."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

import pytest

from mcpclient import Client, HTTPStatusError, StreamableHTTPTransport
from tests.faults.hostile_http import HostileHTTP

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=[404, 400], ids=["404", "400-32000"])
def server(request):
    hostile = HostileHTTP()
    hostile.lost_session = request.param
    hostile.start()
    yield hostile
    hostile.stop()


def open_client(server: HostileHTTP) -> Client:
    client = Client(StreamableHTTPTransport(server.url, listen=False), timeout=5, protocol="legacy")
    client.initialize()
    return client


def test_a_lost_session_is_renewed_and_the_call_runs_exactly_once(server):
    key = uuid.uuid4().hex
    with open_client(server) as client:
        first = client.transport.session_id
        assert client.call_tool("echo", {"key": key, "fault": "expire", "text": "again"}).text == "again"
        assert client.transport.session_id not in (None, first)
        client.ping()
    assert server.posts[key] == 2  # the lost-session answer proved the first never ran
    assert server.executions[key] == 1


def test_a_restart_that_forgets_every_session_is_survived(server):
    with open_client(server) as client:
        client.ping()
        server.restart()
        client.ping()  # would fail for good before: every later call got the same answer
        assert client.call_tool("echo", {"key": uuid.uuid4().hex, "text": "fine"}).text == "fine"


def test_a_second_lost_session_in_a_row_is_an_error_not_a_loop(server):
    key = uuid.uuid4().hex
    with open_client(server) as client:
        with pytest.raises(HTTPStatusError, match="lost the new session"):
            client.call_tool("echo", {"key": key, "fault": "expire", "times": 5})
    assert server.posts[key] == 2
    assert server.executions[key] == 0


def test_a_400_that_is_not_about_the_session_is_not_a_lost_session():
    from mcpclient.transports.http import _session_lost

    assert not _session_lost(400, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad params"}}')
    assert not _session_lost(400, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Server not initialized"}}')
    assert not _session_lost(400, b"<html>no</html>")
    assert _session_lost(400, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,'
                              b'"message":"Bad Request: No valid session ID provided"}}')


def test_server_everything_restarted_on_the_same_port(everything_server):
    server = everything_server("streamableHttp")
    port = urlsplit(server.url).port
    with Client(StreamableHTTPTransport(server.url), timeout=20, protocol="legacy") as client:
        assert client.call_tool("echo", {"message": "before"}).text.endswith("before")
        server.stop()
        restarted = everything_server("streamableHttp", port=port)
        assert restarted.url == server.url
        assert client.call_tool("echo", {"message": "after"}).text.endswith("after")
