"""The cache stores (memory, files, a real redis-server) and the result cache over them, with
a real SDK server counting what it is asked."""

from __future__ import annotations

import os
import stat
import threading
import time

import pytest

from mcpclient import Client, Plugins
from mcpclient.cache import FileStore, MemoryStore, Partition, RedisStore
from mcpclient.plugins.cache import ResultCache
from mcpclient.transports import StreamableHTTPTransport
from tests.cache_fixtures import CacheServer, redis_url  # noqa: F401 (a fixture)
from tests.helpers import RELEASED_WITHIN


def stores(tmp_path, url):
    return [MemoryStore(), FileStore(tmp_path / "c"), RedisStore(url)]


def test_every_store_keeps_expires_and_deletes(tmp_path, redis_url):  # noqa: F811
    for store in stores(tmp_path, redis_url):
        store.set("a/1", b"one", 60)
        store.set("a/2", b"two", 60)
        store.set("b/1", b"three", 0.2)
        store.set("z", b"never", 0)
        assert store.get("a/1") == b"one" and store.get("z") is None, store
        store.delete_prefix("a/")
        assert store.get("a/1") is None and store.get("a/2") is None and store.get("b/1") == b"three", store
        time.sleep(0.5)
        assert store.get("b/1") is None, store
        store.close()


def test_a_file_store_is_private_skips_damaged_entries_and_stays_bounded(tmp_path, caplog):
    store = FileStore(tmp_path / "c", max_bytes=4000)
    assert stat.S_IMODE((tmp_path / "c").stat().st_mode) == 0o700
    store.set("k", b"v", 60)
    (entry,) = list((tmp_path / "c").iterdir())
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    entry.write_bytes(b"\x80garbage")
    assert store.get("k") is None and "damaged" in caplog.text
    (tmp_path / "c" / "foreign.txt").write_text("not ours")
    for i in range(100):
        store.set(f"k{i}", b"x" * 200, 60)
    store.sweep()
    assert sum(p.stat().st_size for p in (tmp_path / "c").iterdir() if p.suffix == ".mcpcache") <= 4000
    assert store.get("k99") == b"x" * 200


def test_file_store_writers_in_threads_and_processes_never_tear_an_entry(tmp_path):
    store = FileStore(tmp_path / "c")
    values = [bytes([i]) * 50_000 for i in range(8)]
    pids = []
    for i in range(2):
        pid = os.fork()
        if pid == 0:
            child = FileStore(tmp_path / "c")
            for _ in range(30):
                child.set("shared", values[i], 60)
            os._exit(0)
        pids.append(pid)
    seen = []

    def write(i):
        for _ in range(30):
            store.set("shared", values[i], 60)
            seen.append(store.get("shared"))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2, 6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    for pid in pids:
        os.waitpid(pid, 0)
    assert seen and all(value in values for value in seen)
    assert not list((tmp_path / "c").glob(".tmp-*"))


def test_a_dead_redis_misses_quickly_and_calls_still_work(redis_url, caplog):  # noqa: F811
    # Nothing listens on port 1: refused at once. A store that waited out its timeout: 30 s.
    store = RedisStore(redis_url.replace(redis_url.rsplit(":", 1)[1].split("/")[0], "1"), timeout=30)
    started = time.monotonic()
    store.set("k", b"v", 60)
    assert store.get("k") is None
    assert time.monotonic() - started < RELEASED_WITHIN
    assert "Redis cache failed" in caplog.text
    with CacheServer() as server:
        with Client(StreamableHTTPTransport(server.url), plugins=Plugins(cache=store), timeout=10) as client:
            assert [tool.name for tool in client.list_tools()] == ["echo"]


@pytest.mark.parametrize("kind", ["file", "redis"])
def test_public_results_are_shared_and_private_ones_kept_per_partition(kind, tmp_path, redis_url):  # noqa: F811
    store = FileStore(tmp_path / "c") if kind == "file" else RedisStore(redis_url)
    with CacheServer() as server:
        for user in ("alice", "bob", "alice", "bob"):
            transport = StreamableHTTPTransport(server.url, headers={"X-User": user})
            with Client(transport, plugins=Plugins(cache=store, cache_partition=user), timeout=10) as client:
                assert [tool.name for tool in client.list_tools()] == ["echo"]
                assert client.read_resource("user://me")[0].text == f"the profile of {user}"
        with Client(StreamableHTTPTransport(server.url, headers={"X-User": "carol"}), plugins=Plugins(cache=store),
                    timeout=10) as client:
            assert client.read_resource("user://me")[0].text == "the profile of carol"  # no partition: asked
        counts = server.counts()
    assert counts["tools/list"] == 1
    assert counts["resources/read"] == 3
    store.close()


