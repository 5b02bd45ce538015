"""A private result never crosses users: whom it belongs to is the client's one account of credentials.

A legacy server has no ``cacheScope``: it never said its answers may be shared. Against the
official SDK's legacy server that supports subscriptions (``sdk_cache_server.py --legacy``,
which answers ``user://me`` with the caller), clients with their own credentials (bearer
tokens, the URL's user info or ``?api_key=``, a middleware's header) and their own
``cache_partition`` share a ``MemoryStore`` or a ``FileStore``: each must get its own profile,
fetched once and then reused, never another's. A legacy answer is shared only among clients
that send no credential; and a client whose credentials are known only as they are sent (a
token provider) keeps nothing private without a partition. The same through ``mcpclient read
--cache DIR`` (child processes), with two tokens and with two URL passwords.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpclient import Client, Plugins, StreamableHTTPTransport
from mcpclient.cache import FileStore, MemoryStore
from tests.cache_fixtures import CacheServer, cli

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
TOKENS = {"alice": "tok-alice-5f0c2e91", "bob": "tok-bob-77d1a0c3"}


def store_of(kind: str, tmp_path: Path):
    return MemoryStore() if kind == "memory" else FileStore(tmp_path / "cache")


@pytest.mark.parametrize("kind", ["memory", "file"])
@pytest.mark.parametrize("partitioned", [True, False], ids=["with-partitions", "tokens-only"])
def test_a_legacy_result_is_never_served_to_another_token(kind, partitioned, tmp_path):
    store = store_of(kind, tmp_path)
    with CacheServer("--legacy") as server:
        for user in ("alice", "bob", "alice", "bob"):
            transport = StreamableHTTPTransport(server.url, headers={"Authorization": f"Bearer {TOKENS[user]}"})
            with Client(transport,
                        plugins=Plugins(cache=store, cache_partition=user if partitioned else None), timeout=10) as client:
                assert client.protocol_version == "2025-11-25"
                assert client.server_capabilities["resources"]["subscribe"] is True
                assert client.read_resource("user://me")[0].text == f"the profile of {TOKENS[user]}"
                assert [tool.name for tool in client.list_tools()] == ["echo"]
        counts = server.counts()
    assert counts["resources/read"] == 2  # each user's own, fetched once, then reused by that user only
    assert counts["tools/list"] == 2  # a list too: the server never said it may be shared


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_a_legacy_result_is_shared_only_among_clients_that_send_no_credential(kind, tmp_path):
    store = store_of(kind, tmp_path)
    with CacheServer("--legacy") as server:
        for _ in range(2):
            with Client(StreamableHTTPTransport(server.url), plugins=Plugins(cache=store), timeout=10) as client:
                assert client.read_resource("user://me")[0].text == "the profile of nobody"
        headers = {"Authorization": f"Bearer {TOKENS['alice']}"}
        with Client(StreamableHTTPTransport(server.url, headers=headers),
                    plugins=Plugins(cache=store), timeout=10) as client:
            assert client.read_resource("user://me")[0].text == f"the profile of {TOKENS['alice']}"
        with Client(StreamableHTTPTransport(server.url),
                    plugins=Plugins(cache=store, cache_partition="carol"), timeout=10) as client:
            assert client.read_resource("user://me")[0].text == "the profile of nobody"  # asked: a partition is someone
        counts = server.counts()
    assert counts["resources/read"] == 3


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_url_credentials_keep_legacy_results_apart(kind, tmp_path):
    store = store_of(kind, tmp_path)
    with CacheServer("--legacy") as server:
        base = server.url.removeprefix("http://")
        urls = {
            "alice": f"http://alice:pw-alice-1234@{base}", "bob": f"http://bob:pw-bob-567890@{base}",
            "key-a-0001": f"http://{base}?api_key=key-a-0001", "key-b-0002": f"http://{base}?api_key=key-b-0002",
        }
        for name in ("alice", "bob", "key-a-0001", "key-b-0002", "alice", "key-b-0002"):
            with Client(StreamableHTTPTransport(urls[name]), plugins=Plugins(cache=store), timeout=10) as client:
                assert client.read_resource("user://me")[0].text == f"the profile of {name}"
        counts = server.counts()
    assert counts["resources/read"] == 4


def test_a_middlewares_credential_header_keeps_legacy_results_apart():
    store = MemoryStore()
    user = ["alice"]

    def per_user(message, next_):
        return next_(message.with_headers({"X-User": user[0]}))

    with CacheServer("--legacy") as server:
        with Client(StreamableHTTPTransport(server.url),
                    plugins=Plugins(cache=store), middleware=[per_user], timeout=10) as client:
            for name in ("alice", "bob", "alice"):
                user[0] = name
                assert client.read_resource("user://me")[0].text == f"the profile of {name}"
        counts = server.counts()
    assert counts["resources/read"] == 2


def test_credentials_known_only_as_sent_keep_nothing_private_without_a_partition():
    store = MemoryStore()
    current = ["alice"]

    def token() -> str:
        return TOKENS[current[0]]

    with CacheServer("--legacy") as server:
        with Client(StreamableHTTPTransport(server.url, token_provider=token),
                    plugins=Plugins(cache=store), timeout=10) as client:
            for name in ("alice", "bob", "alice"):
                current[0] = name
                assert client.read_resource("user://me")[0].text == f"the profile of {TOKENS[name]}"
        unpartitioned = server.counts()["resources/read"]
        with Client(StreamableHTTPTransport(server.url, token_provider=token),
                    plugins=Plugins(cache=store, cache_partition=lambda: current[0]), timeout=10) as client:
            for name in ("alice", "bob", "alice", "bob"):
                current[0] = name
                assert client.read_resource("user://me")[0].text == f"the profile of {TOKENS[name]}"
        counts = server.counts()
    assert unpartitioned == 3  # who the provider's token names is not known before the request
    assert counts["resources/read"] == 5  # with a partition: each user's kept for that user


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_a_private_discover_answer_is_remembered_per_credentials_never_shared(kind, tmp_path):
    store = store_of(kind, tmp_path)
    with CacheServer("--discover-scope", "private") as server:
        for user in ("alice", "bob", "alice", "bob"):
            transport = StreamableHTTPTransport(server.url, headers={"Authorization": f"Bearer {TOKENS[user]}"})
            with Client(transport, plugins=Plugins(cache=store), timeout=10) as client:
                assert client.read_resource("user://me")[0].text == f"the profile of {TOKENS[user]}"
        with Client(StreamableHTTPTransport(server.url), plugins=Plugins(cache=store), timeout=10) as client:
            assert client.server_info.name == "cache-test"  # nobody to keep it for: probed again
        counts = server.counts()
    assert counts["server/discover"] == 3 and counts["resources/read"] == 2


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_two_tokens_through_the_cli_cache_never_share_a_private_result(era, tmp_path):
    cache = str(tmp_path / "cache")
    with CacheServer(*(("--legacy",) if era == "legacy" else ())) as server:
        for user in ("alice", "alice", "bob", "alice", "bob"):
            run = cli("read", server.url, "user://me", "-H", f"Authorization: Bearer {TOKENS[user]}", "--cache", cache)
            assert run.returncode == 0, run.stderr
            assert run.stdout.strip() == f"the profile of {TOKENS[user]}"
        counts = server.counts()
    assert counts["resources/read"] == 2
    kept = b"".join(path.read_bytes() for path in (tmp_path / "cache").iterdir())
    assert b"tok-bob" in kept and b"Bearer" not in kept  # the profiles, never a credential in a key


def test_two_url_passwords_through_the_cli_cache_never_share_a_legacy_result(tmp_path):
    cache = str(tmp_path / "cache")
    with CacheServer("--legacy") as server:
        base = server.url.removeprefix("http://")
        for user in ("alice", "bob", "alice"):
            run = cli("read", f"http://{user}:pw-{user}-secret@{base}", "user://me", "--cache", cache)
            assert run.returncode == 0, run.stderr
            assert run.stdout.strip() == f"the profile of {user}"
        counts = server.counts()
    assert counts["resources/read"] == 2
    kept = b"".join(path.read_bytes() for path in (tmp_path / "cache").iterdir())
    assert b"pw-alice-secret" not in kept and b"pw-bob-secret" not in kept
