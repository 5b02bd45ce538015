"""Finding 8: the loopback OAuth callback listener takes only its own flow's redirect.

Real requests to a real listener on 127.0.0.1: a wrong or missing ``state`` is answered 400
and the flow goes on; the listener exists only while ``authorize`` runs, so a request sent
between two flows is refused by the kernel instead of waiting for the next flow; only
loopback hosts are accepted; the callback's code and state are never logged.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid

import pytest
import requests

from mcpclient.auth import AuthorizationError, LoopbackRedirectHandler
from tests.helpers import RELEASED_WITHIN

AUTHORIZE = "https://auth.example.com/authorize?client_id=c&state="


def _port(handler: LoopbackRedirectHandler) -> int:
    return int(handler.redirect_uri.rsplit(":", 1)[1].split("/")[0])


def _refused(port: int, host: str = "127.0.0.1") -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def _in_thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_a_request_without_the_flows_state_is_refused_and_the_right_one_ends_the_flow():
    statuses: list[int] = []
    senders: list[threading.Thread] = []

    def browser(url):
        def send():
            base = handler.redirect_uri
            for query in ("?code=evil", "?code=evil&state=guess", "?code=evil&state=s1&state=s1", "?code=good&state=s1"):
                statuses.append(requests.get(base + query, timeout=5).status_code)
        senders.append(_in_thread(send))
        return True

    handler = LoopbackRedirectHandler(open_browser=browser)
    callback = handler.authorize(AUTHORIZE + "s1", timeout=10)
    assert callback == handler.redirect_uri + "?code=good&state=s1"
    senders[0].join(5)
    assert statuses == [400, 400, 400, 200]


def test_a_request_queued_after_a_flow_never_reaches_the_next_flow():
    handler = LoopbackRedirectHandler(open_browser=lambda url: bool(
        _in_thread(lambda: requests.get(handler.redirect_uri + "?code=one&state=s1", timeout=5))))
    assert handler.authorize(AUTHORIZE + "s1", timeout=10).endswith("code=one&state=s1")

    # Between the flows, a stale tab (or another local process) sends a redirect.
    port = _port(handler)
    stale = socket.socket()
    try:
        try:
            stale.connect(("127.0.0.1", port))
            stale.sendall(f"GET /callback?code=stale&state=s1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        except ConnectionRefusedError:
            pass  # nothing listens between flows: the request cannot wait for the next one

        handler._open = lambda url: bool(
            _in_thread(lambda: requests.get(handler.redirect_uri + "?code=two&state=s2", timeout=5)))
        assert handler.authorize(AUTHORIZE + "s2", timeout=10) == handler.redirect_uri + "?code=two&state=s2"
    finally:
        stale.close()


def test_the_listener_is_closed_when_the_flow_succeeds_or_times_out():
    handler = LoopbackRedirectHandler(open_browser=lambda url: bool(
        _in_thread(lambda: requests.get(handler.redirect_uri + "?code=c&state=s", timeout=5))))
    port = _port(handler)
    handler.authorize(AUTHORIZE + "s", timeout=10)
    assert _refused(port)

    handler._open = lambda url: True  # the user never comes back
    start = time.monotonic()
    with pytest.raises(AuthorizationError, match="in time"):
        handler.authorize(AUTHORIZE + "s", timeout=0.3)
    assert time.monotonic() - start < 0.3 + RELEASED_WITHIN  # (the user never comes back)
    assert _refused(port)
    assert _port(handler) == port  # the redirect URI stays the registered one


def test_a_silent_connection_does_not_hold_the_flow_past_its_timeout():
    silent = socket.socket()
    outcome: list[BaseException] = []

    def browser(url):
        silent.connect(("127.0.0.1", _port(handler)))  # connects, never sends a request
        return True

    handler = LoopbackRedirectHandler(open_browser=browser)

    def flow():
        try:
            handler.authorize(AUTHORIZE + "s", timeout=0.5)
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome.append(exc)

    try:
        thread = _in_thread(flow)
        thread.join(3)
        assert not thread.is_alive(), "the flow outlived its timeout"
        assert isinstance(outcome[0], AuthorizationError)
    finally:
        silent.close()


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", ""])
def test_only_loopback_hosts_are_accepted(host):
    with pytest.raises(ValueError, match="loopback"):
        LoopbackRedirectHandler(host=host)


def test_localhost_is_bound_as_127_0_0_1_and_named_as_given():
    handler = LoopbackRedirectHandler(host="localhost", open_browser=lambda url: bool(
        _in_thread(lambda: requests.get(f"http://127.0.0.1:{_port(handler)}/callback?code=c&state=s", timeout=5))))
    assert handler.redirect_uri.startswith("http://localhost:")
    assert handler.authorize(AUTHORIZE + "s", timeout=10) == handler.redirect_uri + "?code=c&state=s"


def test_ipv6_loopback_listens_on_1():
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    handler = LoopbackRedirectHandler(host="::1", open_browser=lambda url: bool(
        _in_thread(lambda: requests.get(handler.redirect_uri + "?code=c&state=s", timeout=5))))
    assert handler.redirect_uri.startswith("http://[::1]:")
    assert handler.authorize(AUTHORIZE + "s", timeout=10) == handler.redirect_uri + "?code=c&state=s"


def test_an_authorization_url_without_state_is_refused_before_the_browser_opens():
    opened = []
    with pytest.raises(AuthorizationError, match="no state"):
        LoopbackRedirectHandler(open_browser=opened.append).authorize("https://auth.example.com/authorize?x=1")
    assert opened == []


def test_the_authorization_code_and_state_are_never_logged(caplog):
    caplog.set_level(logging.DEBUG, logger="mcpclient")
    code, state = "code-" + uuid.uuid4().hex, "state-" + uuid.uuid4().hex

    senders: list[threading.Thread] = []

    def browser(url):
        senders.append(_in_thread(lambda: requests.get(f"{handler.redirect_uri}?code={code}&state={state}", timeout=5)))
        return True

    handler = LoopbackRedirectHandler(open_browser=browser)
    handler.authorize(AUTHORIZE + state, timeout=10)
    senders[0].join(5)  # the answer, and its log line, are written after the flow took the code
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("mcpclient")]  # not the browser's urllib3
    assert any("callback listener" in message for message in ours)
    assert [m for m in ours if code in m or state[6:] in m] == []
