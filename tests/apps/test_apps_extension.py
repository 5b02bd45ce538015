"""MCP Apps is a plug-in of the public seam: the ``Apps`` extension, as a user would write one.

Against the official SDK's server that reports the client capabilities it saw
(tests/servers/sdk_vendor_server.py), over stdio in both eras.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from mcpclient import Client, MCPError, Plugins, StdioTransport, types as t
from mcpclient.apps import AppResult, Apps
from mcpclient.extensions import Call, Extension
from mcpclient.plugins.validation import OutputValidation
from mcpclient.plugins.skills.extension import Skills
from mcpclient.plugins.tasks import Tasks

from tests.conftest import SERVERS
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

pytestmark = pytest.mark.timeout(60)

VENDOR = [sys.executable, str(SERVERS / "sdk_vendor_server.py")]
ERAS = {"legacy": "legacy", "modern": "2026-07-28"}
UI = "io.modelcontextprotocol/ui"


def vendor_client(era: str, *, apps: bool = False, **kwargs: Any) -> Client:
    """No telemetry: the lists of extensions below are then the same with and without OpenTelemetry."""
    return Client(StdioTransport(VENDOR), protocol=ERAS[era], timeout=15, plugins=Plugins(telemetry=False, apps=apps),
                  **kwargs)


@pytest.fixture(params=sorted(ERAS))
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Watcher(Extension):
    """A user extension that records what the seam tells it."""

    def __init__(self) -> None:
        self.results: list[tuple[str, str]] = []

    def result(self, call: Call, value: Any) -> Any:
        self.results.append((call.method, type(value).__name__))
        return value


def test_apps_true_plugs_the_apps_extension_in_and_its_declaration_reaches_the_server(era):
    with vendor_client(era, apps=True) as client:
        assert [type(ext) for ext in client.extensions] == [OutputValidation, Apps, Skills, Tasks]
        caps = json.loads(client.call_tool("client_caps").text)
    assert caps["extensions"][UI] == {"mimeTypes": ["text/html;profile=mcp-app"]}


def test_an_apps_extension_given_by_hand_is_the_same_as_apps_true(era):
    apps = Apps()
    with vendor_client(era, extensions=[apps], apps=True) as client:
        assert [ext for ext in client.extensions if isinstance(ext, Apps)] == [apps]  # no second one
        result = client.call_tool("client_caps")
    assert isinstance(result, AppResult) and result.call.host is apps and result.call.tool == "client_caps"
    assert json.loads(result.text)["extensions"][UI] == {"mimeTypes": ["text/html;profile=mcp-app"]}


def test_a_user_extension_sees_the_hooks_apps_uses_before_apps_does(era):
    watcher = Watcher()
    with vendor_client(era, extensions=[watcher], apps=True) as client:
        # output validation comes first of all (its checks are what every result hook sees)
        assert client.extensions[1] is watcher and isinstance(client.extensions[2], Apps)
        tools = client.list_tools()
        result = client.call_tool("client_caps")
    assert {tool.name for tool in tools} >= {"client_caps", "meta"}
    # the user's hook saw the listing and the plain ToolResult; Apps then made it an AppResult
    assert watcher.results == [("tools/list", "list"), ("tools/call", "ToolResult")]
    assert isinstance(result, AppResult) and isinstance(result, t.ToolResult)


def test_the_apps_extension_learns_tools_from_the_listing_and_lists_once_when_asked(era):
    with vendor_client(era, apps=True) as client:
        apps = client.extensions[1]
        assert isinstance(apps, Apps)
        meta = apps.tool("meta")  # not listed yet: the extension lists through its Session
        assert meta is not None and meta.name == "meta" and apps.tool("nope") is None
        assert apps.call_tool("meta", {})["content"][0]["type"] == "text"  # the raw result, for a view


def test_without_apps_read_ui_resource_says_how_to_turn_it_on(era):
    with vendor_client(era) as client:
        assert [type(ext) for ext in client.extensions] == [OutputValidation, Skills, Tasks]  # every client has these
        with pytest.raises(MCPError, match="apps=True"):
            client.read_ui_resource("ui://x")


# -- the client core and MCP Apps share no import circle --------------------------------------


# That the client core imports no plug-in and no plug-in is in an import circle is
# tests/test_layers.py's to check, for every module.
