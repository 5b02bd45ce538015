"""Issue 45, case 2: a call waiting for the lockfile's comparison ends at its own cancel.

The official SDK's policy server changes a tool and says so (``rug_pull``, a list_changed
notice), then takes 60 s to list its tools: the tool lock compares the new list with the
lockfile in the background (its own 30 s limit), and a tool call made meanwhile waits for that
comparison. Cancelled (a plain ``threading.Event``, a ``CancelToken``), it ends within a
second or two of the cancel, never sent; before, it waited for the background's 30 s. Its own
timeout and ``close()`` end it the same way.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import CancelToken, ClientClosedError, RequestCancelled, RequestTimeout, StdioTransport
from mcpclient.lock import write

from ..conftest import SERVERS
from ..helpers import BackgroundCall, require_mcp_sdk, wait_for
from .conftest import Lines

require_mcp_sdk()

pytestmark = pytest.mark.timeout(120)

SERVER = [sys.executable, str(SERVERS / "sdk_policy_server.py")]
SLOW = [*SERVER, "--slow-list-after-change", "60"]
#: How soon after its event a wait must end (the promise is about a second).
SOON = 2.0


def comparing(tmp_path: Path, era: str) -> tuple[mcpclient.Client, Lines]:
    """A client with a lockfile whose server changed its tools and now lists them for 60 s:
    the comparison the change notice started holds the lock's comparison."""
    path = tmp_path / "mcp.lock"
    write({"policy-test-server": SERVER}, path, protocol=era)
    lines = Lines()
    client = mcpclient.Client(StdioTransport(SLOW, stderr=lines),
                              plugins=mcpclient.Plugins(lock=str(path), on_change="warn"),
                              protocol=era, timeout=60)
    client.initialize()
    client.list_tools()  # compared once, at the list's own time: fresh
    client.call_tool("rug_pull")
    wait_for(lambda: lines.starting("SLOW tools/list"), timeout=20)  # the background comparison lists
    return client, lines


def cancelled_at(cancel: Any, client: mcpclient.Client) -> tuple[BackgroundCall, float]:
    call = BackgroundCall(client, "read_file", {"path": "x"}, cancel=cancel)
    time.sleep(0.5)  # it waits for the comparison now
    at = time.monotonic()
    cancel.cancel() if isinstance(cancel, CancelToken) else cancel.set()
    return call, at


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_a_call_waiting_for_the_comparison_ends_at_a_plain_events_cancel(tmp_path: Path, era: str) -> None:
    client, _ = comparing(tmp_path, era)
    with client:
        call, at = cancelled_at(threading.Event(), client)
        error = call.released_within(at, SOON)  # before the fix: at the background's 30 s
        assert isinstance(error, RequestCancelled), error


def test_a_call_waiting_for_the_comparison_ends_at_its_tokens_cancel(tmp_path: Path) -> None:
    client, _ = comparing(tmp_path, "legacy")
    with client:
        call, at = cancelled_at(CancelToken(), client)
        error = call.released_within(at, SOON)
        assert isinstance(error, RequestCancelled), error


def test_a_call_waiting_for_the_comparison_ends_at_its_timeout_and_at_close(tmp_path: Path) -> None:
    client, _ = comparing(tmp_path, "legacy")
    started = time.monotonic()
    timed = BackgroundCall(client, "read_file", {"path": "x"}, timeout=2)
    waiting = BackgroundCall(client, "read_file", {"path": "y"})  # the client's 60 s
    assert isinstance(timed.released_within(started + 2, SOON), RequestTimeout)
    closing = time.monotonic()
    client.close()
    assert isinstance(waiting.released_within(closing, SOON), ClientClosedError)
