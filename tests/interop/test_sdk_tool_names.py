"""Tool names outside the specification's format (SEP-986) from a real official-SDK server:
listed and callable as before, with one warning per client (issue #30)."""

from __future__ import annotations

import logging
import sys

from mcpclient import Client, StdioTransport
from tests.conftest import SERVERS
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

SERVER = [sys.executable, str(SERVERS / "sdk_odd_names_server.py")]


def test_odd_tool_names_are_warned_about_once_and_still_work(caplog):
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        with Client(StdioTransport(SERVER), timeout=20) as client:
            names = {tool.name for tool in client.list_tools()}
            client.list_tools()  # the same names again: no second warning
            assert client.call_tool("get weather", {"city": "Oslo"}).text == "sunny in Oslo"
    assert names == {"get weather", "search,web", "ok_name"}
    warned = [r.getMessage() for r in caplog.records if "outside the MCP format" in r.getMessage()]
    assert len(warned) == 1, warned
    assert "'get weather'" in warned[0] and "'search,web'" in warned[0] and "ok_name" not in warned[0]
