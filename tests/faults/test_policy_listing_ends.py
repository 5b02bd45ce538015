"""A tool call whose policy gate is listing the tools (to read the tool's annotations) ends
as the call ends: its cancel, ``close()``, the server's death, its timeout.

Against the official SDK's policy server: ``rug_pull`` changes a tool and says so (the gate
forgets what it knew of the tools), then every ``tools/list`` takes 60 s. The next call's gate
lists the tools to judge it, and the call ends meanwhile. The gate must not take the listing it
never got for "no annotations" and refuse the call with ``ToolCallDenied`` (which it did for
all but the timeout): the call's own ending wins.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable

import psutil
import pytest

import mcpclient
from mcpclient import (ClientClosedError, ConnectionClosed, RequestCancelled, RequestTimeout, StdioTransport,
                       ToolCallDenied)
from mcpclient.policy import Policy, Rule

from ..conftest import SERVERS
from ..helpers import BackgroundCall, require_mcp_sdk, wait_for
from .conftest import Lines

require_mcp_sdk()

pytestmark = pytest.mark.timeout(120)

SCRIPT = str(SERVERS / "sdk_policy_server.py")
SERVER = [sys.executable, SCRIPT, "--slow-list-after-change", "60"]
#: read_file is read-only, so allowed when its annotations are known; unknown, it is denied.
POLICY = Policy([Rule("allow", tool="rug_pull"), Rule("allow", annotations={"readOnlyHint": True})], default="deny")


def listing(era: str) -> tuple[mcpclient.Client, Lines]:
    """A client whose gate knows nothing of the tools, on a server that lists them in 60 s."""
    lines = Lines()
    client = mcpclient.Client(StdioTransport(SERVER, stderr=lines), plugins=mcpclient.Plugins(policy=POLICY),
                              protocol=era, timeout=90)
    client.initialize()
    if era != "legacy":
        # A 2026-07-28 server sends a change only on a listen stream it acknowledged: the
        # client's stream opens on a thread of its own after the opening (a change before that
        # is not sent; see the note in docs/extending.md's list-changes section).
        wait_for(lambda: client._notices.listener.honoured() is not None, timeout=30,
                 what="the server's acknowledgement of the listen stream")
    changed = threading.Event()
    client.set_list_changed_handler(lambda kind: changed.set())
    assert client.call_tool("rug_pull").text == "changed"  # listed quickly; now slow
    # The notice may come after the call's reply (in 2026-07-28 on the listen stream): the gate
    # forgets the tools as the notice passes it, before the handler sees it.
    assert changed.wait(30), "the server's list_changed notice never came"
    return client, lines


def call_while_listing(client: mcpclient.Client, lines: Lines, **options: Any) -> BackgroundCall:
    before = len(lines.starting("SLOW tools/list"))
    call = BackgroundCall(client, "read_file", {"path": "x"}, **options)
    wait_for(lambda: len(lines.starting("SLOW tools/list")) > before, timeout=30, what="the gate's listing")
    return call


def kill_server() -> None:
    for child in psutil.Process().children(recursive=True):
        if SCRIPT in " ".join(child.cmdline()):
            child.kill()


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_a_call_cancelled_while_its_gate_lists_the_tools_ends_cancelled_not_denied(era: str) -> None:
    client, lines = listing(era)
    with client:
        event = threading.Event()
        call = call_while_listing(client, lines, cancel=event)
        at = time.monotonic()
        event.set()
        error = call.released_within(at)
        assert isinstance(error, RequestCancelled) and not isinstance(error, ToolCallDenied), repr(error)
        assert (error.method, error.delivered) == ("tools/call", False)  # the call's own, never sent
        assert 'tool "read_file" was cancelled while the policy listed the tools' in str(error)


@pytest.mark.parametrize("end, ending", [
    pytest.param(lambda client: client.close(), ClientClosedError, id="close"),
    pytest.param(lambda client: kill_server(), ConnectionClosed, id="server-death"),
])
def test_a_call_whose_client_ends_while_its_gate_lists_the_tools_ends_with_it(
        end: Callable[[mcpclient.Client], None], ending: type[BaseException]) -> None:
    client, lines = listing("legacy")
    with client:
        call = call_while_listing(client, lines)
        at = time.monotonic()
        end(client)
        error = call.released_within(at)
        assert isinstance(error, ending) and not isinstance(error, ToolCallDenied), repr(error)


def test_a_call_whose_time_runs_out_while_its_gate_lists_the_tools_ends_with_its_timeout() -> None:
    client, lines = listing("legacy")
    with client:
        started = time.monotonic()
        call = call_while_listing(client, lines, timeout=8)
        error = call.released_within(started + 8)
        assert isinstance(error, RequestTimeout), repr(error)
        assert (error.method, error.timeout, error.delivered) == ("tools/call", 8, False)
