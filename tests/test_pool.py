"""``ClientPool``: a client per user key, each with its user's token, bounded, leased, closed when
idle, against the official-SDK server that records what each request carried
(tests/servers/sdk_cache_server.py ``--record``; ``whoami(tag)`` answers with the caller's token)."""

from __future__ import annotations

import functools
import pickle
import sys
import threading
import time
from typing import Any, Iterator

import pytest

import mcpclient
from mcpclient import ClientClosedError, ClientPool, RequestTimeout
from tests.cache_fixtures import RecordingServer
from tests.faults.forking import in_child
from tests.helpers import RELEASED_WITHIN, require_mcp_sdk, wait_for

pytestmark = pytest.mark.timeout(120)

require_mcp_sdk()


def token_of(user: str) -> str:
    return f"token-of-{user}"


def open_for(url: str, user: str, **options: Any) -> mcpclient.Client:
    """The factory of these tests (a module-level function: pools pickle as it): ``user``'s
    client, with ``user``'s bearer token."""
    return mcpclient.connect(url, http=mcpclient.HTTP(headers={"Authorization": f"Bearer {token_of(user)}"}), timeout=30, **options)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordingServer]:
    with RecordingServer(tmp_path_factory.mktemp("records")) as recording:
        yield recording


@pytest.fixture
def pools() -> Iterator[list[ClientPool[Any]]]:
    """Pools a test makes, closed after it (each closes its clients and ends its threads)."""
    made: list[ClientPool[Any]] = []
    yield made
    for pool in made:
        pool.close()


class Counting:
    """``open_for`` that counts the keys it was asked for."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.asked: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, user: str) -> mcpclient.Client:
        with self.lock:
            self.asked.append(user)
        return open_for(self.url, user)


def whoami(client: Any, user: str, tag: str = "t") -> None:
    """Call ``whoami`` and check the server saw ``user``'s token."""
    assert client.call_tool("whoami", {"tag": tag}).text == f"{token_of(user)} {tag}"


def test_each_key_gets_its_own_client_and_every_call_carries_its_users_token(server, pools):
    factory = Counting(server.url)
    pool = ClientPool(factory)
    pools.append(pool)
    for round_ in range(3):
        for user in ("alice", "bob", "carol"):
            whoami(pool.get(user), user, f"{user}-{round_}")
    assert sorted(factory.asked) == ["alice", "bob", "carol"]  # one open per key
    assert len(pool) == 3 and "alice" in pool and "dave" not in pool
    mine = [r for r in server.records() if str(r["tag"]).split("-")[0] in ("alice", "bob", "carol")]
    assert len(mine) == 9 and all(r["caller"] == token_of(str(r["tag"]).split("-")[0]) for r in mine)


def test_the_least_recently_used_idle_client_makes_room_and_its_key_opens_again_later(server, pools):
    factory = Counting(server.url)
    pool = ClientPool(factory, max_clients=2)
    pools.append(pool)
    whoami(pool.get("alice"), "alice")
    whoami(pool.get("bob"), "bob")
    whoami(pool.get("alice"), "alice")  # bob is now the least recently used
    whoami(pool.get("carol"), "carol")
    assert "bob" not in pool and "alice" in pool and "carol" in pool
    whoami(pool.get("bob"), "bob")
    assert factory.asked == ["alice", "bob", "carol", "bob"]
    stats = pool.stats()
    assert stats["evicted"] == 2 and stats["open"] == 2 and stats["opened"] == 4 and stats["in_use"] == 0


def test_a_client_in_use_is_never_taken_a_call_waits_for_a_place_and_goes_on_when_one_is_given_back(server, pools):
    pool = ClientPool(functools.partial(open_for, server.url), max_clients=1)
    pools.append(pool)
    outcome: dict[str, Any] = {}
    with pool.client("alice") as alice:
        with pytest.raises(RequestTimeout, match=r"waiting for a free client of the pool \(max_clients=1"):
            pool.get("bob").call_tool("whoami", {"tag": "x"}, timeout=0.5)

        def bob() -> None:
            outcome["text"] = pool.get("bob").call_tool("whoami", {"tag": "later"}, timeout=60).text

        waiter = threading.Thread(target=bob)
        waiter.start()
        wait_for(lambda: pool.stats()["waiting"] == 1, timeout=30)
        whoami(alice, "alice")  # still open: nobody took it while it was held
        assert waiter.is_alive()
    waiter.join(60)
    assert outcome == {"text": f"{token_of('bob')} later"}
    assert "alice" not in pool and pool.stats()["evicted"] == 1


