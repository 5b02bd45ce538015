"""A ``ClientPool`` shared by many users, every client of it sharing one result cache store, under
load: no request carries another user's token, and no answer, cached or fresh, is another
user's (issue #48).

The server is the official SDK's (tests/servers/sdk_cache_server.py ``--record``): ``whoami(tag)``
and the private resource ``user://me`` answer with the caller's token, and it records what each
request carried. The test tries hard to make a result cross: a pool far smaller than its users
with an idle limit of a few milliseconds (so clients are evicted and reopened under the calls),
one store for every client, keys discarded and made again while their calls run, both protocol
eras, credentials fixed in headers or sent by a token provider, and a forked child.
"""

from __future__ import annotations

import functools
import random
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import mcpclient
from mcpclient import ClientClosedError, ClientPool
from mcpclient.cache import FileStore, MemoryStore
from tests.cache_fixtures import RecordingServer
from tests.faults.forking import in_child
from tests.helpers import require_mcp_sdk

pytestmark = pytest.mark.timeout(180)

require_mcp_sdk()

USERS = [f"u{i}" for i in range(10)]
ROUNDS = 8


def token_of(user: str) -> str:
    return f"secret-{user}-{user * 3}"


def with_headers(url: str, store: Any, user: str) -> mcpclient.Client:
    """A factory: the user's token in a header, a fixed credential the account names."""
    return mcpclient.connect(url, http=mcpclient.HTTP(headers={"Authorization": f"Bearer {token_of(user)}"}),
                             plugins=mcpclient.Plugins(cache=store), timeout=30)


def with_provider(url: str, store: Any, user: str) -> mcpclient.Client:
    """A factory: the user's token from a provider (known only as it is sent), and the user as
    the cache partition, without which nothing private would be kept."""
    return mcpclient.connect(url, http=mcpclient.HTTP(token_provider=functools.partial(token_of, user)),
                             plugins=mcpclient.Plugins(cache=store, cache_partition=user), timeout=30)


@pytest.fixture(scope="module", params=["modern", "legacy"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordingServer]:
    args = ("--legacy",) if request.param == "legacy" else ()
    with RecordingServer(tmp_path_factory.mktemp("records"), *args) as recording:
        yield recording


def hammer(pool: ClientPool[str], users: list[str], rounds: int, churn: bool) -> list[str]:
    """Every user calls ``whoami`` and reads ``user://me`` ``rounds`` times, each from a thread of
    its own; with ``churn``, another thread discards random keys meanwhile. What was wrong."""
    wrong: list[str] = []
    done = threading.Event()

    def calls(user: str) -> None:
        for n in range(rounds):
            tag = f"{user}-{n}"
            while True:
                try:
                    handle = pool.get(user)
                    text = handle.call_tool("whoami", {"tag": tag}, timeout=60).text
                    profile = handle.read_resource("user://me", timeout=60)[0].text
                    break
                except ClientClosedError:  # its client was discarded under the call: a new one now
                    continue
            if text != f"{token_of(user)} {tag}":
                wrong.append(f"{user} got {text!r}")
            if profile != f"the profile of {token_of(user)}":
                wrong.append(f"{user} read {profile!r}")

    def discard() -> None:
        chance = random.Random(48)
        while not done.wait(0.05):
            pool.discard(chance.choice(users))

    churner = threading.Thread(target=discard) if churn else None
    if churner is not None:
        churner.start()
    threads = [threading.Thread(target=calls, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(150)
    done.set()
    if churner is not None:
        churner.join(10)
    return wrong


def check_records(server: RecordingServer) -> None:
    records = server.records()
    calls = [r for r in records if r["method"] == "tools/call"]
    assert calls and all(r["caller"] == token_of(str(r["tag"]).split("-")[0]) for r in calls)
    assert {r["caller"] for r in records} <= {token_of(user) for user in USERS}


@pytest.mark.parametrize("factory", [with_headers, with_provider], ids=["headers", "token-provider"])
@pytest.mark.parametrize("kind", ["memory", "files"])
def test_many_users_through_a_small_pool_and_one_store_never_see_anothers_token_or_result(
    server: RecordingServer, factory: Callable[..., mcpclient.Client], kind: str, tmp_path: Path,
):
    store = MemoryStore() if kind == "memory" else FileStore(tmp_path / "cache")
    pool = ClientPool(functools.partial(factory, server.url, store), max_clients=3, idle_timeout=0.005)
    reads_before = reads(server)
    try:
        assert hammer(pool, USERS, ROUNDS, churn=True) == []
        stats = pool.stats()
        assert stats["opened"] > len(USERS) and stats["evicted"] > 0  # clients came and went under the calls
    finally:
        pool.close()
    check_records(server)
    assert reads(server) - reads_before < len(USERS) * ROUNDS, "the store served no read: nothing was tried"


def reads(server: RecordingServer) -> int:
    return sum(1 for r in server.records() if r["method"] == "resources/read")


def test_a_forked_child_of_a_busy_pool_serves_each_user_their_own(server: RecordingServer):
    store = MemoryStore()
    pool = ClientPool(functools.partial(with_headers, server.url, store), max_clients=4)
    try:
        assert hammer(pool, USERS[:4], 2, churn=False) == []  # the parent's clients and store are warm

        def child() -> str:
            return "\n".join(hammer(pool, USERS, 3, churn=False)) or "fine"

        assert in_child(child, timeout=120) == "fine"
        assert hammer(pool, USERS[:4], 2, churn=False) == []  # the parent's, after the child
    finally:
        pool.close()
    check_records(server)


@pytest.mark.parametrize("mode", ["deny", "fail"])
def test_a_users_token_echoed_by_a_failing_server_is_in_no_error_health_or_stats(mode: str):
    """A hostile server echoes the token in every form (tests/security/url_echo_server.py):
    ``deny`` refuses the open with a 401, ``fail`` opens and answers every request with a 500."""
    from tests.security.url_echo_server import URLEchoServer, echoes

    secret = "Bearer s3cr3t-token-of-ann"
    with URLEchoServer() as echo:
        url = echo.url_for(mode)
        pool = ClientPool(lambda user: mcpclient.connect(url, http=mcpclient.HTTP(headers={"Authorization": secret}), timeout=10))
        try:
            with pytest.raises(mcpclient.MCPError) as raised:
                pool.get("ann").ping(timeout=10)
            health = pool.health("ann")
            shown = " ".join([str(raised.value), repr(raised.value), repr(health), repr(pool.stats()), repr(pool)])
        finally:
            pool.close()
    assert health["ok"] is False and health["last_error"]
    assert echo.seen, "the server saw nothing: the test proves nothing"
    for form in echoes(secret):
        assert form not in shown, form
