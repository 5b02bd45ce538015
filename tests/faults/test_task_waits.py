"""Issue 45, case 3: waiting for a task ends at ``close()`` and at the server's death.

The official SDK's server with the 2026-07-28 tasks extension (``sdk_tasks_server.py``) answers
``research`` with a task that never finishes and suggests a poll a minute. ``task.result(
timeout=None)`` and a ``call_tool`` the server made a task wait between polls; ``close()`` and
the server's death (SIGKILL) end them within a second or two, with ``ClientClosedError`` and
``ConnectionClosed``; before, the wait slept until its next poll (up to 60 s).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from mcpclient import Client, ClientClosedError, ConnectionClosed, RequestCancelled, StdioTransport

from ..conftest import SERVERS
from ..helpers import InBackground, require_mcp_sdk

require_mcp_sdk()

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")]

SERVER = [sys.executable, str(SERVERS / "sdk_tasks_server.py")]  # a poll a minute


def open_client() -> Client:
    client = Client(StdioTransport(SERVER, stderr=None), timeout=30)
    client.initialize()
    assert client.protocol_version == "2026-07-28"
    return client


def test_task_result_with_no_timeout_ends_at_close() -> None:
    client = open_client()
    task = client.call_tool_as_task("research", {"seconds": -1})
    assert task.status == "working" and task.poll_interval == 60.0
    waiting = InBackground(lambda: task.result(timeout=None))
    time.sleep(0.5)  # between two polls, a minute apart
    closing = time.monotonic()
    client.close()
    assert isinstance(waiting.released_within(closing), ClientClosedError)


def test_task_result_with_no_timeout_ends_at_the_servers_death() -> None:
    client = open_client()
    try:
        task = client.call_tool_as_task("research", {"seconds": -1})
        waiting = InBackground(lambda: task.result(timeout=None))
        time.sleep(0.5)
        killed = time.monotonic()
        os.kill(client.transport.pid, signal.SIGKILL)  # type: ignore[attr-defined]
        assert isinstance(waiting.released_within(killed), ConnectionClosed)
    finally:
        client.close()


def test_a_call_the_server_made_a_task_ends_at_close_and_at_its_cancel() -> None:
    client = open_client()
    event = threading.Event()
    cancelled = InBackground(lambda: client.call_tool("research", {"seconds": -1}, timeout=None, cancel=event))
    closed = InBackground(lambda: client.call_tool("research", {"seconds": -1}, timeout=None))
    time.sleep(1)
    at = time.monotonic()
    event.set()
    assert isinstance(cancelled.released_within(at), RequestCancelled)
    closing = time.monotonic()
    client.close()
    assert isinstance(closed.released_within(closing), ClientClosedError)


def test_a_task_still_finishes_between_polls() -> None:
    """The fix ends waits at close and death, never earlier: a task that completes is waited for
    to its end, its polls at the server's interval."""
    with Client(StdioTransport([*SERVER, "--poll-ms", "200"], stderr=None), timeout=30) as client:
        task = client.call_tool_as_task("research", {"seconds": 1})
        assert task.result(timeout=None).text == "researched" and task.status == "completed"
