"""A call waiting for a web app's answer ends at its own deadline, its cancel, the client's
close() and WebApprovals.close(), denied and never sent (the official SDK server counts)."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, Callable

import pytest

import mcpclient
from mcpclient import CancelToken, ToolCallDenied
from mcpclient.policy import Policy, Rule, WebApprovals

from ..conftest import SERVERS
from ..helpers import RELEASED_WITHIN

pytestmark = pytest.mark.timeout(90)

POLICY_SERVER = [sys.executable, str(SERVERS / "sdk_policy_server.py")]
WRITE = {"path": "p", "content": ""}


def connect(approvals: WebApprovals) -> mcpclient.Client:
    policy = Policy([Rule("allow", annotations={"readOnlyHint": True})], approver=approvals)
    return mcpclient.connect(POLICY_SERVER, plugins=mcpclient.Plugins(policy=policy), protocol="legacy", timeout=30)


def counts(client: mcpclient.Client) -> dict[str, int]:
    result: dict[str, int] = json.loads(client.call_tool("calls").text)
    return result


class Waiting:
    """``call()`` on a thread of its own: what it raised, and when it ended."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.error: BaseException | None = None
        self.ended: float | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc
        self.ended = time.monotonic()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the call still waits for its approval"


def wait_pending(approvals: WebApprovals) -> None:
    end = time.monotonic() + 20
    while not approvals.pending():
        assert time.monotonic() < end, "the call never asked"
        time.sleep(0.02)


def test_the_wait_ends_at_the_calls_deadline() -> None:
    approvals = WebApprovals()  # its own limit is 300 s
    with connect(approvals) as client:
        started = time.monotonic()
        with pytest.raises(ToolCallDenied):
            client.call_tool("write_file", WRITE, timeout=2)
        assert time.monotonic() - started < 2 + RELEASED_WITHIN  # (the approvals wait 300 s)
        assert approvals.pending() == []
        assert counts(client) == {}


def test_the_wait_ends_when_the_call_is_cancelled() -> None:
    approvals = WebApprovals()
    with connect(approvals) as client:
        token = CancelToken()
        waiting = Waiting(lambda: client.call_tool("write_file", WRITE, cancel=token))
        wait_pending(approvals)
        cancelled = time.monotonic()
        token.cancel()
        waiting.join(RELEASED_WITHIN)
        assert isinstance(waiting.error, ToolCallDenied) and waiting.ended is not None
        assert waiting.ended - cancelled < RELEASED_WITHIN
        assert counts(client) == {}


def test_the_wait_ends_when_the_client_closes() -> None:
    approvals = WebApprovals()
    client = connect(approvals)
    waiting = Waiting(lambda: client.call_tool("write_file", WRITE))
    wait_pending(approvals)
    closing = time.monotonic()
    client.close()
    assert time.monotonic() - closing < RELEASED_WITHIN
    waiting.join(RELEASED_WITHIN)
    assert isinstance(waiting.error, (ToolCallDenied, mcpclient.ClientClosedError)), waiting.error
    assert waiting.ended is not None and waiting.ended - closing < RELEASED_WITHIN
    assert approvals.pending() == []


def test_closing_the_approvals_denies_what_waits_and_what_comes() -> None:
    approvals = WebApprovals()
    with connect(approvals) as client:
        waiting = Waiting(lambda: client.call_tool("write_file", WRITE))
        wait_pending(approvals)
        closing = time.monotonic()
        approvals.close()
        waiting.join(RELEASED_WITHIN)
        assert isinstance(waiting.error, ToolCallDenied) and waiting.ended is not None
        assert waiting.ended - closing < RELEASED_WITHIN
        started = time.monotonic()
        with pytest.raises(ToolCallDenied):
            client.call_tool("write_file", WRITE)
        assert time.monotonic() - started < RELEASED_WITHIN
        assert counts(client) == {}
