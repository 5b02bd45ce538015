"""URL-mode elicitation against the official MCP Python SDK (``mcp`` 2.3.0), over stdio.

The server (``tests/servers/sdk_url_elicitation_server.py``) raises the SDK's
``UrlElicitationRequiredError`` (-32042) from one tool and, from another, sends a URL-mode
``elicitation/create`` followed by ``notifications/elicitation/complete``.
"""

from __future__ import annotations

import socket
import sys
import time

import pytest

from mcpclient import Client, ElicitationResult, StdioTransport, URLElicitationRequired
from tests.conftest import SERVERS
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

SERVER = [sys.executable, str(SERVERS / "sdk_url_elicitation_server.py")]


@pytest.fixture
def client(monkeypatch):
    seen, done = [], []
    client = Client(StdioTransport(SERVER), timeout=20, protocol="legacy")
    client.set_elicitation_handler(lambda request: seen.append(request) or ElicitationResult(action="accept"),
                                   modes=("form", "url"))
    client.set_elicitation_complete_handler(done.append)
    client.seen, client.done = seen, done  # type: ignore[attr-defined]
    with client:
        # From here on, nothing in this process may open a network connection.
        monkeypatch.setattr(socket, "create_connection", lambda *a, **k: pytest.fail(f"network access: {a}"))
        yield client


def test_the_sdks_url_elicitation_required_error_carries_its_elicitations(client):
    with pytest.raises(URLElicitationRequired) as caught:
        client.call_tool("connect_bank")
    (request,) = caught.value.elicitations
    assert (request.mode, request.elicitation_id) == ("url", "el-bank")
    assert request.url == "https://bank.example.com/connect?state=abc"
    assert request.message == "Connect your bank account"


def test_a_url_elicitation_reaches_the_handler_and_its_completion_is_reported(client):
    assert client.call_tool("open_link").text == "accept"
    (request,) = client.seen
    assert (request.mode, request.url, request.elicitation_id) == ("url", "https://docs.example.com/consent", "el-link")
    deadline = time.monotonic() + 5
    while not client.done and time.monotonic() < deadline:
        time.sleep(0.01)
    assert client.done == ["el-link"]
