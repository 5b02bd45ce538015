"""``mcpclient.Retry``: the policy's rules, and a pause ended by the connection's death.

The policy against real servers over HTTP (503, resets, JSON-RPC codes, cancel, close, the
deadline): tests/http/test_retry_policy.py. Telemetry: tests/otel/test_retry_events.py.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from mcpclient import (
    ClientPool,
    ConnectionClosed,
    HTTPStatusError,
    Retry,
    RPCError,
    SharedClient,
    SharedGroup,
    StreamInterrupted,
    TransportError,
    connect,
)
from mcpclient._core.exceptions import RequestTimeout
from tests.helpers import wait_for

RETRY_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "sdk_retry_server.py"),
                "--transport", "stdio", "--legacy-only"]
BUSY = -32050


def test_the_defaults_are_those_of_the_docs():
    retry = Retry()
    assert (retry.attempts, retry.backoff, retry.backoff_max, retry.jitter) == (3, 0.5, 10.0, 0.25)
    assert retry.statuses == {429, 503} and retry.codes == frozenset() and retry.total is None
    assert retry.idempotent is False and retry.retry_after_max == 60.0


@pytest.mark.parametrize("bad", [{"attempts": 0}, {"backoff": -1}, {"backoff_max": -0.5}, {"jitter": 1.5},
                                 {"jitter": -0.1}, {"total": -1}])
def test_a_bad_value_is_refused_when_made(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        Retry(**bad)


def test_the_pause_doubles_up_to_its_cap_less_at_most_the_jitter():
    retry = Retry(backoff=1.0, backoff_max=5.0, jitter=0.25)
    for attempt, full in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        pauses = [retry.pause(attempt) for _ in range(200)]
        assert all(full * 0.75 <= pause <= full for pause in pauses), (attempt, min(pauses), max(pauses))
    assert Retry(jitter=0.0, backoff=2.0).pause(1) == 2.0
    assert retry.pause(1, retry_after=7.0) == 7.0, "a server's Retry-After replaces the backoff"


def test_what_counts_as_transient():
    retry = Retry(codes={BUSY})
    assert retry.transient(HTTPStatusError("busy", status_code=503))
    assert retry.transient(HTTPStatusError("slow down", status_code=429))
    assert not retry.transient(HTTPStatusError("broken", status_code=500))
    assert retry.transient(StreamInterrupted("the stream broke"))
    assert retry.transient(TransportError("refused"))
    assert retry.transient(RPCError(BUSY, "busy"))
    assert not retry.transient(RPCError(-32603, "internal"))
    assert not retry.transient(RequestTimeout("late"))


def test_only_what_is_harmless_to_send_again_is_allowed():
    retry = Retry()
    dropped = TransportError("dropped after it was sent")  # may have run
    refused = HTTPStatusError("refused", status_code=503)  # proves it never ran
    assert refused.delivered is False and dropped.delivered is True
    assert retry.allows(dropped, changes_nothing=True)
    assert not retry.allows(dropped, changes_nothing=False)
    assert retry.allows(refused, changes_nothing=False)
    assert retry.new(idempotent=True).allows(dropped, changes_nothing=False), "the caller opted in"
    assert not retry.new(statuses=()).allows(refused, changes_nothing=False), "503 not chosen as transient"


def test_a_refusal_keeps_its_retry_after_through_pickling():
    import pickle

    error = pickle.loads(pickle.dumps(HTTPStatusError("busy", status_code=503, retry_after=2.5)))
    assert (error.status_code, error.retry_after, error.delivered) == (503, 2.5, False)


def test_the_death_of_a_stdio_server_ends_the_pause(caplog):
    caplog.set_level("INFO", logger="mcpclient")
    client = connect(RETRY_SERVER, timeout=120, retry=Retry(codes={BUSY}, backoff=60.0, backoff_max=60.0,
                                                             jitter=0.0))
    outcome: dict[str, object] = {}
    try:
        client.list_tools()

        def run():
            try:
                outcome["result"] = client.call_tool("busy", {"key": "dies", "times": 5})
            except BaseException as exc:  # noqa: BLE001 - read below
                outcome["error"] = exc
            outcome["ended"] = time.monotonic()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        wait_for(lambda: pausing(caplog), timeout=20, what="the pause before attempt 2")
        assert "ended" not in outcome, outcome
        killed = time.monotonic()
        os.kill(client.transport.pid, signal.SIGKILL)
        thread.join(10)
        assert "ended" in outcome, "the pause outlived the server"
        assert isinstance(outcome["error"], ConnectionClosed)
        assert outcome["ended"] - killed < 10
    finally:
        client.close()


def pausing(caplog) -> bool:
    """Whether the client logged the start of a pause before a further attempt."""
    return any("attempt 2 of" in record.getMessage() for record in caplog.records)


# -- retry="safe" on a shared client: a spelling of a Retry ------------------------------------


def kill(shared) -> None:
    client = shared.get()
    os.kill(client.transport.pid, signal.SIGKILL)
    wait_for(lambda: client.transport.returncode is not None, timeout=20)


@pytest.mark.parametrize("spelling", ["safe", Retry(attempts=2, backoff=0.0, jitter=0.0)], ids=["safe", "Retry"])
def test_retry_safe_is_a_spelling_of_a_retry_of_two_attempts_on_a_new_server(spelling):
    shared = SharedClient(RETRY_SERVER, timeout=20, retry=spelling)
    try:
        shared.list_tools()
        kill(shared)
        assert shared.call_tool("lookup", {"key": "k"}).content[0].text == "value of k"  # readOnlyHint
        assert shared.opened == 2, "sent again, to a new server"

        kill(shared)
        with pytest.raises(ConnectionClosed):  # destructiveHint: it may have run, never sent twice
            shared.call_tool("append", {"item": "x"})
        assert json.loads(shared.call_tool("ran").content[0].text).get("append") is None, "not sent to the new one"

        kill(shared)  # the call opts in: it is sent again to a new server
        opened = shared.opened
        result = shared.call_tool("append", {"item": "y"}, retry=Retry(attempts=2, backoff=0.0, idempotent=True))
        assert result.content[0].text == "appended y" and shared.opened == opened + 1
    finally:
        shared.close()


def test_a_shared_clients_retry_is_also_each_clients_own():
    policy = Retry(attempts=3, backoff=0.01, codes={BUSY})
    shared = SharedClient(RETRY_SERVER, timeout=20, retry=policy)
    try:
        shared.list_tools()
        assert shared.call_tool("busy", {"key": "shared", "times": 2}).content[0].text == "ready shared"
        assert shared.get()._conversation.retry == policy
    finally:
        shared.close()
    with pytest.raises(ValueError, match="mcpclient.Retry"):
        SharedClient(RETRY_SERVER, retry="sometimes")


def open_for(key: str):
    """A ClientPool factory (module level: the pool pickles as it)."""
    return connect(RETRY_SERVER, timeout=20)


def test_a_pools_retry_sends_a_call_again_on_a_new_server_for_the_key():
    pool = ClientPool(open_for, retry=Retry(attempts=2, backoff=0.0))
    try:
        handle = pool.get("ann")
        handle.list_tools()
        with pool.client("ann") as first:
            pid = first.transport.pid
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: first.transport.returncode is not None, timeout=20)
        assert handle.call_tool("lookup", {"key": "k"}).content[0].text == "value of k"  # readOnlyHint
        with pool.client("ann") as client:
            assert client.transport.pid != pid, "sent again to the key's new server"
    finally:
        pool.close()



@pytest.mark.parametrize("spelling", ["safe", Retry(attempts=2, backoff=0.0)], ids=["safe", "Retry"])
def test_a_shared_groups_retry_after_a_dead_server(spelling):
    shared = SharedGroup({"r": RETRY_SERVER}, retry=spelling, timeout=20)
    try:
        shared.list_tools()
        first = shared.get().clients["r"]
        os.kill(first.transport.pid, signal.SIGKILL)
        wait_for(lambda: first.transport.returncode is not None, timeout=20)
        assert shared.call_tool("r__lookup", {"key": "g"}).content[0].text == "value of g"  # readOnlyHint
        second = shared.get().clients["r"]
        assert second is not first
        os.kill(second.transport.pid, signal.SIGKILL)
        wait_for(lambda: second.transport.returncode is not None, timeout=20)
        with pytest.raises(ConnectionClosed):  # destructiveHint: never sent twice
            shared.call_tool("r__append", {"item": "g"})
    finally:
        shared.close()
