"""map_tool against real servers: bounded, ordered or not, errors, retries, one deadline, one cancel."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from mcpclient import (
    CancelToken, ClientGroup, ConnectionClosed, RequestCancelled, RequestTimeout, SharedClient, SharedGroup,
    Stdio,
    ToolError, connect,
)
from tests.conftest import SDK_SERVER
from tests.helpers import require_mcp_sdk, wait_for
from tests.web.test_shared_client import WEB_SERVER


@pytest.fixture
def events(tmp_path):
    return tmp_path / "events.jsonl"


@pytest.fixture
def client(events):
    require_mcp_sdk()
    with connect(SDK_SERVER, timeout=20, stdio=Stdio(env={"SDK_SERVER_EVENTS": str(events)})) as opened:
        yield opened


def read(events: Path, name: str) -> list[dict]:
    if not events.exists():
        return []
    return [e for e in map(json.loads, events.read_text().splitlines()) if e["event"] == name]


def map_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("mcpclient-map") and t.is_alive()]


class Recorded:
    """An iterable of arguments that records how far it was read."""

    def __init__(self, items):
        self.items = list(items)
        self.read = 0

    def __iter__(self):
        for item in self.items:
            self.read += 1
            yield item


def test_results_come_in_input_order_and_the_input_is_never_read_more_than_concurrency_ahead(client):
    rows = Recorded({"a": i, "b": 1000} for i in range(60))
    handed = 0
    for result in client.map_tool("add", rows, concurrency=4):
        handed += 1
        assert rows.read - handed <= 4, f"read {rows.read} with {handed} handed out"
        assert result.structured_content == {"result": handed - 1 + 1000}
    assert handed == 60 and rows.read == 60
    wait_for(lambda: map_threads() == [], timeout=10)


def most_at_once(events: Path) -> int:
    """The most ``slow`` calls the server ran at once (its events are appended in order)."""
    running = most = 0
    for event in map(json.loads, events.read_text().splitlines()):
        if event["event"] == "slow_started":
            running += 1
            most = max(most, running)
        elif event["event"] in ("slow_finished", "slow_cancelled"):
            running -= 1
    return most


def test_no_more_than_concurrency_calls_run_at_once(client, events):
    results = list(client.map_tool("slow", [{"seconds": 0.3, "steps": 1}] * 9, concurrency=3))
    assert [r.text for r in results] == ["done after 1 steps"] * 9
    assert len(read(events, "slow_started")) == len(read(events, "slow_finished")) == 9
    assert 1 <= most_at_once(events) <= 3  # as the server saw them


def test_results_not_taken_hold_their_slot_so_a_slow_consumer_slows_the_reading(client, events):
    rows = Recorded({"seconds": 0.01, "steps": 1} for _ in range(50))
    batch = client.map_tool("slow", rows, concurrency=4)
    next(batch)  # one taken; the consumer now stops taking
    wait_for(lambda: len(read(events, "slow_finished")) == 5, timeout=20)  # the one taken and the four after it
    assert rows.read == 5 and len(read(events, "slow_started")) == 5  # done, not taken: nothing more was read
    assert len(list(batch)) == 49 and rows.read == 50
    assert most_at_once(events) <= 4


def test_unordered_results_come_as_they_complete(client):
    rows = [{"seconds": 3.0, "steps": 1}, {"seconds": 0.05, "steps": 1}, {"seconds": 0.05, "steps": 1}]
    first = next(iter(client.map_tool("slow", rows, concurrency=3, ordered=False)))
    assert first.text == "done after 1 steps"  # one of the quick ones: the slow one is still running
    # Leaving the loop early cancelled the slow call: its thread ends at once.
    wait_for(lambda: map_threads() == [], timeout=10)


def test_errors_raise_the_first_failure_or_come_back_in_place(client):
    rows = [{"a": 1, "b": 2}, {"a": "not a number", "b": 2}, {"a": 3, "b": 4}]
    results = list(client.map_tool("add", rows, errors="return"))
    assert [r.is_error for r in results] == [False, True, False]  # a tool's error reply is data
    with pytest.raises(ToolError):
        list(client.map_tool("add", rows, errors="raise"))

    def broken():
        yield from rows[:1]
        raise OSError("the input file went away")

    got = []
    with pytest.raises(OSError, match="went away"):  # the input's own error, after what was read before it
        for result in client.map_tool("add", broken()):
            got.append(result.structured_content)
    assert got == [{"result": 3}]
    with pytest.raises(ValueError, match="errors must be one of raise, return"):
        client.map_tool("add", rows, errors="ignore")
    with pytest.raises(ValueError, match="concurrency"):
        client.map_tool("add", rows, concurrency=0)


def test_a_raised_error_cancels_the_calls_in_flight(client, events):
    rows = [{"seconds": "not a number"}] + [{"seconds": 30, "steps": 30}] * 5
    with pytest.raises(ToolError):
        list(client.map_tool("slow", rows, concurrency=3))
    wait_for(lambda: map_threads() == [], timeout=10)
    # Whatever of the two slow calls the server had started, it was told to stop; none ran on.
    wait_for(lambda: len(read(events, "slow_cancelled")) == len(read(events, "slow_started")), timeout=15)
    assert len(read(events, "slow_started")) <= 2 and read(events, "slow_finished") == []


def test_a_shared_deadline_ends_every_call_in_flight_within_about_a_second(client, events):
    rows = [{"seconds": 30, "steps": 30}] * 10
    start = time.monotonic()
    with pytest.raises(RequestTimeout, match="deadline of 1.0 s"):
        list(client.map_tool("slow", rows, concurrency=3, timeout=1.0))
    assert time.monotonic() - start < 1.0 + 15  # not the 30 s the calls would take: they were cancelled
    wait_for(lambda: map_threads() == [], timeout=10)
    wait_for(lambda: len(read(events, "slow_cancelled")) == 3, timeout=15)  # the server was told, for all three
    assert len(read(events, "slow_started")) == 3  # and nothing more was sent
    assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2}


@pytest.mark.parametrize("kind", ["event", "token"])
def test_cancel_ends_every_call_in_flight_within_about_a_second(client, events, kind):
    cancel = threading.Event() if kind == "event" else CancelToken()
    threading.Timer(0.5, cancel.set if kind == "event" else cancel.cancel).start()
    start = time.monotonic()
    with pytest.raises(RequestCancelled, match="was cancelled after 0 results"):
        list(client.map_tool("slow", [{"seconds": 30, "steps": 30}] * 5, concurrency=2, cancel=cancel))
    assert time.monotonic() - start < 0.5 + 15  # not the 30 s the calls would take: they were cancelled
    wait_for(lambda: map_threads() == [], timeout=10)
    wait_for(lambda: len(read(events, "slow_cancelled")) == 2, timeout=15)


def test_retry_safe_resends_only_a_tool_that_changes_nothing(tmp_path):
    shared = SharedClient(WEB_SERVER, timeout=10)  # retry="fail": a dead server fails that call
    try:
        # lookup (readOnlyHint): its first call kills the server without a reply; sent once more, on a new one.
        results = list(shared.map_tool("lookup", [{"marker": str(tmp_path / "lookup")}], retry="safe"))
        assert results[0].text.startswith("ok ") and shared.opened == 2
        # write (no annotations) may have run: never sent twice; errors="return" hands out the error.
        results = list(shared.map_tool("write", [{"marker": str(tmp_path / "write")}], retry="safe", errors="return"))
        assert isinstance(results[0], ConnectionClosed)
        assert list(shared.map_tool("write", [{"marker": str(tmp_path / "write")}]))[0].text.startswith("ok ")
    finally:
        shared.close()


def test_without_retry_a_lost_connection_is_raised(tmp_path):
    shared = SharedClient(WEB_SERVER, timeout=10)
    try:
        with pytest.raises(ConnectionClosed):
            list(shared.map_tool("lookup", [{"marker": str(tmp_path / "lookup")}]))
    finally:
        shared.close()


def test_a_progress_bar_counts_the_results(client, capfd):
    results = list(client.map_tool("add", [{"a": i, "b": i} for i in range(5)], progress=True))
    assert len(results) == 5
    err = capfd.readouterr().err
    assert "add" in err and "5/5" in err


def test_groups_map_a_prefixed_tool(scale_path):
    require_mcp_sdk()
    rows = [{"a": i, "b": 1} for i in range(20)]
    with ClientGroup({"one": SDK_SERVER, "two": SDK_SERVER}, timeout=20) as group:
        assert [r.structured_content["result"] for r in group.map_tool("two__add", rows)] == list(range(1, 21))
    shared = SharedGroup({"one": SDK_SERVER}, timeout=20)
    try:
        got = sorted(r.structured_content["result"] for r in shared.map_tool("one__add", rows, ordered=False))
        assert got == list(range(1, 21))
    finally:
        shared.close()


def test_server_everything_answers_a_batch(scale_path):
    from tests import node_tools

    if node_tools.node22() is None or not node_tools.EVERYTHING_JS.is_file():
        pytest.skip("Node 22 or server-everything missing: run `npm ci` in tests/node")
    with connect(node_tools.everything_server_cmd("stdio"), timeout=30) as everything:
        texts = [r.text for r in everything.map_tool("echo", ({"message": f"m{i}"} for i in range(50)))]
    assert texts == [f"Echo: m{i}" for i in range(50)]
