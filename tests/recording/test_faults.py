"""Faults injected into a replay, each with what the client really does: a clear error, no
hang, a re-send only when the request changes nothing.

The recording is made once from an in-process ``FakeServer`` (the server side does not matter
here: the client above the replay is the real one, its engine, conversation and cache)."""

from __future__ import annotations

import pytest

from mcpclient import Client, ConnectionClosed, HTTPStatusError, Plugins, ProtocolError, RequestTimeout, StreamInterrupted
from mcpclient.testing import FakeServer, Fault, recorded

pytestmark = pytest.mark.timeout(60)


def server() -> FakeServer:
    fake = FakeServer(strict=False)
    fake.add_tool("add", lambda a, b: a + b)
    return fake


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """initialize, tools/list, add(1, 2), add(3, 4), ping: four requests after initialize."""
    path = tmp_path_factory.mktemp("faults") / "session.jsonl"
    with Client(recorded(path, server(), mode="all"), protocol="legacy", plugins=Plugins(cache=True)) as client:
        scenario_start(client)
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"
        client.ping()
    return path


def scenario_start(client: Client) -> None:
    assert [t.name for t in client.list_tools()] == ["add"]
    assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"


def replaying(path, *faults, **options) -> tuple[Client, object]:
    replay = recorded(path, mode="none", faults=list(faults))
    return Client(replay, protocol="legacy", **options), replay


def test_without_faults_the_recording_replays(recording):
    client, replay = replaying(recording)
    with client:
        scenario_start(client)
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"
        client.ping()
    replay.verify()


def test_latency_past_the_timeout_is_a_timeout_and_close_does_not_wait_for_it(recording):
    client, replay = replaying(recording, Fault.latency(3600, method="tools/call"))
    with client:
        client.list_tools()
        with pytest.raises(RequestTimeout):
            client.call_tool("add", {"a": 1, "b": 2}, timeout=0.2)
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"  # the client goes on
    assert [f.kind for f in replay.faults_struck] == ["latency"]


def test_latency_within_the_timeout_still_answers(recording):
    client, replay = replaying(recording, Fault.latency(0.05, after=2))
    with client:
        scenario_start(client)  # the add(1, 2) is the third request: it comes late, and comes
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"
        client.ping()
    replay.verify()
    assert str(replay.faults_struck[0]) == "latency 0.05 s after 2 request(s)"


def test_a_dropped_reply_to_a_listing_is_sent_again_and_answered(recording):
    client, replay = replaying(recording, Fault.drop(method="tools/list"))
    with client:
        scenario_start(client)
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"
        client.ping()
    replay.verify()  # the copy took the recorded answer
    assert [f.kind for f in replay.faults_struck] == ["drop"]


def test_a_dropped_reply_to_a_tool_call_is_not_sent_again(recording):
    client, replay = replaying(recording, Fault.drop(method="tools/call"))
    with client:
        client.list_tools()
        with pytest.raises(StreamInterrupted, match="a replayed fault"):
            client.call_tool("add", {"a": 1, "b": 2})  # it may have run: never re-sent
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"
    with pytest.raises(AssertionError, match="recorded but never sent"):
        replay.verify()  # the add(1, 2) the client rightly did not send again


def test_the_servers_death_fails_the_call_and_every_call_after(recording):
    client, replay = replaying(recording, Fault.death(method="tools/call"))
    with client:
        client.list_tools()
        with pytest.raises(ConnectionClosed, match="the server died"):
            client.call_tool("add", {"a": 1, "b": 2})
        with pytest.raises(ConnectionClosed):
            client.ping(timeout=30)  # at once, not at its timeout
    replay.verify()  # what came after the death is excused


def test_a_lost_session_fails_that_call_with_404_and_the_next_is_answered(recording):
    client, replay = replaying(recording, Fault.lost_session(method="tools/call"))
    with client:
        client.list_tools()
        with pytest.raises(HTTPStatusError) as caught:
            client.call_tool("add", {"a": 1, "b": 2})
        assert caught.value.status_code == 404
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"
        client.ping()
    replay.verify()


def test_a_malformed_reply_is_a_protocol_error_for_that_call_only(recording):
    client, replay = replaying(recording, Fault.malformed(method="tools/call"))
    with client:
        client.list_tools()
        with pytest.raises(ProtocolError, match="not an object"):
            client.call_tool("add", {"a": 1, "b": 2})
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"
        client.ping()
    replay.verify()


def count_sends(replay) -> list[str]:
    sent: list[str] = []
    send = replay.send

    def spy(message, **kwargs):
        sent.append(message.get("method", "reply"))
        return send(message, **kwargs)

    replay.send = spy
    return sent


def test_the_cache_serves_a_fresh_listing_and_asks_again_once_it_expired(recording):
    client, replay = replaying(recording, plugins=Plugins(cache=True))
    sent = count_sends(replay)
    with client:
        client.list_tools()
        client.list_tools()
    assert sent.count("tools/list") == 1  # the second came from the cache

    client, replay = replaying(recording, Fault.expire(method="tools/list"), plugins=Plugins(cache=True))
    sent = count_sends(replay)
    with client:
        assert [t.name for t in client.list_tools()] == ["add"]
        assert [t.name for t in client.list_tools()] == ["add"]  # expired: asked again, answered
        scenario_start(client)
    assert sent.count("tools/list") == 3


def test_faults_are_for_replays_and_must_be_faults(recording, tmp_path):
    with pytest.raises(ValueError, match="record first"):
        recorded(tmp_path / "x.jsonl", server(), mode="all", faults=[Fault.death()])
    with pytest.raises(TypeError, match="Fault objects"):
        recorded(recording, mode="none", faults=["drop"])
    with pytest.raises(ValueError, match="seconds >= 0"):
        Fault.latency(-1)
