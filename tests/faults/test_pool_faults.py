"""``ClientPool`` with one user's server hostile or dead: the other users never notice, and
``close()`` ends every wait at once (issue #48).

The hung server is tests/faults/hostile_stdio.py with ``--no-read``: it starts and never reads
its ``initialize``, so its key's open runs until the pool ends it. The other users' server is the
official SDK's (tests/servers/sdk_cache_server.py, ``whoami`` answers with the caller's token);
a dead one is an official-SDK stdio server killed under its client.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

import mcpclient
from mcpclient import Client, ClientClosedError, ClientPool, ConnectionClosed, StdioTransport
from tests.cache_fixtures import RecordingServer
from tests.faults.conftest import HOSTILE
from tests.helpers import RELEASED_WITHIN, require_mcp_sdk, wait_for

pytestmark = pytest.mark.timeout(120)

require_mcp_sdk()

SILENT = [*HOSTILE, "--no-read"]
SDK_STDIO = [sys.executable, str(Path(__file__).resolve().parents[1] / "servers" / "sdk_server.py")]
#: The hung key's handshake timeout: far past every bound the tests assert.
HANDSHAKE = 60.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordingServer]:
    with RecordingServer(tmp_path_factory.mktemp("records")) as recording:
        yield recording


class Call:
    """``fn()`` on a thread of its own: what it returned or raised, and when it ended."""

    def __init__(self, fn: Any) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.ended_at: float | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Any) -> None:
        try:
            self.result = fn()
        except BaseException as exc:  # recorded for the test
            self.error = exc
        self.ended_at = time.monotonic()

    def join(self, seconds: float) -> None:
        self._thread.join(seconds)


def opens_ended() -> None:
    """Every open thread has ended (the pool closed the hung handshake's client)."""
    wait_for(lambda: not [t for t in threading.enumerate() if t.name == "mcpclient-open" and t.is_alive()],
             timeout=30)


def test_a_key_whose_server_never_answers_its_handshake_delays_no_other_key_and_close_ends_its_wait(server):
    def factory(user: str) -> Client:
        if user == "stuck":
            return Client(StdioTransport(SILENT, stderr=None), timeout=HANDSHAKE)  # opened by the pool
        return mcpclient.connect(server.url, http=mcpclient.HTTP(headers={"Authorization": f"Bearer token-of-{user}"}), timeout=30)

    pool = ClientPool(factory, max_clients=4)
    try:
        stuck = Call(lambda: pool.get("stuck").call_tool("whoami", {"tag": "x"}, timeout=None))
        wait_for(lambda: pool.stats()["opening"] == 1, timeout=30)
        for user in ("alice", "bob"):
            assert pool.get(user).call_tool("whoami", {"tag": "y"}, timeout=60).text == f"token-of-{user} y"
        assert stuck.ended_at is None, "the hung key's call ended: the test proves nothing"
        assert pool.stats()["open"] == 2 and pool.stats()["opening"] == 1
        closed_at = time.monotonic()
        pool.close()
        stuck.join(RELEASED_WITHIN + 5)
        assert stuck.ended_at is not None, "close() did not end the wait for the hung open"
        assert isinstance(stuck.error, ClientClosedError), stuck.error
        assert stuck.ended_at - closed_at < RELEASED_WITHIN
        opens_ended()  # and its open was ended with it, not left to run to its handshake timeout
    finally:
        pool.close()


def test_several_callers_of_a_hung_key_each_leave_at_their_own_deadline_and_an_idle_hung_open_makes_room(server):
    def factory(user: str) -> Client:
        if user == "stuck":
            return Client(StdioTransport(SILENT, stderr=None), timeout=HANDSHAKE)
        return mcpclient.connect(server.url, http=mcpclient.HTTP(headers={"Authorization": f"Bearer token-of-{user}"}), timeout=30)

    pool = ClientPool(factory, max_clients=1)
    try:
        started = time.monotonic()
        callers = [Call(lambda: pool.get("stuck").ping(timeout=1.5)) for _ in range(3)]
        for caller in callers:
            caller.join(1.5 + RELEASED_WITHIN + 5)
        for caller in callers:
            assert caller.ended_at is not None and isinstance(caller.error, mcpclient.RequestTimeout), caller.error
            assert caller.ended_at - started < 1.5 + RELEASED_WITHIN
        # Nobody waits for the hung open now: it holds the one place idle, so alice takes it.
        assert pool.get("alice").call_tool("whoami", {"tag": "z"}, timeout=60).text == "token-of-alice z"
        assert pool.stats()["evicted"] == 1
        opens_ended()
    finally:
        pool.close()


def test_one_users_dead_server_touches_no_other_user_and_its_next_call_opens_a_new_one(server):
    opened: list[int] = []

    def factory(user: str) -> Client:
        if user == "doomed":
            client = mcpclient.connect(SDK_STDIO, timeout=30)
            opened.append(client.transport.pid)  # type: ignore[attr-defined]
            return client
        return mcpclient.connect(server.url, http=mcpclient.HTTP(headers={"Authorization": f"Bearer token-of-{user}"}), timeout=30)

    pool = ClientPool(factory, retry="safe")
    try:
        assert pool.get("doomed").call_tool("echo", {"text": "a"}).text == "a"
        assert pool.get("alice").call_tool("whoami", {"tag": "1"}).text == "token-of-alice 1"
        os.kill(opened[0], signal.SIGKILL)
        with pytest.raises(ConnectionClosed):
            pool.get("doomed").call_tool("echo", {"text": "b"}, timeout=30)  # a tool call is never sent twice
        assert pool.get("alice").call_tool("whoami", {"tag": "2"}).text == "token-of-alice 2"
        assert pool.get("doomed").call_tool("echo", {"text": "c"}).text == "c"
        assert len(opened) == 2 and opened[0] != opened[1]
        os.kill(opened[1], signal.SIGKILL)
        assert [tool.name for tool in pool.get("doomed").list_tools(timeout=30)][:1] == ["echo"]  # retried: it changes nothing
        assert len(opened) == 3
        assert pool.stats()["open"] == 2
    finally:
        pool.close()
