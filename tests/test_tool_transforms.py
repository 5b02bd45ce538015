"""Tool transformations in config files (plugins/transform.py), against the official SDK's
server and a FastMCP one, through a config file as a user writes it: a tool renamed and
re-described, an argument renamed, one hidden behind a fixed value, one given a default, a
tool disabled, tools filtered by tag; config entries and ClientGroup alike."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpclient import ClientGroup, config
from mcpclient.group import UnknownToolError
from mcpclient.config import ConfigError
from mcpclient.extensions import Extension, Message, Middleware, Next
from mcpclient.plugins.transform import ToolTransforms

pytestmark = pytest.mark.timeout(120)

SDK_SERVER = [sys.executable, str(Path(__file__).parent / "servers" / "sdk_server.py")]

MATH = {
    "tools": {
        "add": {"name": "plus", "description": "Add ten to x.",
                "arguments": {"a": {"name": "x", "description": "The number"}, "b": {"hide": True, "default": 10}}},
        "slow": {"arguments": {"seconds": {"default": 0.01}, "steps": {"hide": True, "default": 1}}},
        "fail": {"enabled": False},
    },
}


class Sent(Extension):
    """Counts the tools/call messages that go on to the server (it sits inside the transform)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def middleware(self) -> list[Middleware]:
        return [self._count]

    def _count(self, message: Message, next_: Next) -> Any:
        if message.direction == "send" and message.method == "tools/call":
            self.calls.append(dict(message.params or {}))
        return next_(message)


def write_config(tmp_path: Path, **servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp.json"
    entries = {name: {"command": SDK_SERVER[0], "args": SDK_SERVER[1:], **spec} for name, spec in servers.items()}
    path.write_text(json.dumps({"mcpServers": entries}))
    return path


@pytest.fixture
def math_entry(tmp_path: Path) -> config.ServerConfig:
    return config.load(write_config(tmp_path, math=MATH))["math"]


def test_the_listing_shows_the_new_name_description_and_arguments(math_entry):
    with math_entry.open(timeout=30) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
    assert "add" not in tools and "fail" not in tools
    plus = tools["plus"]
    assert plus.description == "Add ten to x."
    assert plus.input_schema["properties"] == {"x": {"description": "The number", "title": "A", "type": "integer"}}
    assert plus.input_schema["required"] == ["x"]
    assert tools["slow"].input_schema["properties"]["seconds"]["default"] == 0.01
    assert "steps" not in tools["slow"].input_schema["properties"]
    assert "echo" in tools  # untouched


def test_a_call_maps_back_to_the_real_name_and_arguments_with_the_fixed_value(math_entry):
    sent = Sent()
    with math_entry.open(timeout=30, extensions=[sent]) as client:
        result = client.call_tool("plus", {"x": 5})
        assert result.structured_content == {"result": 15}
        assert sent.calls[-1] == {"name": "add", "arguments": {"a": 5, "b": 10}}
        # A hidden argument keeps its fixed value whatever the caller gives.
        assert client.call_tool("plus", {"x": 1, "b": 100}).structured_content == {"result": 11}
        # The defaults are sent when left out.
        assert client.call_tool("slow", {}).content[0].text == "done after 1 steps"
        assert sent.calls[-1] == {"name": "slow", "arguments": {"seconds": 0.01, "steps": 1}}


def test_the_real_name_of_a_renamed_or_disabled_tool_is_refused_before_sending(math_entry):
    sent = Sent()
    with math_entry.open(timeout=30, extensions=[sent]) as client:
        for name, words in (("add", "renamed 'plus'"), ("fail", "disabled")):
            with pytest.raises(UnknownToolError, match=words) as caught:
                client.call_tool(name, {"a": 1, "b": 2})
            assert caught.value.tool == name
        assert sent.calls == []


def test_tag_filters_keep_only_the_tools_with_the_tags_given(tmp_path):
    entry = config.load(write_config(tmp_path, tagged={
        "tools": {"echo": {"tags": ["safe"]}, "add": {"tags": ["safe", "math"]}, "fail": {"tags": ["math"]}},
        "include_tags": ["safe"], "exclude_tags": ["math"],
    }))["tagged"]
    sent = Sent()
    with entry.open(timeout=30, extensions=[sent]) as client:
        # Called before any listing: the filter lists the tools first to learn their tags.
        with pytest.raises(UnknownToolError, match="tag filters"):
            client.call_tool("add", {"a": 1, "b": 2})
        assert [tool.name for tool in client.list_tools()] == ["echo"]
        assert client.call_tool("echo", {"text": "hi"}).content[0].text == "hi"
        with pytest.raises(UnknownToolError):
            client.call_tool("forecast", {"city": "Paris"})  # no tag: not included
    assert [call["name"] for call in sent.calls] == ["echo"]


FASTMCP_SERVER = '''
from fastmcp import FastMCP

server = FastMCP("tagged")


@server.tool(tags={"read"})
def look(path: str) -> str:
    return "looked at " + path


@server.tool(tags={"write", "admin"})
def wipe(path: str) -> str:
    return "wiped " + path


@server.tool
def plain() -> str:
    return "plain"


server.run(show_banner=False)
'''


def test_a_fastmcp_servers_own_tags_are_filtered(tmp_path):
    pytest.importorskip("fastmcp")
    script = tmp_path / "tagged.py"
    script.write_text(FASTMCP_SERVER)
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"tagged": {
        "command": sys.executable, "args": [str(script)], "exclude_tags": ["admin"],
        "tools": {"look": {"name": "peek", "arguments": {"path": {"name": "where"}}}},
    }}}))
    with config.load(path)["tagged"].open(timeout=60) as client:
        assert sorted(tool.name for tool in client.list_tools()) == ["peek", "plain"]
        assert client.call_tool("peek", {"where": "/tmp"}).content[0].text == "looked at /tmp"
        with pytest.raises(UnknownToolError, match="tag filters"):
            client.call_tool("wipe", {"path": "/"})


