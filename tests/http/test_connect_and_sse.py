"""connect() picking a transport, and the legacy HTTP+SSE transport's edge cases."""

from __future__ import annotations

import sys
import warnings
from urllib.parse import urlsplit

import pytest
import responses

import mcpclient
from mcpclient import ConnectionClosed, HTTPStatusError, SSETransport, StdioTransport, TransportError

from tests.helpers import require_mcp_sdk

from .conftest import ROOT, BLOCK, StreamBody

SSE_URL = "http://legacy.test/sse"


def test_connect_with_a_command_list_uses_stdio():
    require_mcp_sdk()
    with mcpclient.connect([sys.executable, str(ROOT / "tests" / "servers" / "sdk_server.py")], timeout=20) as client:
        assert isinstance(client.transport, StdioTransport)
        assert client.call_tool("echo", {"text": "x"}).text == "x"


def test_connect_refuses_a_plain_string_command():
    with pytest.raises(ValueError, match="list"):
        mcpclient.connect("python server.py")


def test_connect_falls_back_only_on_400_404_405_and_reports_both_failures(rsps):
    rsps.add(responses.POST, "https://old.test/mcp", status=404, body="not here")
    rsps.add(responses.GET, "https://old.test/mcp", status=404, body="nothing either")
    with pytest.raises(HTTPStatusError) as info:
        mcpclient.connect("https://old.test/mcp", timeout=5, protocol="legacy")
    assert info.value.status_code == 404
    fallback = info.value.__cause__  # the HTTP+SSE attempt's own failure
    assert isinstance(fallback, HTTPStatusError) and "opening the SSE stream failed" in str(fallback)


def test_connect_does_not_fall_back_on_a_500(rsps):
    rsps.add(responses.POST, "https://broken.test/mcp", status=500, body="oops")
    with pytest.raises(HTTPStatusError) as info:
        mcpclient.connect("https://broken.test/mcp", timeout=5, protocol="legacy")
    assert info.value.status_code == 500
    assert not [call for call in rsps.calls if call.request.method == "GET"]


def test_the_sse_transport_refuses_an_endpoint_on_another_origin(rsps):
    rsps.add(responses.GET, SSE_URL, content_type="text/event-stream",
             body=StreamBody(b"event: endpoint\ndata: http://evil.test/messages\n\n", BLOCK))
    with pytest.raises(TransportError, match="another origin"):
        SSETransport(SSE_URL, endpoint_timeout=2)


def test_the_sse_transport_gives_up_without_an_endpoint_event(rsps):
    rsps.add(responses.GET, SSE_URL, content_type="text/event-stream", body=StreamBody(b": hello\n\n", BLOCK))
    with pytest.raises(TransportError, match="no endpoint"):
        SSETransport(SSE_URL, endpoint_timeout=0.3)


def test_the_sse_transport_posts_to_the_endpoint_and_ends_with_the_stream(rsps):
    body = StreamBody(b"event: endpoint\ndata: /messages?session=1\n\n")
    rsps.add(responses.GET, SSE_URL, content_type="text/event-stream", body=body)
    posts = []

    def on_post(request):
        posts.append(request)
        body.put(b'event: message\ndata: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n')
        body.put(None)
        return 202, {}, ""

    rsps.add_callback(responses.POST, "http://legacy.test/messages?session=1", callback=on_post)
    transport = SSETransport(SSE_URL, token_provider=lambda: "tok")
    transport.send({"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=5)
    assert transport.receive() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert posts[0].headers["Authorization"] == "Bearer tok"
    with pytest.raises(ConnectionClosed, match="closed the SSE stream"):
        transport.receive()
    transport.close()


def test_the_sse_transport_reports_an_http_error_on_open(rsps):
    rsps.add(responses.GET, SSE_URL, status=401, body="login first")
    with pytest.raises(HTTPStatusError, match="login first") as info:
        SSETransport(SSE_URL)
    assert info.value.status_code == 401


@pytest.mark.parametrize("url, warned", [
    ("http://remote.test/mcp", True),
    ("http://10.0.0.5:8000/mcp", True),
    ("https://remote.test/mcp", False),
    ("http://127.0.0.1:9/mcp", False),
    ("http://localhost:9/mcp", False),
    ("http://[::1]:9/mcp", False),
])
def test_connect_warns_about_plain_http_to_another_host(rsps, url, warned):
    """A ``UserWarning`` naming the caller's line (a log record reached no one: mcpclient's
    logger has only a NullHandler); loopback addresses, where nothing crosses a network, none."""
    rsps.add(responses.POST, url, status=500, body="oops")  # no request leaves this machine
    with warnings.catch_warnings(record=True) as caught, pytest.raises(HTTPStatusError):
        warnings.simplefilter("always")
        mcpclient.connect(url, timeout=5, protocol="legacy")
    plain = [w for w in caught if "plain http" in str(w.message)]
    assert len(plain) == (1 if warned else 0), [str(w.message) for w in caught]
    if warned:
        assert plain[0].category is UserWarning and plain[0].filename == __file__
        assert str(plain[0].message).startswith(f"mcpclient: connecting to {urlsplit(url).hostname} over plain http")
