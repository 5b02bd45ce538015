"""Tokens, retries and redirects of the HTTP transports."""

from __future__ import annotations

import email.utils
import json
import threading
import time

import pytest
import requests
import responses
import urllib3.exceptions

from mcpclient import Client, HTTPStatusError, RequestTimeout, StreamableHTTPTransport, TransportError

from ..helpers import RELEASED_WITHIN
from .conftest import URL, result

PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
OK = (200, {"Content-Type": "application/json"}, json.dumps(result(7, {})))


def refused() -> requests.exceptions.ConnectionError:
    reason = urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused")
    return requests.exceptions.ConnectionError(urllib3.exceptions.MaxRetryError(None, URL, reason))


def reset_after_send() -> requests.exceptions.ConnectionError:
    reason = urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104, "Connection reset by peer"))
    return requests.exceptions.ConnectionError(reason)


class Script:
    """Answers POSTs with the scripted replies in turn, recording each request."""

    def __init__(self, rsps, *replies, url=URL):
        self.replies = list(replies)
        self.requests = []
        self.times = []
        rsps.add_callback(responses.POST, url, callback=self)

    def __call__(self, request):
        self.requests.append(request)
        self.times.append(time.monotonic())
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, BaseException):
            raise reply
        return reply


def send(transport, timeout=5.0):
    transport.send(dict(PING), timeout=timeout)
    return transport.receive()


def test_the_token_provider_is_called_for_every_request_and_sent_as_bearer(rsps):
    script = Script(rsps, OK)
    tokens = iter(["t1", "t2"])
    transport = StreamableHTTPTransport(URL, token_provider=lambda: next(tokens))
    send(transport)
    send(transport)
    assert [r.headers["Authorization"] for r in script.requests] == ["Bearer t1", "Bearer t2"]


def test_an_object_with_token_method_works_and_is_called_again_for_each_retry(rsps):
    script = Script(rsps, (503, {}, ""), (429, {"Retry-After": "0"}, ""), OK)

    class Provider:
        calls = 0

        def token(self):
            self.calls += 1
            return f"tok{self.calls}"

    provider = Provider()
    transport = StreamableHTTPTransport(URL, token_provider=provider, max_retries=3)
    send(transport)
    assert [r.headers["Authorization"] for r in script.requests] == ["Bearer tok1", "Bearer tok2", "Bearer tok3"]


def test_auth_header_sends_the_raw_token_under_that_name(rsps):
    script = Script(rsps, OK)
    transport = StreamableHTTPTransport(URL, token_provider=lambda: "raw", auth_header="X-API-Key")
    send(transport)
    assert script.requests[0].headers["X-API-Key"] == "raw"
    assert "Authorization" not in script.requests[0].headers


def test_the_token_overrides_a_static_authorization_header(rsps):
    script = Script(rsps, OK)
    transport = StreamableHTTPTransport(URL, {"Authorization": "Bearer static", "X-Extra": "1"},
                                        token_provider=lambda: "fresh")
    send(transport)
    assert script.requests[0].headers["Authorization"] == "Bearer fresh"
    assert script.requests[0].headers["X-Extra"] == "1"