def test_a_group_from_the_config_file_shows_the_transformed_tools_under_its_prefix(tmp_path):
    path = write_config(tmp_path, math=MATH, other={})
    with ClientGroup.from_config(path, open_timeout=60) as group:
        names = {tool.name for tool in group.list_tools()}
        assert {"math__plus", "other__add", "other__fail"} <= names
        assert "math__add" not in names and "math__fail" not in names
        assert group.call_tool("math__plus", {"x": 2}).structured_content == {"result": 12}


def test_a_group_takes_transforms_for_servers_that_are_not_config_entries():
    with ClientGroup({"math": SDK_SERVER}, transforms={"math": MATH}, open_timeout=60) as group:
        assert group.call_tool("math__plus", {"x": 3}).structured_content == {"result": 13}
        with pytest.raises(UnknownToolError):
            group.call_tool("math__fail", {})


@pytest.mark.parametrize(("spec", "words"), [
    ({"tools": []}, "'tools' must be an object"),
    ({"tools": {"add": {"nmae": "plus"}}}, "unknown key"),
    ({"tools": {"add": {"arguments": {"a": {"hide": True, "required": True}}}}}, "cannot be required"),
    ({"tools": {"add": {"name": "echo"}, "echo": {}}}, "two tools would be shown as 'echo'"),
    ({"tools": {"add": {"arguments": {"a": {"name": "b"}}}}}, None),
    ({"include_tags": "safe"}, "must be a list of strings"),
    ({"tools": {"add": {"enabled": "no"}}}, "must be true or false"),
])
def test_a_malformed_transformation_is_a_config_error_naming_the_entry(tmp_path, spec, words):
    path = write_config(tmp_path, math=spec)
    if words is None:  # (renaming a to b, which b is too, is not caught by the file: b is not renamed)
        assert isinstance(config.load(path)["math"].tools, ToolTransforms)
        return
    with pytest.raises(ConfigError, match=words) as caught:
        config.load(path)
    assert "server 'math'" in str(caught.value)


def test_a_tool_renamed_to_its_own_name_is_still_called(tmp_path):
    entry = config.load(write_config(tmp_path, same={"tools": {"add": {"name": "add", "description": "Sum."}}}))["same"]
    with entry.open(timeout=30) as client:
        assert {tool.name: tool.description for tool in client.list_tools()}["add"] == "Sum."
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}


def test_an_entry_without_transformations_brings_no_extension(tmp_path):
    entry = config.load(write_config(tmp_path, plain={}))["plain"]
    assert entry.tools is None and entry.extensions() == ()
