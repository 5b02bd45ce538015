"""Replay rules, on recordings made from an in-process FakeServer: matching, ids, strictness,
redaction by key, the modes and the ``mcp_recording`` fixture."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from mcpclient import Client, RPCError
from mcpclient.testing import FakeServer, Matcher, RecordingTransport, ReplayTransport, recorded
from mcpclient.transports import Transport
from mcpclient.transports.base import ExchangeTransport

pytest_plugins = ["pytester"]


def fake() -> FakeServer:
    server = FakeServer(strict=False)
    server.add_tool("add", lambda a, b: a + b)
    server.add_tool("login", lambda user, api_key: f"hello {user}")
    return server


def record(path, calls) -> None:
    with Client(recorded(path, fake(), mode="all"), protocol="legacy") as client:
        for name, arguments in calls:
            client.call_tool(name, arguments)


def test_unknown_request_fails_with_a_diff_against_the_closest(tmp_path):
    path = tmp_path / "r.jsonl"
    record(path, [("add", {"a": 1, "b": 2})])
    replay = recorded(path, mode="none")
    with Client(replay, protocol="legacy") as client, pytest.raises(RPCError) as caught:
        client.call_tool("add", {"a": 1, "b": 3})
    assert "does not match the recording" in caught.value.message
    with pytest.raises(AssertionError) as failed:
        replay.verify()
    lines = [line.replace(" ", "") for line in str(failed.value).splitlines()]
    assert '-"b":2' in lines and '+"b":3' in lines


def test_strict_fails_on_an_unused_exchange_and_lenient_does_not(tmp_path):
    path = tmp_path / "r.jsonl"
    record(path, [("add", {"a": 1, "b": 2}), ("add", {"a": 5, "b": 5})])
    for strict in (True, False):
        replay = recorded(path, mode="none", strict=strict)
        with Client(replay, protocol="legacy") as client:
            assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
        if strict:
            with pytest.raises(AssertionError, match="recorded but never sent"):
                replay.verify()
        else:
            replay.verify()


def test_ids_are_rewritten_so_a_replay_does_not_depend_on_them(tmp_path):
    path = tmp_path / "r.jsonl"
    record(path, [("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})])
    replay = recorded(path, mode="none")
    with Client(replay, protocol="legacy") as client:
        client._engine._ids = iter(range(1000, 2000))  # ids the recording never saw
        # And out of the recorded order: matching is by method and params.
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    replay.verify()


def test_ignored_fields_and_a_custom_matcher(tmp_path):
    path = tmp_path / "r.jsonl"
    record(path, [("add", {"a": 1, "b": 2})])
    with Client(recorded(path, mode="none", ignore=["params/arguments/b"]), protocol="legacy") as client:
        assert client.call_tool("add", {"a": 1, "b": 99}).text == "3"  # the recorded answer
    never = Matcher(match=lambda live, rec: live.get("method") != "tools/call")
    replay = ReplayTransport(path, matcher=never)
    with Client(replay, protocol="legacy") as client, pytest.raises(RPCError):
        client.call_tool("add", {"a": 1, "b": 2})


def test_credentials_are_redacted_by_key_and_still_match(tmp_path):
    path = tmp_path / "r.jsonl"
    record(path, [("login", {"user": "ann", "api_key": "sk-live-abcdef123456"})])
    text = path.read_text()
    assert "sk-live-abcdef123456" not in text and "[redacted]" in text
    entries = [json.loads(line) for line in text.splitlines()]
    assert entries[0]["mcpclient_recording"] == 1
    assert {e["dir"] for e in entries[1:]} == {"send", "recv"} and all("t" in e for e in entries[1:])
    replay = recorded(path, mode="none")
    with Client(replay, protocol="legacy") as client:
        assert client.call_tool("login", {"user": "ann", "api_key": "sk-live-abcdef123456"}).text == "hello ann"
    replay.verify()


def test_modes(tmp_path):
    path = tmp_path / "r.jsonl"
    with pytest.raises(FileNotFoundError):
        recorded(path, mode="none")
    assert type(recorded(path, fake(), mode="once")).__name__ == "RecordingTransport"
    assert isinstance(recorded(path, fake(), mode="once"), ReplayTransport)
    assert type(recorded(path, fake(), mode="all")).__name__ == "RecordingTransport"
    with pytest.raises(ValueError):
        recorded(path, mode="sometimes")


def test_the_pytest_fixture_records_once_then_replays_strictly(pytester):
    pytester.makepyfile(test_it="""
        import pytest
        from mcpclient import Client
        from mcpclient.testing import FakeServer, ReplayTransport

        def server():
            fake = FakeServer(strict=False)
            fake.add_tool("add", lambda a, b: a + b)
            return fake

        def test_add(mcp_recording):
            transport = mcp_recording(server())
            with Client(transport, protocol="legacy") as client:
                assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"

        @pytest.mark.mcp_recording(path="shared.jsonl")
        def test_unused(mcp_recording):
            transport = mcp_recording(server())
            with Client(transport, protocol="legacy") as client:
                if isinstance(transport, ReplayTransport):
                    return  # the recorded tools/call is never sent: strict fails the test
                client.call_tool("add", {"a": 1, "b": 2})
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    assert (pytester.path / "recordings" / "test_it" / "test_add.jsonl").exists()
    result = pytester.runpytest("-p", "no:cacheprovider", "--mcp-record-mode", "none")
    result.assert_outcomes(passed=2, errors=1)  # test_unused passes, then its teardown fails
    assert "recorded but never sent" in result.stdout.str()