def test_a_call_waiting_for_a_place_is_served_before_one_that_came_after_it(server, pools):
    factory = Counting(server.url)
    pool = ClientPool(factory, max_clients=1)
    pools.append(pool)
    outcome: dict[str, Any] = {}

    def first() -> None:
        outcome["first"] = pool.get("bob").call_tool("whoami", {"tag": "first"}, timeout=60).text

    switch = sys.getswitchinterval()
    with pool.client("alice"):
        waiter = threading.Thread(target=first)
        waiter.start()
        wait_for(lambda: pool.stats()["waiting"] == 1, timeout=30)
        sys.setswitchinterval(5.0)  # this thread keeps running past the release, as a busy server's may
    try:
        # alice's client was just given back, for bob's call, which waited; carol's, coming
        # before bob's thread got to run, waits behind it.
        whoami(pool.get("carol"), "carol")
    finally:
        sys.setswitchinterval(switch)
    waiter.join(60)
    assert outcome == {"first": f"{token_of('bob')} first"}
    assert factory.asked == ["alice", "bob", "carol"]


def test_slot_timeout_zero_refuses_at_once_when_every_client_is_in_use(server, pools):
    pool = ClientPool(functools.partial(open_for, server.url), max_clients=1, slot_timeout=0)
    pools.append(pool)
    with pool.client("alice"):
        with pytest.raises(RequestTimeout, match="free client of the pool"):
            pool.get("bob").ping(timeout=60)
    whoami(pool.get("bob"), "bob")


def test_close_ends_every_wait_at_once_and_the_pool_opens_again_after(server, pools):
    pool = ClientPool(functools.partial(open_for, server.url), max_clients=1)
    pools.append(pool)
    ended: list[tuple[float, BaseException | None]] = []

    def wait_for_a_place() -> None:
        error: BaseException | None = None
        try:
            pool.get("bob").ping(timeout=None)
        except BaseException as exc:  # recorded for the test
            error = exc
        ended.append((time.monotonic(), error))

    with pool.client("alice"):
        waiters = [threading.Thread(target=wait_for_a_place) for _ in range(3)]
        for waiter in waiters:
            waiter.start()
        wait_for(lambda: pool.stats()["waiting"] == 3, timeout=30)
        closed_at = time.monotonic()
        pool.close()
        for waiter in waiters:
            waiter.join(closed_at + RELEASED_WITHIN + 5 - time.monotonic())
    assert len(ended) == 3
    for at, error in ended:
        assert isinstance(error, ClientClosedError), error
        assert at - closed_at < RELEASED_WITHIN
    whoami(pool.get("bob"), "bob")


def test_a_client_idle_past_the_limit_is_closed_but_never_one_in_use(server, pools):
    factory = Counting(server.url)
    pool = ClientPool(factory, idle_timeout=0.2)
    pools.append(pool)
    with pool.client("alice") as alice:
        whoami(pool.get("bob"), "bob")
        wait_for(lambda: "bob" not in pool, timeout=30)  # the idle clock ran past the limit
        whoami(alice, "alice")  # held all along: still open
        assert "alice" in pool
    wait_for(lambda: "alice" not in pool, timeout=30)
    assert pool.stats()["closed_idle"] == 2
    whoami(pool.get("bob"), "bob")
    assert factory.asked == ["alice", "bob", "bob"]


def test_a_failing_factory_fails_its_keys_callers_only_and_the_next_call_tries_again(server, pools):
    failures = {"bob": 1}

    def factory(user: str) -> mcpclient.Client:
        if failures.get(user):
            failures[user] -= 1
            raise LookupError("no token for this user yet")
        return open_for(server.url, user)

    pool = ClientPool(factory, max_clients=2)
    pools.append(pool)
    whoami(pool.get("alice"), "alice")
    with pytest.raises(LookupError, match="no token"):
        pool.get("bob").ping()
    assert "bob" not in pool and pool.stats()["failed"] == 1 and pool.stats()["open"] == 1
    whoami(pool.get("carol"), "carol")  # the failed key holds no place: nothing was evicted
    assert pool.stats()["evicted"] == 0
    whoami(pool.get("bob"), "bob")
    whoami(pool.get("carol"), "carol")


def test_the_factory_must_make_a_new_client_for_each_key(server, pools):
    shared = open_for(server.url, "alice")
    pool = ClientPool(lambda user: shared)
    pools.append(pool)
    whoami(pool.get("alice"), "alice")
    with pytest.raises(ValueError, match="the client it made for another"):
        pool.get("bob").ping()
    whoami(pool.get("alice"), "alice")  # the refused client was not closed: it is alice's
    with pytest.raises(TypeError, match="must return a mcpclient.Client"):
        ClientPool(lambda user: "http://example.invalid/mcp").get("x").ping()


def test_a_key_can_be_discarded_after_its_token_changed_and_opens_with_the_new_one(server, pools):
    tokens = {"alice": "first"}

    def factory(user: str) -> mcpclient.Client:
        return mcpclient.connect(server.url, http=mcpclient.HTTP(headers={"Authorization": f"Bearer {tokens[user]}"}), timeout=30)

    pool = ClientPool(factory)
    pools.append(pool)
    handle = pool.get("alice")
    assert handle.call_tool("whoami", {"tag": "a"}).text == "first a"
    tokens["alice"] = "second"
    pool.discard("alice")
    assert "alice" not in pool
    assert handle.call_tool("whoami", {"tag": "b"}).text == "second b"  # the same handle, the new client


