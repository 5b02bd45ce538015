"""Hostile Streamable HTTP servers (real sockets on 127.0.0.1): the transport's rules hold.

Retries only when the request provably never reached the server (429, 503); never after the
server may have acted (500, 502, a reset after sending); a ``tools/call`` never runs twice.
"""

from __future__ import annotations

import os
import threading
import time
import uuid

import pytest

from mcpclient import (
    Client,
    HTTPStatusError,
    ProtocolError,
    RequestTimeout,
    StreamableHTTPTransport,
    TransportError,
)
from tests.faults.forking import in_child
from tests.faults.hostile_http import HostileHTTP
from tests.helpers import RELEASED_WITHIN, wait_for

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def server():
    hostile = HostileHTTP().start()
    yield hostile
    hostile.stop()


@pytest.fixture
def other_origin():
    hostile = HostileHTTP().start()
    yield hostile
    hostile.stop()


def open_client(server: HostileHTTP, *, max_retries: int = 0, timeout: float = 5, **kwargs) -> Client:
    transport = StreamableHTTPTransport(server.url, max_retries=max_retries, **kwargs)
    client = Client(transport, timeout=timeout, protocol="legacy")
    client.initialize()
    return client


def key() -> str:
    return uuid.uuid4().hex


def still_usable(client: Client) -> None:
    k = key()
    assert client.call_tool("echo", {"key": k, "text": "fine"}).text == "fine"


@pytest.mark.parametrize("retry_after", ["0", None], ids=["retry-after", "no-retry-after"])
@pytest.mark.parametrize("status", [429, 503])
def test_429_and_503_are_retried_and_the_tool_runs_exactly_once(server, status, retry_after):
    args = {"fault": "status", "status": status, "times": 2}
    if retry_after is not None:
        args["retry_after"] = retry_after
    with open_client(server, max_retries=2, timeout=10) as client:
        k = key()
        assert client.call_tool("echo", {"key": k, "text": "done", **args}).text == "done"
    assert server.posts[k] == 3
    assert server.executions[k] == 1


@pytest.mark.parametrize("status", [429, 503])
def test_429_and_503_without_retries_left_fail_with_the_status_and_nothing_ran(server, status):
    with open_client(server, max_retries=0) as client:
        k = key()
        with pytest.raises(HTTPStatusError) as info:
            client.call_tool("echo", {"key": k, "fault": "status", "status": status, "retry_after": "0"})
        assert info.value.status_code == status
        still_usable(client)
    assert server.posts[k] == 1
    assert server.executions[k] == 0


@pytest.mark.parametrize("status", [500, 502])
def test_500_and_502_are_never_retried(server, status):
    with open_client(server, max_retries=3) as client:
        k = key()
        with pytest.raises(HTTPStatusError) as info:
            client.call_tool("echo", {"key": k, "fault": "status", "status": status, "retry_after": "0"})
        assert info.value.status_code == status
        still_usable(client)
    assert server.posts[k] == 1
    assert server.executions[k] == 1


def test_a_connection_reset_after_sending_is_never_retried(server):
    with open_client(server, max_retries=3, timeout=60) as client:  # a call left to time out: 60 s
        k = key()
        t0 = time.monotonic()
        with pytest.raises(TransportError):
            client.call_tool("echo", {"key": k, "fault": "reset"})
        assert time.monotonic() - t0 < RELEASED_WITHIN
        still_usable(client)
    assert server.posts[k] == 1
    assert server.executions[k] == 1


def test_a_stream_stalled_mid_event_times_out_and_close_stays_prompt(server):
    client = open_client(server, max_retries=3, timeout=60)  # a call past its own timeout: 60 s
    try:
        k = key()
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("echo", {"key": k, "fault": "stall"}, timeout=0.5)
        assert time.monotonic() - t0 < 0.5 + RELEASED_WITHIN
        still_usable(client)
        assert server.posts[k] == 1
        assert server.executions[k] == 1
    finally:
        t0 = time.monotonic()
        client.close()
        assert time.monotonic() - t0 < RELEASED_WITHIN  # (the stalled stream never ends)


def test_an_unanswered_post_times_out_and_the_server_is_told_to_cancel(server):
    with open_client(server, max_retries=3, timeout=60) as client:
        k = key()
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("echo", {"key": k, "fault": "hang"}, timeout=0.5)
        assert time.monotonic() - t0 < 0.5 + RELEASED_WITHIN
        # (sent from a helper thread, so as not to hold the caller: it comes soon after)
        cancels = wait_for(lambda: [m for m in server.notifications if m.get("method") == "notifications/cancelled"])
        assert len(cancels) == 1 and isinstance(cancels[0]["params"]["requestId"], int)
        still_usable(client)
    assert server.posts[k] == 1  # a read timeout is never retried


