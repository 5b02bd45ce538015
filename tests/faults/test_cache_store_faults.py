"""Cache stores at fault (issue #45, case 6): a backend fault or a damaged entry is a miss, and a
store's work ends with the client.

Against real parts: the official SDK's servers (``tests/servers/``), a real ``FileStore``
directory, a real ``redis-server`` stopped with SIGSTOP, and for what no real Redis does on
demand, a hostile one (``hostile_redis.py``).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import pytest
import redis

from mcpclient import Client, Plugins, StdioTransport
from mcpclient.cache import FileStore, MemoryStore, RedisStore
from mcpclient.transports import StreamableHTTPTransport
from tests.cache_fixtures import CacheServer, start_redis, stop
from tests.conftest import SDK_SERVER
from tests.faults.hostile_redis import HostileRedis
from tests.helpers import RELEASED_WITHIN, wait_for


def tools_entry(directory):
    """The FileStore entry holding the tools/list result: (path, header, value)."""
    for path in directory.iterdir():
        header, _, value = path.read_bytes().partition(b"\n")
        if b"/tools/list/" in header:
            return path, header, value
    raise AssertionError("no tools/list entry was kept")


@pytest.mark.parametrize("damage", [
    {"tools": 5},
    {"tools": [None]},
    {"tools": [{"description": "no name"}]},
    {"tools": [], "nextCursor": 7},
], ids=["items-not-a-list", "item-not-an-object", "no-name", "cursor-not-a-string"])
def test_an_entry_of_the_wrong_shape_is_a_miss_and_is_dropped(tmp_path, damage):
    store = FileStore(tmp_path / "c")
    with CacheServer() as server:
        with Client(StreamableHTTPTransport(server.url), plugins=Plugins(cache=store), timeout=10) as client:
            assert [tool.name for tool in client.list_tools()] == ["echo"]
        path, header, _ = tools_entry(tmp_path / "c")
        path.write_bytes(header + b"\n" + json.dumps(damage).encode())  # valid JSON, wrong shape
        for _ in range(2):  # the first asks the server and keeps its answer; the second is served it
            with Client(StreamableHTTPTransport(server.url), plugins=Plugins(cache=store), timeout=10) as client:
                assert [tool.name for tool in client.list_tools()] == ["echo"]
        counts = server.counts()
    assert counts["tools/list"] == 2
    assert json.loads(tools_entry(tmp_path / "c")[2])["tools"][0]["name"] == "echo"


def test_a_redis_answering_garbage_is_a_miss(caplog):
    with HostileRedis("garbage") as redis, CacheServer() as server:
        store = RedisStore(redis.url)
        with Client(StreamableHTTPTransport(server.url), plugins=Plugins(cache=store), timeout=10) as client:
            assert [tool.name for tool in client.list_tools()] == ["echo"]
            assert client.read_resource("user://me")[0].text == "the profile of nobody"
        store.close()
        assert sum(redis.counts.values()) > 0  # it was asked, and its answer counted as a miss
    assert "Redis cache failed" in caplog.text
def scans_stop(redis: HostileRedis, within: float) -> bool:
    """Whether the SCANs the hostile Redis gets stop coming within ``within`` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        before = redis.count("SCAN")
        time.sleep(0.5)
        if redis.count("SCAN") == before:
            return True
    return False


def test_a_key_scan_that_never_ends_holds_up_no_notification_and_ends_at_close():
    with HostileRedis("endless-scan", delay=0.01) as redis:
        store = RedisStore(redis.url)
        changed = threading.Event()
        client = Client(StdioTransport(SDK_SERVER), protocol="legacy", plugins=Plugins(cache=store), timeout=10)
        try:
            client.initialize()
            client.set_list_changed_handler(lambda kind: changed.set())
            client.list_tools()
            assert client.call_tool("toggle_tool").text == "added"
            assert changed.wait(10), "the list_changed handler never ran"
            wait_for(lambda: redis.count("SCAN") > 3, timeout=10)  # the stale entries are being dropped meanwhile
        finally:
            client.close()
        # An endless scan left running would never stop: stopped within 10 s is far from that.
        assert scans_stop(redis, within=RELEASED_WITHIN), "the key scan went on after close()"
        store.close()


class SlowToForget(MemoryStore):
    """A MemoryStore whose ``delete_prefix`` takes until ``release`` is set (a slow backend)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.forgetting = threading.Event()

    def delete_prefix(self, prefix: str) -> None:
        self.forgetting.set()
        self.release.wait(30)
        super().delete_prefix(prefix)


def test_while_stale_entries_are_being_dropped_the_client_asks_the_server():
    store = SlowToForget()
    changed = threading.Event()
    with Client(StdioTransport(SDK_SERVER), protocol="legacy", plugins=Plugins(cache=store), timeout=10) as client:
        client.set_list_changed_handler(lambda kind: changed.set())
        before = {tool.name for tool in client.list_tools()}
        assert {tool.name for tool in client.list_tools()} == before  # kept
        try:
            assert client.call_tool("toggle_tool").text == "added"
            assert changed.wait(10), "the list_changed handler waited for the store"
            assert store.forgetting.is_set()
            assert {tool.name for tool in client.list_tools()} == before | {"extra"}  # not the stale list
        finally:
            store.release.set()


def test_a_stopped_redis_holds_up_no_notification_and_no_close():
    # The user's own redis client, with its own (long) timeout: the store waits as long as it says.
    proc, url = start_redis()
    try:
        store = RedisStore(redis.Redis.from_url(url, socket_timeout=30))
        changed = threading.Event()
        client = Client(StdioTransport(SDK_SERVER), protocol="legacy", plugins=Plugins(cache=store), timeout=10)
        try:
            client.initialize()
            client.set_list_changed_handler(lambda kind: changed.set())
            client.list_tools()  # kept in Redis
            os.kill(proc.pid, signal.SIGSTOP)
            assert client.call_tool("toggle_tool").text == "added"
            assert changed.wait(10), "the list_changed handler waited for the stopped Redis"
            start = time.monotonic()
            client.close()
            assert time.monotonic() - start < RELEASED_WITHIN
        finally:
            client.close()
            os.kill(proc.pid, signal.SIGCONT)
        # The drop's thread, abandoned in its read, ends once Redis answers it.
        wait_for(lambda: not [t for t in threading.enumerate() if t.name == "mcpclient-cache-drop"], timeout=10)
    finally:
        stop(proc)
