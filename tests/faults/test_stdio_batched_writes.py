"""Stdio's batched writes against a real server: requests handed to the thread writing go out
whole, once each, and every caller still gets its own reply (see ``Engine._send``)."""

from __future__ import annotations

import collections
import json
import threading
import time

import pytest

from mcpclient import Client, ClientClosedError, ConnectionClosed, RequestTimeout, StdioTransport
from mcpclient._core.options import CallOptions
from tests.faults.conftest import HOSTILE, Lines, echo_from_threads
from tests.helpers import RELEASED_WITHIN, wait_for

pytestmark = pytest.mark.timeout(60)


class CountsFrames(StdioTransport):
    """Counts the frames that went out through ``write_frames`` (handed to another writer)."""

    def __init__(self, *args, **kwargs) -> None:
        self.carried = 0
        super().__init__(*args, **kwargs)

    def write_frames(self, frames):
        sent = super().write_frames(frames)
        self.carried += sent
        return sent


def test_eight_callers_hand_requests_to_each_other_and_each_is_sent_once():
    lines = Lines()
    transport = CountsFrames(HOSTILE, stderr=lines)
    with Client(transport, timeout=30, protocol="legacy") as client:
        assert echo_from_threads(client, threads=8, calls=250, timeout=40) == []
    if transport.pipes == "posix":
        assert transport.carried > 0  # some requests did go out with another caller's write
    else:  # the portable pipes frame nothing: each caller writes its own
        assert transport.carried == 0
    # The server saw every request exactly once (it reports each on stderr).
    assert wait_for(lambda: len(lines.starting("GOT tools/call")) >= 2000)
    ids = collections.Counter(line.split(" ", 3)[2] for line in lines.starting("GOT tools/call"))
    texts = collections.Counter(json.loads(line.split(" ", 3)[3])["arguments"]["text"]
                                for line in lines.starting("GOT tools/call"))
    assert len(ids) == 2000 and set(ids.values()) == {1}
    assert len(texts) == 2000 and set(texts.values()) == {1}


def test_a_request_handed_to_a_writer_stuck_on_a_full_pipe_ends_by_its_own_timeout():
    client = Client(StdioTransport(HOSTILE + ["--no-read"], stderr=None), timeout=60, protocol="legacy")
    outcome: dict[str, BaseException] = {}

    def stuck() -> None:  # more than the pipe holds, to a server that never reads: it blocks
        try:
            client._engine.request("tools/call", {"pad": "x" * 1_000_000}, CallOptions(60))  # the writer's: 60 s
        except BaseException as exc:  # noqa: BLE001 - looked at below
            outcome["stuck"] = exc

    writer = threading.Thread(target=stuck)
    try:
        writer.start()
        assert wait_for(lambda: client._engine._outbox.writing)
        start = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            client._engine.request("ping", None, CallOptions(0.3))  # handed to the stuck writer
        # Taken back at its deadline, not after the writer's: and never sent, so not cancelled.
        assert time.monotonic() - start < 0.3 + RELEASED_WITHIN
        assert not info.value.delivered and "could not be sent" in str(info.value)
    finally:
        client.close()
        writer.join(RELEASED_WITHIN)
    assert not writer.is_alive()
    assert isinstance(outcome.get("stuck"), (ConnectionClosed, ClientClosedError, RequestTimeout))
