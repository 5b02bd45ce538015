"""The era probe waits for ``server/discover`` as long as the opening may take (issue #46).

A dual-era server that takes longer than ``PROBE_TIMEOUT`` to start reads ``server/discover``
first and answers it first: it is modern. The probe used to give up on it after
``PROBE_TIMEOUT``, drop its late answer ("dropping a reply to unknown or abandoned request
id"), and take the server for legacy when it then answered ``initialize`` (sent after the
grace). The official SDK's stdio server, started late, refuses that ``initialize`` (its
connection is modern once it read discover), so the client still found the modern era, with
a second discover; a server that routes each request by its own era answered it, and the
client settled on legacy (``probe_server.py slow-start``, as such servers do).
``PROBE_TIMEOUT`` (10 s) is lowered to 1 s so that a start-up of 4 s is over it; the
opening's own timeout (60 s) stays far above both.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import pytest

from mcpclient import RPCError, Stdio, StdioTransport, connect
from mcpclient._client import conversation as _conversation
from mcpclient._client.conversation import _era_cache

from tests.helpers import require_mcp_sdk

pytestmark = pytest.mark.timeout(120)

SERVERS = Path(__file__).resolve().parent.parent / "servers"
START_DELAY = 4.0
LATE_SDK_SERVER = [sys.executable, "-c", (
    f"import runpy, sys, time; time.sleep({START_DELAY}); sys.argv = [{str(SERVERS / 'sdk_server.py')!r}]; "
    f"runpy.run_path(sys.argv[0], run_name='__main__')"
)]


@pytest.fixture
def short_probe(monkeypatch):
    monkeypatch.setattr(_conversation, "PROBE_TIMEOUT", 1.0)
    monkeypatch.setattr(_conversation, "PROBE_GRACE", 0.2)


def _forget(command: list[str]) -> None:
    transport = StdioTransport(command)
    _era_cache.pop(transport.about.server_key, None)
    transport.close()


def test_the_sdk_server_slower_to_start_than_the_probe_answers_the_first_discover(short_probe, caplog):
    require_mcp_sdk()
    _forget(LATE_SDK_SERVER)
    start = time.monotonic()
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):
        with connect(LATE_SDK_SERVER, timeout=60, stdio=Stdio(stderr=None)) as client:
            assert time.monotonic() - start >= START_DELAY  # the server did start late
            assert client.protocol_version == "2026-07-28"
            assert client.server_info.name == "sdk-test-server"
            assert client.call_tool("echo", {"text": "late"}).text == "late"
    said = [record.getMessage() for record in caplog.records]
    assert not [line for line in said if "dropping a reply" in line], said
    assert [line for line in said if "server/discover" in line and "the server is modern" in line], said


def test_a_dual_era_server_slower_to_start_than_the_probe_is_modern(short_probe):
    command = [sys.executable, str(SERVERS / "probe_server.py"), "slow-start", str(START_DELAY)]
    _forget(command)
    start = time.monotonic()
    with connect(command, timeout=60, stdio=Stdio(stderr=None)) as client:
        assert time.monotonic() - start >= START_DELAY
        assert client.protocol_version == "2026-07-28"
        assert client.server_info.name == "probe-slow-start"
        assert client.list_tools() == []


def test_a_refused_initialize_waits_for_discover_only_until_the_probe_timeout(short_probe):
    # Discover unanswered, initialize refused: the opening fails with the refusal after about
    # PROBE_TIMEOUT (1 s here), not after its own timeout (60 s).
    command = [sys.executable, str(SERVERS / "probe_server.py"), "refuse-initialize"]
    _forget(command)
    start = time.monotonic()
    with pytest.raises(RPCError, match="no such capability"):
        connect(command, timeout=60, stdio=Stdio(stderr=None))
    assert time.monotonic() - start < 30


def test_discover_answered_first_wins_whichever_thread_is_back_first(short_probe):
    # The two answers come one after the other; a middleware slow to hand discover's on
    # (it runs on the probe's discover thread) brings initialize's thread back first. The
    # server answered discover first, so the server is modern all the same.
    def slow_discover(message, call_next):
        result = call_next(message)
        if message.kind == "request" and message.method == "server/discover":
            time.sleep(2.0)
        return result

    command = [sys.executable, str(SERVERS / "probe_server.py"), "slow-start", "1.5"]
    _forget(command)
    with connect(command, timeout=60, stdio=Stdio(stderr=None), middleware=[slow_discover]) as client:
        assert client.protocol_version == "2026-07-28"
        assert client.list_tools() == []
