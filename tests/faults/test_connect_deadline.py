"""A connect timeout is the whole connect: the era probe's grace and the close of a server
that never answered do not come on top of it (issue #30: ``connect(cmd, timeout=5)`` to a
silent server used to raise after 6 to 8 s)."""

from __future__ import annotations

import sys
import time

import pytest

import mcpclient
from mcpclient import RequestTimeout, _conversation

SILENT = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # reads everything, answers nothing


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_connect_to_a_silent_server_ends_at_its_timeout(monkeypatch, protocol):
    # A long grace makes the old arithmetic (grace + timeout) plain to see under any load.
    monkeypatch.setattr(_conversation, "PROBE_GRACE", 2.5)
    started = time.monotonic()
    with pytest.raises(RequestTimeout) as info:
        mcpclient.connect(SILENT, timeout=3, protocol=protocol)
    elapsed = time.monotonic() - started
    assert elapsed < 3 + 1.5, f"connect(timeout=3) took {elapsed:.1f}s"
    assert "within 3s" in str(info.value), str(info.value)
