"""Real servers for the framework tests: the demo server over stdio, a group of two demo
servers from examples/mcp.json (prefixed names), and the SDK server (errors, images, delays)."""

from __future__ import annotations

import sys

import pytest

import mcpclient
from mcpclient import ClientGroup

from tests.conftest import DEMO_SERVER, ROOT, SDK_SERVER


@pytest.fixture
def demo():
    with mcpclient.connect(DEMO_SERVER, timeout=20) as client:
        yield client


@pytest.fixture
def group(monkeypatch):
    monkeypatch.setenv("PYTHON", sys.executable)
    # This checkout's own file, so a project file: trusted for the test, as its code knows it.
    with ClientGroup.from_config(ROOT / "examples" / "mcp.json", names=["math", "text"], trust_project=True,
                                 open_timeout=30, timeout=20) as group:
        assert not group.errors
        yield group


@pytest.fixture
def sdk():
    with mcpclient.connect(SDK_SERVER, timeout=30) as client:
        yield client