def test_a_handle_keeps_no_setting_and_says_where_it_belongs(server, pools):
    pool = ClientPool(functools.partial(open_for, server.url))
    pools.append(pool)
    with pytest.raises(TypeError, match="give it its handlers and roots there"):
        pool.get("alice").set_roots(["file:///tmp"])
    assert repr(pool.get("alice")).startswith("<PooledClient of <ClientPool") and "alice" not in repr(pool.get("alice"))
    assert pool.get("alice").server_info is not None  # a property reads the key's open client
    assert [tool.name for tool in pool.get("alice").list_tools()] == ["echo", "whoami"]


def test_health_per_key_and_stats_show_no_credential_nor_key(server, pools):
    pool = ClientPool(functools.partial(open_for, server.url))
    pools.append(pool)
    health = pool.health("alice")
    assert health["ok"] is True and health["last_error"] is None and health["latency_ms"] >= 0
    shown = repr((health, pool.stats(), pool))
    assert "token-of" not in shown and "alice" not in shown


def test_the_pool_pickles_as_its_factory_and_is_the_same_pool_in_the_process_that_made_it(server, pools):
    pool = ClientPool(functools.partial(open_for, server.url), max_clients=3, idle_timeout=60)
    pools.append(pool)
    assert pickle.loads(pickle.dumps(pool)) is pool
    handle = pickle.loads(pickle.dumps(pool.get("alice")))
    assert handle.pool is pool and handle.key == "alice"
    with pytest.raises(TypeError, match="its factory"):
        pickle.dumps(ClientPool(lambda user: open_for(server.url, user)))


def test_a_forked_child_opens_its_own_clients_and_leaves_the_parents_alone(server, pools):
    pool = ClientPool(functools.partial(open_for, server.url))
    pools.append(pool)
    whoami(pool.get("alice"), "alice", "parent")

    def child() -> str:
        before = pool.stats()
        text = pool.get("alice").call_tool("whoami", {"tag": "child"}).text
        after = pool.stats()
        pool.close()
        return f"{before['open']} {after['open']} {after['opened']} {text}"

    assert in_child(child, timeout=60) == f"0 1 1 {token_of('alice')} child"
    whoami(pool.get("alice"), "alice", "parent-again")  # the parent's client is untouched
    assert pool.stats()["opened"] == 1


def test_pooled_handles_from_many_threads_never_carry_another_users_token(server, pools):
    pool = ClientPool(functools.partial(open_for, server.url), max_clients=3, idle_timeout=0.05)
    pools.append(pool)
    users = [f"u{i}" for i in range(8)]
    wrong: list[str] = []

    def user_calls(user: str) -> None:
        for n in range(12):
            tag = f"{user}-{n}"
            text = pool.get(user).call_tool("whoami", {"tag": tag}, timeout=60).text
            if text != f"{token_of(user)} {tag}":
                wrong.append(text)

    threads = [threading.Thread(target=user_calls, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert not wrong
    stats = pool.stats()
    assert stats["opened"] > 3 and stats["evicted"] + stats["closed_idle"] > 0  # it did make room, under load
    seen = [r for r in server.records() if str(r["tag"]).split("-")[0] in users]
    assert len(seen) == 8 * 12
    assert all(r["caller"] == token_of(str(r["tag"]).split("-")[0]) for r in seen)


def test_a_key_discarded_between_taking_its_place_and_opening_opens_nothing(server, pools):
    """The window between a call taking its key's place and starting the open: a ``discard`` (or
    an eviction, ``close()``) there must not let the open make a client nobody will close."""

    class Racing(ClientPool):
        def _place(self, key, until):  # type: ignore[no-untyped-def]
            placed = super()._place(key, until)
            self.discard(key)  # what another thread may do at this moment
            return placed

    factory = Counting(server.url)
    pool = Racing(factory)
    pools.append(pool)
    with pytest.raises(ClientClosedError, match="closed by the pool"):
        pool.get("alice").ping(timeout=30)
    assert factory.asked == [] and len(pool) == 0 and pool.stats()["opened"] == 0


def test_a_factory_that_returns_a_client_the_pool_closed_is_told_to_make_a_new_one(server, pools):
    kept: dict[str, mcpclient.Client] = {}

    def caching(user: str) -> mcpclient.Client:  # the mistake: one client per key, kept
        if user not in kept:
            kept[user] = open_for(server.url, user)
        return kept[user]

    pool = ClientPool(caching)
    pools.append(pool)
    whoami(pool.get("alice"), "alice")
    pool.discard("alice")
    with pytest.raises(ClientClosedError, match="make a new Client each time it is called"):
        pool.get("alice").ping()
