"""The listings the lockfile and the policy gate make for a call come out of the call's time.

A server whose ``tools/list`` is slow and never ends (the hostile double: no real server pages
forever) must not hold ``connect()`` nor a call past its own deadline, and a call whose time
ran out while its tools were compared is never sent.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mcpclient import Client, Plugins, RequestTimeout, StdioTransport
from mcpclient.policy import Policy, Rule

from ..faults.conftest import HOSTILE, Lines
from ..helpers import RELEASED_WITHIN

pytestmark = pytest.mark.timeout(60)


def slow_list_client(lines: Lines, pause: float, **options: object) -> Client:
    return Client(StdioTransport([*HOSTILE, "--slow-list", str(pause)], stderr=lines), timeout=30, **options)


def test_a_slow_listing_of_the_lock_never_holds_connect(tmp_path: Path) -> None:
    lines = Lines()
    started = time.monotonic()
    with slow_list_client(lines, 60, plugins=Plugins(lock=str(tmp_path / "mcp.lock"))) as client:
        assert time.monotonic() - started < 10  # the comparison runs in the background
        assert client.protocol_version


def test_a_call_on_a_locked_client_ends_by_its_own_deadline(tmp_path: Path) -> None:
    lines = Lines()
    with slow_list_client(lines, 0.5, plugins=Plugins(lock=str(tmp_path / "mcp.lock"))) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("echo", {"text": "hi"}, timeout=2)
        assert time.monotonic() - started < 2 + RELEASED_WITHIN
        assert not lines.starting("GOT tools/call")  # compared too late: never sent


def test_the_gates_listing_ends_by_the_calls_deadline() -> None:
    lines = Lines()
    policy = Policy([Rule("allow", annotations={"readOnlyHint": True})], default="deny")
    with slow_list_client(lines, 0.5, plugins=Plugins(policy=policy)) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):  # "hang" is on no page: the gate lists page after page
            client.call_tool("hang", timeout=2)
        assert time.monotonic() - started < 2 + RELEASED_WITHIN
        assert not lines.starting("GOT tools/call")
