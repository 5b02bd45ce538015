"""Resuming a legacy Streamable HTTP session in another client (``resume=``), against the
official SDK's stateful server: no ``initialize``, the saved id and version on every request,
and a clear ``SessionLost`` (or a new session, as the caller chose) once the server forgot it."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from mcpclient import Client, HTTP, SessionLost, SessionState, StreamableHTTPTransport, connect
from mcpclient.extensions import Message
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

pytestmark = pytest.mark.timeout(120)

STATEFUL = ("--transport", "streamable-http")


class Sent:
    """Middleware recording the method of every request and notification the client sends."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    def __call__(self, message: Message, next_):
        if message.direction == "send":
            self.methods.append(message.method)
        return next_(message)


def test_a_second_client_resumes_the_first_ones_session_without_initialize(shared_sdk_server):
    server = shared_sdk_server(*STATEFUL)
    with connect(server.url, protocol="legacy", timeout=20) as first:
        state = first.session_state
        assert state is not None and state.session_id == first.transport.session_id
        assert state.protocol_version == first.protocol_version
        saved = json.loads(json.dumps(state.as_dict()))  # what a file or a cache would keep
        sent = Sent()
        with connect(server.url, resume=saved, middleware=[sent], timeout=20) as second:
            assert second.transport.session_id == state.session_id
            assert second.protocol_version == state.protocol_version
            assert second.server_info == first.server_info
            assert second.call_tool("echo", {"text": "resumed"}).text == "resumed"
            assert second.session_state == state
        assert "initialize" not in sent.methods and "notifications/initialized" not in sent.methods
        assert sent.methods == ["tools/call"]
        # The resumed client left the session to its owner: the first one goes on in it.
        assert first.call_tool("echo", {"text": "still mine"}).text == "still mine"


def test_a_session_the_server_forgot_raises_session_lost_when_resumed(shared_sdk_server):
    server = shared_sdk_server(*STATEFUL)
    with connect(server.url, protocol="legacy", timeout=20) as first:
        state = first.session_state
    assert state is not None  # the first client ended its session (DELETE) on close
    with pytest.raises(SessionLost, match="no longer knows the resumed session") as info:
        connect(server.url, resume=state, timeout=20)  # the GET stream finds out at once
    assert info.value.status_code == 404 and info.value.session_id == state.session_id
    assert state.session_id not in str(info.value)


def test_without_a_get_stream_the_first_request_finds_the_session_lost(shared_sdk_server):
    server = shared_sdk_server(*STATEFUL)
    with connect(server.url, protocol="legacy", timeout=20) as first:
        state = first.session_state
    transport = StreamableHTTPTransport(server.url, listen=False)
    with Client(transport, resume=state, timeout=20) as client:
        with pytest.raises(SessionLost):
            client.call_tool("echo", {"text": "lost"})


def test_on_session_lost_reinitialize_starts_a_new_session_and_the_call_goes_on(sdk_server):
    server = sdk_server(*STATEFUL)
    with connect(server.url, protocol="legacy", timeout=20, http=HTTP(keep_session=True)) as first:
        state = first.session_state
    assert state is not None
    # keep_session left it open: a second client resumes it.
    with connect(server.url, resume=state, timeout=20) as second:
        assert second.call_tool("echo", {"text": "kept"}).text == "kept"
    # A restart on the same port forgets every session.
    port = urlsplit(server.url).port
    server.stop()
    restarted = sdk_server(*STATEFUL, "--port", str(port))
    assert restarted.url == server.url
    with connect(server.url, resume=state, on_session_lost="reinitialize", timeout=20) as client:
        assert client.call_tool("echo", {"text": "renewed"}).text == "renewed"
        assert client.transport.session_id not in (None, state.session_id)
        assert client.session_state.session_id == client.transport.session_id
        assert client.session_state.protocol_version == state.protocol_version


def test_a_saved_state_reads_back_and_hides_its_id_in_its_repr():
    state = SessionState(session_id="secret-id", protocol_version="2025-06-18", capabilities={"tools": {}},
                         server_info={"name": "s", "version": "1"}, instructions="hi")
    assert SessionState.from_dict(state.as_dict()) == state
    assert "secret-id" not in repr(state)
    with pytest.raises(ValueError, match="session_id and a protocol_version"):
        SessionState.from_dict({"session_id": "x"})


def test_resume_needs_a_streamable_http_url():
    state = SessionState(session_id="x", protocol_version="2025-06-18")
    with pytest.raises(ValueError, match="needs the server's URL"):
        connect(["python", "server.py"], resume=state)


def test_server_everything_resumed_then_restarted_answers_in_its_own_form(everything_server):
    """The TypeScript SDK's servers say a session is gone with 400 -32000, not 404."""
    server = everything_server("streamableHttp")
    with connect(server.url, protocol="legacy", timeout=20, http=HTTP(keep_session=True)) as first:
        state = first.session_state
    assert state is not None
    with connect(server.url, resume=state, timeout=20) as resumed:
        assert resumed.call_tool("echo", {"message": "resumed"}).text.endswith("resumed")
    port = urlsplit(server.url).port
    server.stop()
    restarted = everything_server("streamableHttp", port=port)
    assert restarted.url == server.url
    with pytest.raises(SessionLost, match="HTTP 400") as info:
        connect(server.url, resume=state, timeout=20)  # its GET stream says so at once
    assert info.value.status_code == 400 and info.value.session_id == state.session_id


def test_a_shared_client_pickled_to_a_worker_resumes_the_same_session(shared_sdk_server):
    """The gunicorn case: each worker's client takes up the one session, and none ends it."""
    import pickle

    from mcpclient import SharedClient

    server = shared_sdk_server(*STATEFUL)
    with connect(server.url, protocol="legacy", timeout=20) as owner:
        state = owner.session_state
        shared = SharedClient(server.url, resume=state.as_dict(), timeout=20)
        worker = pickle.loads(pickle.dumps(shared))
        try:
            assert worker.call_tool("echo", {"text": "from a worker"}).text == "from a worker"
            assert worker.session_state == state
        finally:
            worker.close()
            shared.close()
        assert owner.call_tool("echo", {"text": "still open"}).text == "still open"