def test_the_token_provider_is_safe_to_call_from_many_threads(rsps):
    script = Script(rsps, OK)
    lock = threading.Lock()
    count = [0]

    def provider():
        with lock:
            count[0] += 1
        return "t"

    transport = StreamableHTTPTransport(URL, token_provider=provider)
    threads = [threading.Thread(target=transport.send, args=(dict(PING),), kwargs={"timeout": 5}) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert count[0] == 8 and len(script.requests) == 8


def test_a_failing_token_provider_is_a_transport_error():
    def provider():
        raise RuntimeError("vault unreachable")

    transport = StreamableHTTPTransport(URL, token_provider=provider)
    with pytest.raises(TransportError, match="vault unreachable"):
        transport.send(dict(PING), timeout=1)


def test_the_token_never_appears_in_repr():
    transport = StreamableHTTPTransport(URL, {"Authorization": "Bearer hidden-static"}, token_provider=lambda: "hidden")
    assert "hidden" not in repr(transport)
    client = Client(transport)
    assert "hidden" not in repr(client)
    client.close()


def test_429_is_retried_after_retry_after_seconds(rsps):
    script = Script(rsps, (429, {"Retry-After": "1"}, ""), OK)
    transport = StreamableHTTPTransport(URL, max_retries=1)
    assert send(transport)["id"] == 7
    assert len(script.requests) == 2
    assert script.times[1] - script.times[0] >= 0.95


def test_503_is_retried_after_an_http_date(rsps):
    when = email.utils.format_datetime(
        __import__("datetime").datetime.fromtimestamp(time.time() + 2, __import__("datetime").timezone.utc), usegmt=True
    )
    script = Script(rsps, (503, {"Retry-After": when}, ""), OK)
    transport = StreamableHTTPTransport(URL, max_retries=2)
    assert send(transport)["id"] == 7
    assert script.times[1] - script.times[0] >= 0.9


def test_retries_are_off_by_default(rsps):
    script = Script(rsps, (503, {}, "busy"), OK)
    transport = StreamableHTTPTransport(URL)
    with pytest.raises(HTTPStatusError) as info:
        send(transport)
    assert info.value.status_code == 503 and len(script.requests) == 1


def test_the_last_429_after_every_retry_is_raised(rsps):
    script = Script(rsps, (429, {"Retry-After": "0"}, "slow down"))
    transport = StreamableHTTPTransport(URL, max_retries=2)
    with pytest.raises(HTTPStatusError, match="slow down") as info:
        send(transport)
    assert info.value.status_code == 429 and len(script.requests) == 3


def test_500_is_never_retried(rsps):
    script = Script(rsps, (500, {}, "boom"), OK)
    transport = StreamableHTTPTransport(URL, max_retries=3)
    with pytest.raises(HTTPStatusError):
        send(transport)
    assert len(script.requests) == 1


def test_connection_refused_is_retried(rsps):
    script = Script(rsps, refused(), OK)
    transport = StreamableHTTPTransport(URL, max_retries=1)
    assert send(transport)["id"] == 7
    assert len(script.requests) == 2


def test_a_reset_after_sending_is_never_retried(rsps):
    script = Script(rsps, reset_after_send(), OK)
    transport = StreamableHTTPTransport(URL, max_retries=3)
    with pytest.raises(TransportError, match="reset"):
        send(transport)
    assert len(script.requests) == 1


def test_a_real_refused_connection_is_retried_then_reported():
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    transport = StreamableHTTPTransport(f"http://127.0.0.1:{port}/mcp", max_retries=1)
    started = time.monotonic()
    with pytest.raises(TransportError, match="could not connect") as info:
        transport.send(dict(PING), timeout=5)
    assert not isinstance(info.value, RequestTimeout)
    assert time.monotonic() - started >= 0.3  # one backoff happened


def test_a_retry_wait_beyond_the_timeout_fails_at_once(rsps):
    script = Script(rsps, (503, {"Retry-After": "30"}, ""), OK)
    transport = StreamableHTTPTransport(URL, max_retries=3)
    started = time.monotonic()
    with pytest.raises(RequestTimeout):
        transport.send(dict(PING), timeout=20)  # a wait for it would take the 20 s
    assert time.monotonic() - started < RELEASED_WITHIN
    assert len(script.requests) == 1


def test_backoff_is_cancelled_by_the_timeout(rsps):
    script = Script(rsps, refused())
    transport = StreamableHTTPTransport(URL, max_retries=20)
    started = time.monotonic()
    with pytest.raises((RequestTimeout, TransportError)):
        transport.send(dict(PING), timeout=1.2)
    assert time.monotonic() - started < 1.2 + RELEASED_WITHIN  # (20 backoffs go on for minutes)
    assert 2 <= len(script.requests) < 6


def test_close_interrupts_a_backoff(rsps):
    Script(rsps, (503, {"Retry-After": "60"}, ""))
    transport = StreamableHTTPTransport(URL, max_retries=1)
    threading.Timer(0.2, transport.close).start()
    started = time.monotonic()
    with pytest.raises(TransportError):
        transport.send(dict(PING), timeout=None)
    assert time.monotonic() - started < RELEASED_WITHIN


def test_a_same_origin_redirect_is_followed_with_the_credentials(rsps):
    rsps.add(responses.POST, URL, status=307, headers={"Location": "/mcp/"})
    script = Script(rsps, OK, url=URL + "/")
    transport = StreamableHTTPTransport(URL, token_provider=lambda: "tok")
    assert send(transport)["id"] == 7
    assert script.requests[0].headers["Authorization"] == "Bearer tok"
    assert json.loads(script.requests[0].body)["method"] == "ping"


def test_a_cross_origin_redirect_is_refused_and_nothing_is_sent_there(rsps):
    rsps.add(responses.POST, URL, status=307, headers={"Location": "http://evil.test/mcp"})
    script = Script(rsps, OK, url="http://evil.test/mcp")
    transport = StreamableHTTPTransport(URL, token_provider=lambda: "tok", auth_header="X-Key")
    with pytest.raises(HTTPStatusError, match="another origin") as info:
        send(transport)
    assert info.value.status_code == 307
    assert script.requests == []
    assert "tok" not in str(info.value)