def test_a_partition_keeps_only_a_digest_of_its_name():
    token = "Bearer secret-token-1234"
    partition = Partition(token)
    assert partition == Partition(token) and partition != Partition("other")
    assert len({partition, Partition(token)}) == 1
    assert "secret" not in repr(partition) and "secret" not in partition.scope
    with pytest.raises(ValueError):
        Partition("")


def test_an_empty_partition_and_no_credential_name_nobody_so_private_results_are_never_stored(tmp_path):
    store = FileStore(tmp_path / "c")
    with CacheServer() as server:
        for _ in range(2):
            with Client(StreamableHTTPTransport(server.url),
                        plugins=Plugins(cache=store, cache_partition=""), timeout=10) as client:
                assert client.read_resource("user://me")[0].text == "the profile of nobody"
                assert client.read_resource("user://me")[0].text == "the profile of nobody"
        counts = server.counts()
    assert counts["resources/read"] == 4


def test_without_a_partition_the_credentials_name_whom_a_private_result_belongs_to(tmp_path):
    store = FileStore(tmp_path / "c")
    with CacheServer() as server:
        for user in ("dora", "dora", "eve", "dora"):
            with Client(StreamableHTTPTransport(server.url, headers={"X-User": user}),
                        plugins=Plugins(cache=store, cache_partition=""), timeout=10) as client:
                assert client.read_resource("user://me")[0].text == f"the profile of {user}"
        counts = server.counts()
    assert counts["resources/read"] == 2  # dora once, eve once: each kept for the headers sent


def test_a_partition_function_is_asked_on_every_call(tmp_path):
    store = MemoryStore()
    current: list[object] = [Partition("alice")]
    with CacheServer() as server:
        with Client(StreamableHTTPTransport(server.url),
                    plugins=Plugins(cache=store, cache_partition=lambda: current[0]),
                    timeout=10) as client:
            for who in ("alice", "alice", "bob", "alice", "bob", None, None):
                current[0] = Partition(who) if who == "alice" else who
                client.read_resource("user://me")
            current[0] = 42
            with pytest.raises(TypeError, match="cache_partition function gave int"):
                client.read_resource("user://me")
        counts = server.counts()
    assert counts["resources/read"] == 4  # alice once, bob once, and twice with no partition


def test_cache_partition_takes_only_names_partitions_and_functions():
    with pytest.raises(TypeError, match="cache_partition="):
        ResultCache(partition=42)  # type: ignore[arg-type]


def test_a_public_discover_answer_is_remembered_for_every_client_of_the_store(tmp_path):
    store = FileStore(tmp_path / "c")
    with CacheServer() as server:
        for user in ("alice", "bob", None):
            with Client(StreamableHTTPTransport(server.url),
                        plugins=Plugins(cache=store, cache_partition=user), timeout=10) as client:
                assert client.server_info.name == "cache-test"
                assert client.protocol_version == "2026-07-28"
        counts = server.counts()
    assert counts["server/discover"] == 1 and "initialize" not in counts


@pytest.mark.parametrize("kind", ["file", "redis"])
def test_a_private_discover_answer_is_kept_per_partition_never_shared(kind, tmp_path, redis_url):  # noqa: F811
    store = FileStore(tmp_path / "c") if kind == "file" else RedisStore(redis_url)
    with CacheServer("--discover-scope", "private") as server:
        for user in ("alice", "bob", "alice", "bob", Partition("bob"), None, ""):
            with Client(StreamableHTTPTransport(server.url),
                        plugins=Plugins(cache=store, cache_partition=user), timeout=10) as client:
                assert client.server_info.name == "cache-test"
        counts = server.counts()
    assert counts["server/discover"] == 4  # alice once, bob once, and each opening with no partition
    store.close()
