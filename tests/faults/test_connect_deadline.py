"""A connect timeout is the whole connect: the era probe's grace and the close of a server
that never answered do not come on top of it (issue #30: ``connect(cmd, timeout=5)`` to a
silent server used to raise after 6 to 8 s)."""

from __future__ import annotations

import sys
import time

import pytest

import mcpclient
from mcpclient import RequestTimeout
from mcpclient._client import conversation as _conversation

SILENT = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # reads everything, answers nothing


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_connect_to_a_silent_server_ends_at_its_timeout(monkeypatch, protocol):
    # A grace just under the timeout makes the old arithmetic (grace + timeout: 9.9 s) plain to
    # see: 3 s from the bound on one side, 1.9 s on the other (the grace cannot reach the
    # timeout: a probe that took all of it would leave initialize no time to report).
    monkeypatch.setattr(_conversation, "PROBE_GRACE", 4.9)
    started = time.monotonic()
    with pytest.raises(RequestTimeout) as info:
        mcpclient.connect(SILENT, timeout=5, protocol=protocol)
    elapsed = time.monotonic() - started
    assert elapsed < 5 + 3, f"connect(timeout=5) took {elapsed:.1f}s"
    assert "within 5s" in str(info.value), str(info.value)


def test_a_server_that_crashes_at_start_up_is_reported_once_and_not_remembered_as_legacy(caplog):
    """It used to be called a probe refusal, restarted, remembered as legacy, and reported
    with a warning saying so before the real error (issue #30)."""
    crash = [sys.executable, "-c", "import sys; sys.stderr.write('ImportError: no module named nope\\n'); sys.exit(3)"]
    transport = mcpclient.StdioTransport(crash, stderr=lambda line: None)
    key = transport.about.server_key
    with caplog.at_level("WARNING", logger="mcpclient"):
        with pytest.raises(mcpclient.ConnectionClosed) as info:
            with mcpclient.Client(transport, timeout=10):
                pass
    assert "fails at start-up" in str(info.value)
    assert info.value.exit_code == 3 and "no module named nope" in info.value.stderr_tail
    assert str(info.value).count("no module named nope") == 1
    assert not [r for r in caplog.records if "server/discover" in r.getMessage()], caplog.text
    assert _conversation._cached_era(key) is None


@pytest.mark.above_pipes("the error's text")
def test_a_server_that_never_answers_is_reported_with_its_last_stderr_lines():
    """A server that serves HTTP instead of stdio says so on stderr; the timeout used to say only
    "no reply to 'initialize'" (issue #30)."""
    http_instead = [sys.executable, "-c", (
        "import sys, time; print('Uvicorn running on http://127.0.0.1:8000', file=sys.stderr, flush=True);"
        " time.sleep(30)")]
    transport = mcpclient.StdioTransport(http_instead, stderr=lambda line: None)
    with pytest.raises(RequestTimeout) as info:
        with mcpclient.Client(transport, timeout=2, protocol="legacy"):
            pass
    assert "no reply to 'initialize'" in str(info.value)
    assert "last lines of the server's stderr: Uvicorn running on http://127.0.0.1:8000" in str(info.value)
