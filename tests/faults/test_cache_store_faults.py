"""Cache stores at fault (issue #45, case 6): a backend fault or a damaged entry is a miss, and a
store's work ends with the client.

Against real parts: the official SDK's servers (``tests/servers/``), a real ``FileStore``
directory, and for what no real Redis does on demand, a hostile one (``hostile_redis.py``).
"""

from __future__ import annotations

import json
import pytest

from mcpclient import Client
from mcpclient.cache import FileStore, RedisStore
from mcpclient.transports import StreamableHTTPTransport
from tests.cache_fixtures import CacheServer
from tests.faults.hostile_redis import HostileRedis


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
        with Client(StreamableHTTPTransport(server.url), cache=store, timeout=10) as client:
            assert [tool.name for tool in client.list_tools()] == ["echo"]
        path, header, _ = tools_entry(tmp_path / "c")
        path.write_bytes(header + b"\n" + json.dumps(damage).encode())  # valid JSON, wrong shape
        for _ in range(2):  # the first asks the server and keeps its answer; the second is served it
            with Client(StreamableHTTPTransport(server.url), cache=store, timeout=10) as client:
                assert [tool.name for tool in client.list_tools()] == ["echo"]
        counts = server.counts()
    assert counts["tools/list"] == 2
    assert json.loads(tools_entry(tmp_path / "c")[2])["tools"][0]["name"] == "echo"


def test_a_redis_answering_garbage_is_a_miss(caplog):
    with HostileRedis("garbage") as redis, CacheServer() as server:
        store = RedisStore(redis.url)
        with Client(StreamableHTTPTransport(server.url), cache=store, timeout=10) as client:
            assert [tool.name for tool in client.list_tools()] == ["echo"]
            assert client.read_resource("user://me")[0].text == "the profile of nobody"
        store.close()
        assert sum(redis.counts.values()) > 0  # it was asked, and its answer counted as a miss
    assert "Redis cache failed" in caplog.text
