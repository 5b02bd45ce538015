"""``ToolResult.text`` joins the text parts with nothing between them (as it always has), and
the README says so next to ``text``, with a way to get the parts that works (issue #46)."""

from __future__ import annotations

import re
from pathlib import Path

from mcpclient import Client, ToolContent, ToolResult
from mcpclient.testing import FakeServer

README = Path(__file__).resolve().parent.parent / "README.md"
PARTS = ["2", "2", "2", "3", "3", "5"]


def _result() -> ToolResult:
    fake = FakeServer()
    fake.add_tool("factors", result=ToolResult(content=[
        *(ToolContent(type="text", text=part) for part in PARTS[:3]),
        ToolContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
        *(ToolContent(type="text", text=part) for part in PARTS[3:]),
    ]))
    with Client(fake) as client:
        return client.call_tool("factors")


def test_text_joins_the_text_parts_with_nothing_between_them():
    assert _result().text == "222335"


def test_the_readme_says_so_next_to_text_and_its_way_to_the_parts_works():
    row = next(line for line in README.read_text().splitlines() if line.startswith("| `result.text` |"))
    assert "joined with nothing between them" in row
    expression = next(span for span in re.findall(r"`([^`]+)`", row) if "result.content" in span)
    assert eval(expression, {"result": _result()}) == PARTS  # noqa: S307 - the README's own expression
