"""Stdio in both eras: every way a call can end releases its caller within about a second.

The stdio row of the ending matrix (the HTTP rows are in test_http_ending.py): close with
several calls pending, a cancel, a timeout, the server's death and Ctrl-C, each in the legacy
era and in 2026-07-28, against a real process (tests/faults/hostile_stdio.py) that reports
on stderr every message it received, so a test sees that the server was told to cancel.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from typing import Any

import pytest

from mcpclient import CancelToken, Client, ClientClosedError, ConnectionClosed, RequestCancelled, RequestTimeout
from mcpclient import StdioTransport
from tests.faults.conftest import HOSTILE, Lines
from tests.helpers import RELEASED_WITHIN, BackgroundCall, wait_for

pytestmark = pytest.mark.timeout(60)

ERAS = {"legacy": (), "2026-07-28": ("--modern",)}


def open_client(era: str) -> tuple[Client, Lines]:
    lines = Lines()
    client = Client(StdioTransport(HOSTILE + list(ERAS[era]), stderr=lines), timeout=None, protocol=era)
    client.initialize()
    assert (client.protocol_version == "2026-07-28") == (era == "2026-07-28")
    return client, lines


def pending(lines: Lines, count: int) -> None:
    assert wait_for(lambda: len(lines.starting("PENDING")) >= count), "the calls never reached the server"


def cancelled_ids(lines: Lines) -> list[Any]:
    return [json.loads(line.split(" ", 3)[3])["requestId"] for line in lines.starting("GOT notifications/cancelled")]


@pytest.mark.parametrize("era", ERAS)
def test_close_releases_every_pending_call(era):
    client, lines = open_client(era)
    calls = [BackgroundCall(client, "hang") for _ in range(3)]
    pending(lines, 3)
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < RELEASED_WITHIN, "close() itself blocked"
    for call in calls:
        assert isinstance(call.released_within(start), (ClientClosedError, ConnectionClosed))


@pytest.mark.above_pipes("the engine's cancel (a call reading inline: test_stdio_inline.py, both pipes)")
@pytest.mark.parametrize("era", ERAS)
def test_a_cancel_releases_the_call_and_tells_the_server(era):
    client, lines = open_client(era)
    with client:
        token = CancelToken()
        call = BackgroundCall(client, "hang", cancel=token)
        pending(lines, 1)
        start = time.monotonic()
        token.cancel("not needed")
        assert isinstance(call.released_within(start), RequestCancelled)
        assert wait_for(lambda: cancelled_ids(lines)), "the server was not told to cancel"
        assert client.call_tool("echo", {"text": "after"}).text == "after"


@pytest.mark.above_pipes("the engine's timeout (a call reading inline: test_stdio_inline.py, both pipes)")
@pytest.mark.parametrize("era", ERAS)
def test_a_timeout_releases_the_call_and_tells_the_server(era):
    client, lines = open_client(era)
    with client:
        start = time.monotonic()
        call = BackgroundCall(client, "hang", timeout=0.5)
        assert isinstance(call.released_within(start, 0.5 + RELEASED_WITHIN), RequestTimeout)
        assert wait_for(lambda: cancelled_ids(lines)), "the server was not told to cancel"


@pytest.mark.parametrize("era", ERAS)
def test_server_death_releases_every_pending_call(era):
    client, lines = open_client(era)
    with client:
        calls = [BackgroundCall(client, "hang") for _ in range(3)]
        pending(lines, 3)
        start = time.monotonic()
        os.kill(client.transport.pid, signal.SIGKILL)
        for call in calls:
            assert isinstance(call.released_within(start), ConnectionClosed)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
@pytest.mark.parametrize("era", ERAS)
def test_ctrl_c_during_a_call_tells_the_server_and_never_delays_the_interrupt(era):
    client, lines = open_client(era)
    main = threading.get_ident()
    with client:
        def interrupt() -> None:
            pending(lines, 1)
            signal.pthread_kill(main, signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            client.call_tool("hang")
        assert time.monotonic() - start < 5 + RELEASED_WITHIN
        assert wait_for(lambda: cancelled_ids(lines)), "the server was not told to cancel"
