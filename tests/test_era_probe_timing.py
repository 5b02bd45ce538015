"""The ``auto`` era probe is bounded: a server silent to ``server/discover`` costs about
``PROBE_GRACE``, the first era to answer properly wins, and a server that the probe kills (old
SDKs exit on an unknown method) is started again and spoken to with ``initialize``."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mcpclient import Client, Stdio, StdioTransport, connect
from mcpclient._client import conversation as _conversation
from mcpclient._client.conversation import _era_cache

pytestmark = pytest.mark.timeout(120)

PROBE_SERVER = [sys.executable, str(Path(__file__).parent / "servers" / "probe_server.py")]
MODERN, LEGACY = "2026-07-28", "2025-11-25"


class Lines:
    """A stderr sink that keeps the ``GOT <method>`` lines and can wait for one."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self._cond = threading.Condition()

    def __call__(self, line: str) -> None:
        if line.startswith("GOT "):
            with self._cond:
                self.methods.append(line.split()[1])
                self._cond.notify_all()

    def wait_for(self, method: str, count: int, timeout: float = 5.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.methods.count(method) >= count, timeout)


def fresh_client(*args: str, sink: Lines) -> Client:
    transport = StdioTransport(PROBE_SERVER + list(args), stderr=sink)
    _era_cache.pop(transport.about.server_key, None)
    return Client(transport, timeout=20)


def test_a_server_silent_to_discover_costs_about_the_grace_not_the_probe_timeout(monkeypatch):
    """The grace (1 s) is far from what waiting for discover would cost (made 60 s here), and
    the bound (the grace and 10 s for starting the server) far from both."""
    monkeypatch.setattr(_conversation, "PROBE_TIMEOUT", 60.0)
    sink = Lines()
    transport = StdioTransport(PROBE_SERVER + ["silent"], stderr=sink)
    _era_cache.pop(transport.about.server_key, None)
    client = Client(transport, timeout=60)
    start = time.monotonic()
    with client:
        elapsed = time.monotonic() - start
        assert client.protocol_version == LEGACY
        assert client.list_tools() == []
    assert elapsed < _conversation.PROBE_GRACE + 10 < _conversation.PROBE_TIMEOUT
    assert sink.methods[:3] == ["server/discover", "initialize", "notifications/initialized"]


def test_initialize_answered_first_stays_legacy_when_discover_answers_later(monkeypatch):
    """The server answers discover only when the first ping comes (after the opening), just
    before ping's answer on the same pipe: the order is the server's, not a race of sleeps a
    busy machine could turn around (a 0.6 s sleep was, when the opening stalled that long)."""
    monkeypatch.setattr(_conversation, "PROBE_GRACE", 0.2)
    sink = Lines()
    with fresh_client("late-discover", sink=sink) as client:
        assert client.protocol_version == LEGACY
        client.ping()  # the discover answer came just before ping's: it must change nothing
        assert client.protocol_version == LEGACY
        assert client.list_tools() == []
    assert "notifications/initialized" in sink.methods


def test_a_slow_modern_server_is_not_taken_for_legacy(monkeypatch):
    monkeypatch.setattr(_conversation, "PROBE_GRACE", 0.2)
    sink = Lines()
    with fresh_client("slow-modern", "0.6", sink=sink) as client:
        assert client.protocol_version == MODERN
        assert client.server_info.name == "probe-slow-modern"
        assert client.list_tools() == []
    assert sink.methods[:2] == ["server/discover", "initialize"]
    assert "notifications/initialized" not in sink.methods


# -- a server on the Python SDK 1.6 line, which exits on an unknown request method -------------

OLD_SDK_SERVER = '''
from mcp.server.fastmcp import FastMCP

server = FastMCP("old-sdk")


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


server.run()
'''


@pytest.fixture(scope="session")
def old_sdk_server(tmp_path_factory) -> list[str]:
    """``mcp==1.6.0`` in its own virtual environment (pydantic before 2.11, which that line
    needs); skipped when pip cannot install it."""
    root = tmp_path_factory.mktemp("mcp16")
    venv = root / "venv"
    python = venv / "bin" / "python"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "mcp==1.6.0", "pydantic<2.11"], check=True, capture_output=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot install mcp==1.6.0 in a virtual environment: {exc}")
    script = root / "old_sdk_server.py"
    script.write_text(OLD_SDK_SERVER)
    return [str(python), str(script)]


def test_a_server_the_probe_kills_is_started_again_and_initialized(old_sdk_server, caplog):
    transport = StdioTransport(old_sdk_server, stderr=None)
    _era_cache.pop(transport.about.server_key, None)
    transport.close()
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        with connect(old_sdk_server, stdio=Stdio(stderr=None), timeout=30) as client:
            assert client.protocol_version in ("2024-11-05", "2025-03-26")
            assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
    assert any("started it again" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        with connect(old_sdk_server, stdio=Stdio(stderr=None), timeout=30) as client:  # remembered: no probe
            assert client.call_tool("add", {"a": 1, "b": 1}).content[0].text == "2"
    assert not any("started it again" in r.getMessage() for r in caplog.records)