def test_the_era_probe_replays_whether_or_not_the_recording_holds_it(tmp_path):
    # Whether a client probes with server/discover depends on what its process already knew
    # of the server: a legacy recording replays under protocol="auto" either way, strictly.
    path = tmp_path / "r.jsonl"
    record(path, [("add", {"a": 1, "b": 2})])  # legacy: initialize, no probe in the file
    replay = recorded(path, mode="none")
    with Client(replay) as client:  # "auto": probes first
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    replay.verify()
    probed = tmp_path / "probed.jsonl"
    with Client(recorded(probed, fake(), mode="all")) as client:  # the probe is recorded
        client.call_tool("add", {"a": 1, "b": 2})
    assert '"server/discover"' in probed.read_text()
    replay = recorded(probed, mode="none")
    with Client(replay, protocol="legacy") as client:  # and not sent on replay
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    replay.verify()


class _OneAtATime(Transport):
    """An inner transport that is not self-serializing: it fails if two sends overlap."""

    def __init__(self) -> None:
        self.sending = threading.Lock()
        self.sent: list[Any] = []

    def send(self, message, *, timeout=None):
        assert self.sending.acquire(blocking=False), "two sends overlapped"
        try:
            time.sleep(0.05)
            self.sent.append(message["id"])
        finally:
            self.sending.release()

    def receive(self):
        raise AssertionError("not read in this test")

    def close(self):
        pass


def test_recording_serializes_sends_to_a_transport_that_needs_it_within_their_timeout(tmp_path):
    inner = _OneAtATime()
    recording = RecordingTransport(inner, tmp_path / "r.jsonl")
    assert isinstance(recording, ExchangeTransport)  # an HTTP send lasts until its reply: never held back
    threads = [threading.Thread(target=recording.send, args=({"id": n},)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert sorted(inner.sent) == [0, 1, 2, 3]
    logged = [json.loads(line)["message"]["id"] for line in (tmp_path / "r.jsonl").read_text().splitlines()[1:]]
    assert logged == inner.sent  # in the order written
    with recording._send_lock:
        with pytest.raises(TimeoutError):
            recording.send({"id": 9}, timeout=0.1)
    recording.close()
