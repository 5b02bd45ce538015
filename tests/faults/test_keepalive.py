"""Item 8: a kept-alive connection the server closes just as the client reuses it.

Node's http server (server-everything) closes a keep-alive connection idle for
``keepAliveTimeout`` (5 s). urllib3 checks a pooled connection for a close before reusing it,
but a close that happens after that check, as the request goes out, fails the request with
no reply (ConnectionResetError / RemoteDisconnected). The double makes that race certain: it
resets a connection whose next request arrives after ``idle_close`` seconds of idling.
"""

from __future__ import annotations

import time
import uuid

import pytest

from mcpclient import Client, StreamableHTTPTransport, TransportError
from tests.faults.hostile_http import HostileHTTP

pytestmark = pytest.mark.timeout(60)

IDLE = 0.2


@pytest.fixture
def server():
    hostile = HostileHTTP()
    hostile.idle_close = IDLE
    hostile.start()
    yield hostile
    hostile.stop()


def open_client(server: HostileHTTP, **options) -> Client:
    client = Client(StreamableHTTPTransport(server.url, listen=False, **options), timeout=5, protocol="legacy")
    client.initialize()
    client.ping()  # settles the pool on one kept-alive connection
    return client


def idle() -> None:
    time.sleep(IDLE + 0.1)  # the idleness itself is what is tested


def test_a_change_nothing_request_is_sent_again_on_a_new_connection(server):
    with open_client(server) as client:
        idle()
        client.ping()
        idle()
        assert [tool.name for tool in client.list_tools()] == ["echo", "reader", "setter"]
    assert server.dropped == 2


@pytest.mark.parametrize("tool", ["reader", "setter"])
def test_a_read_only_or_idempotent_tool_call_is_sent_again(server, tool):
    key = uuid.uuid4().hex
    with open_client(server) as client:
        client.list_tools()
        idle()
        assert client.call_tool(tool, {"key": key, "text": "ok"}).text == "ok"
    assert server.dropped == 1
    assert server.executions[key] == 1


def test_any_other_tool_call_is_not_sent_again_and_the_error_says_it_may_have_run(server):
    key = uuid.uuid4().hex
    with open_client(server) as client:
        client.list_tools()
        idle()
        with pytest.raises(TransportError, match="may have run"):
            client.call_tool("echo", {"key": key})
        assert client.call_tool("echo", {"key": key, "text": "fine"}).text == "fine"  # usable after
    assert server.dropped == 1
    assert server.posts[key] == 1  # the failed one never reached the handler; it was not re-sent


def test_a_connection_idle_past_keepalive_idle_is_not_reused(server):
    key = uuid.uuid4().hex
    with open_client(server, keepalive_idle=IDLE / 2) as client:
        idle()
        assert client.call_tool("echo", {"key": key, "text": "ok"}).text == "ok"
    assert server.dropped == 0
