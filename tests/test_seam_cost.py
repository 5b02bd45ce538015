"""The seam costs nothing when unused, and ``import mcpclient`` stays light (issue #45, #46).

What is checked here is what the cost comes from, never a time: ``benchmarks/seam_cost.py``
prints the instructions, CPU and import times, before and after, side by side.

* ``import mcpclient`` imports no plug-in, no HTTP stack, no OpenTelemetry, no cache store;
* a stdio client imports no HTTP stack, and of the plug-ins only those its options want;
* a plain ``call_tool`` builds no ``Call`` for the result hooks and no ``Message`` for a
  chain; output validation takes tool results only once a listed tool declared an
  ``outputSchema`` (against the official SDK's server, whose ``add`` declares one).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mcpclient._client.client as client_module
import mcpclient._client.conversation as conversation_module
from mcpclient import Client, StdioTransport
from mcpclient.extensions import Call, Message
from tests.conftest import FAST_SERVER, SDK_SERVER
from tests.helpers import require_mcp_sdk

IMPORTED = r"""
import json, sys
import mcpclient
imported = sorted(sys.modules)
client = mcpclient.connect(sys.argv[1:])
client.call_tool("echo", {"text": "x"})
client.close()
print(json.dumps({"import": imported, "connect": sorted(set(sys.modules) - set(imported))}))
"""


def _imported() -> dict[str, list[str]]:
    proc = subprocess.run([sys.executable, "-c", IMPORTED, *FAST_SERVER], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found: dict[str, list[str]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in ("requests", "urllib3", "opentelemetry")
            and m != "opentelemetry"]  # the namespace package: looking for the API imports it, nothing more


def test_import_mcpclient_imports_no_plugin_no_http_stack_no_telemetry_no_store():
    imported = _imported()["import"]
    assert [m for m in imported if m.startswith("mcpclient.plugins.")] == []
    assert _heavy(imported) == []
    assert "mcpclient.cache" not in imported


def test_a_stdio_client_imports_no_http_stack_and_only_the_plugins_it_wants():
    connected = _imported()["connect"]
    assert _heavy(connected) == []  # opentelemetry-api is installed here: it stays unimported
    plugins = {m for m in connected if m.startswith("mcpclient.plugins.")}
    # Every client has output validation, skills and tasks; telemetry (dormant) with the API installed.
    assert {"mcpclient.plugins.validation", "mcpclient.plugins.skills.extension", "mcpclient.plugins.tasks",
            "mcpclient.plugins.telemetry"} <= plugins
    unwanted = {"apps", "cache", "headers", "keepalive", "lock", "policy", "otel"}
    assert {m for m in plugins if m.split(".")[2] in unwanted} == set()


@pytest.fixture
def built(monkeypatch):
    """What the client core builds for the seam: every ``Call`` and every ``Message``."""
    made: list[object] = []

    def count(cls):
        def make(*args, **kwargs):
            made.append(cls(*args, **kwargs))
            return made[-1]
        return make

    monkeypatch.setattr(client_module, "Call", count(Call))
    monkeypatch.setattr(conversation_module, "Message", count(Message))
    return made


def test_a_plain_call_tool_builds_nothing_for_the_seam(built):
    transport = StdioTransport(FAST_SERVER)
    with Client(transport, timeout=30) as client:
        assert client.call_tool("echo", {"text": "a"}).text == "a"
        client.list_tools()  # no tool here declares an outputSchema
        built.clear()
        for text in "bcd":
            assert client.call_tool("echo", {"text": text}).text == text
    assert built == []


def test_output_validation_takes_tool_results_once_a_listed_tool_declares_an_output_schema(built):
    require_mcp_sdk()
    with Client(StdioTransport(SDK_SERVER), timeout=30) as client:
        built.clear()  # the opening's messages (the era probe) go through the seam's opening path
        before = client.call_tool("add", {"a": 1, "b": 2})
        assert built == [] and before.output_schema is None  # nothing listed yet: nothing to check
        tools = client.list_tools()
        assert any(tool.name == "add" and tool.output_schema for tool in tools)
        built.clear()
        after = client.call_tool("add", {"a": 2, "b": 3})
        assert [c.method for c in built if isinstance(c, Call)] == ["tools/call"]
        assert after.output_schema is not None and after.structured_content == {"result": 5}
        assert client.call_tool("echo", {"text": "z"}).text == "z"  # a tool with no schema: unchecked
