from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcpclient
from mcpclient import Client, ToolContent, ToolResult
from mcpclient.testing import FakeServer

FIXTURES = Path(__file__).parent / "fixtures"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


@pytest.fixture
def calc():
    """A fake server with the tools the recorded payloads call, a client, and its tools."""
    fake = FakeServer(name="calc", strict=False)

    @fake.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    fake.add_tool("files.read", lambda path: f"contents of {path}", description="Read a file.")
    fake.add_tool("logo", result=ToolResult(content=[
        ToolContent(type="text", text="the logo:"), ToolContent(type="image", data=PNG, mime_type="image/png"),
    ]), description="Show the logo.")
    fake.add_tool("fail", result="the disk is full", is_error=True, description="Always fails.")
    with Client(fake, timeout=5) as client:
        yield fake, client, mcpclient.tools(client)