def test_a_200_with_a_wrong_content_type_fails_only_that_call(server):
    with open_client(server, max_retries=3) as client:
        k = key()
        with pytest.raises(ProtocolError, match="content type"):
            client.call_tool("echo", {"key": k, "fault": "content_type"})
        still_usable(client)
    assert server.posts[k] == 1


@pytest.mark.parametrize("label", ["text/plain", ""])
def test_a_json_rpc_reply_without_its_json_label_is_read_with_a_warning(server, caplog, label):
    # Be liberal: a server that forgets the label (or says text/plain) still gets its reply read.
    with open_client(server, max_retries=3) as client, caplog.at_level("WARNING", logger="mcpclient.transports.http"):
        k = key()
        assert client.call_tool("echo", {"key": k, "fault": "mislabelled", "label": label, "text": "hi"}).text == "hi"
        still_usable(client)
    assert server.executions[k] == 1
    assert any("reading it all the same" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("label", ["text/plain", ""])
def test_a_mislabelled_body_that_is_not_the_reply_says_what_came(server, label):
    with open_client(server, max_retries=3) as client:
        k = key()
        with pytest.raises(ProtocolError, match="not the JSON-RPC reply") as caught:
            client.call_tool("echo", {"key": k, "fault": "mislabelled", "label": label, "body": '{"ok": 1}'})
        assert "sent no reply" not in str(caught.value)
        assert ("text/plain" if label else "no Content-Type") in str(caught.value)
        still_usable(client)


def test_an_expired_session_is_renewed_and_the_call_runs_exactly_once(server):
    with open_client(server) as client:
        k = key()
        assert client.call_tool("echo", {"key": k, "fault": "expire", "text": "again"}).text == "again"
        still_usable(client)
    assert server.posts[k] == 2  # the 404 proved the first never ran
    assert server.executions[k] == 1


def test_a_redirect_to_another_origin_is_refused_and_nothing_reaches_it(server, other_origin):
    with open_client(server, max_retries=3, headers={"Authorization": "Bearer s3cr3t-static"}) as client:
        k = key()
        with pytest.raises(HTTPStatusError, match="another origin"):
            client.call_tool("echo", {"key": k, "fault": "redirect", "to": other_origin.url})
        still_usable(client)
    assert other_origin.seen == []
    assert server.executions[k] == 0


def test_an_sse_reply_is_paired_like_a_json_one(server):
    with open_client(server) as client:
        k = key()
        assert client.call_tool("echo", {"key": k, "fault": "sse", "times": 99, "text": "streamed"}).text == "streamed"


# -- fork ----------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_an_http_client_inherited_through_fork_fails_clearly_and_its_close_keeps_the_parents_session(server):
    with open_client(server) as client:
        session = client.transport.session_id

        def child() -> str:
            try:
                client.ping(timeout=2)
                outcome = "no error"
            except TransportError as exc:
                outcome = "clear error" if "fork" in str(exc) else str(exc)
            client.close()
            return outcome

        assert in_child(child) == "clear error"
        assert session in server.sessions  # the child did not DELETE the parent's session
        assert client.transport.session_id == session
        still_usable(client)


# -- many threads --------------------------------------------------------------------------


def test_concurrent_calls_through_faults_never_get_each_others_replies(server):
    """16 threads, each call with or without a fault: every success carries its own text."""
    faults = [{}, {"fault": "status", "status": 503, "retry_after": "0"}, {"fault": "sse"},
              {"fault": "expire"}, {"fault": "status", "status": 500}, {"fault": "content_type"}]
    wrong: list[str] = []
    with open_client(server, max_retries=2, timeout=10) as client:

        def worker(n: int) -> None:
            for i in range(30):
                k = f"{n}-{i}"
                try:
                    got = client.call_tool("echo", {"key": k, "text": k, **faults[(n + i) % len(faults)]}).text
                except (HTTPStatusError, ProtocolError):
                    continue
                if got != k:
                    wrong.append(f"{k} got {got}")

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not any(thread.is_alive() for thread in threads)
    assert wrong == []
    assert max(server.executions.values()) == 1
