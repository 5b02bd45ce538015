"""Every framework adapter leaves out tools meant for an MCP App view only (SEP-1865)."""

from __future__ import annotations

import importlib

import pytest

from mcpclient import Client
from mcpclient.testing import FakeServer

ADAPTERS = {
    "langchain": "langchain_core",
    "llamaindex": "llama_index.core",
    "smolagents": "smolagents",
    "haystack": "haystack",
    "pydantic_ai": "pydantic_ai",
    "openai_agents": "agents",
}


def _name(tool: object) -> str:
    for attribute in ("name", "metadata"):
        value = getattr(tool, attribute, None)
        if isinstance(value, str):
            return value
        if value is not None and isinstance(getattr(value, "name", None), str):
            return str(value.name)
    raise AssertionError(f"no name on {tool!r}")


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_app_only_tools_are_not_offered_to_the_framework(adapter):
    pytest.importorskip(ADAPTERS[adapter])
    module = importlib.import_module(f"mcpclient.integrations.{adapter}")
    fake = FakeServer(strict=False)
    fake.add_tool("for_model", result="m", meta={"ui": {"visibility": ["model", "app"]}})
    fake.add_tool("plain", result="p")
    fake.add_tool("view_only", result="v", meta={"ui": {"visibility": ["app"]}})
    with fake, Client(fake) as client:
        names = sorted(_name(tool) for tool in module.tools(client))
        assert names == ["for_model", "plain"]
        assert client.call_tool("view_only").text == "v"  # still callable from Python
