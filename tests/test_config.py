"""mcpclient.config: the config files of Claude Desktop, Cursor and VS Code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpclient import config
from mcpclient.config import ConfigError, ServerConfig

from tests.conftest import DEMO_SERVER


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_mcp_servers_entries_are_read_with_command_args_env_url_and_headers(tmp_path):
    path = write(tmp_path / "claude_desktop_config.json", {"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
               "env": {"DEBUG": "1"}},
        "web": {"url": "https://example.org/mcp", "headers": {"X-Team": "blue"}},
    }})
    servers = config.load_file(path)
    assert servers["fs"] == ServerConfig(name="fs", command="npx",
                                         args=["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                                         env={"DEBUG": "1"}, source=str(path))
    assert servers["fs"].target() == ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    assert servers["web"].target() == "https://example.org/mcp"
    assert servers["web"].headers == {"X-Team": "blue"} and not servers["web"].is_stdio


def test_vscode_servers_form_with_type_comments_and_trailing_commas(tmp_path):
    path = write(tmp_path / ".vscode" / "mcp.json", """{
      // VS Code allows comments
      "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
      "servers": {
        "github": {"type": "http", "url": "https://api.example.com/mcp/", "headers": {"Authorization": "Bearer ${input:key}"}},
        "local": {"type": "stdio", "command": "python", "args": ["server.py", "${workspaceFolder}/data"],},
        /* block comment */
      },
    }""")
    servers = config.load_file(path)
    assert servers["local"].transport == "stdio"
    assert servers["local"].args == ["server.py", f"{tmp_path.resolve()}/data"]
    assert servers["github"].transport == "http"
    assert servers["github"].missing == ("${input:key} (a VS Code input, not supported)",)


def test_variables_are_expanded_from_the_environment_in_both_styles(tmp_path):
    path = write(tmp_path / "mcp.json", {"mcpServers": {"s": {
        "command": "${TOOLS}/server", "args": ["--token", "${env:TOKEN}", "--level", "${LEVEL:-info}"],
        "env": {"HOME_DIR": "${userHome}"}}}})
    entry = config.load_file(path, environ={"TOOLS": "/opt/tools", "TOKEN": "s3cret"})["s"]
    assert entry.command == "/opt/tools/server"
    assert entry.args == ["--token", "s3cret", "--level", "info"]
    assert entry.env == {"HOME_DIR": str(Path.home())}
    assert entry.missing == ()


def test_an_unset_variable_makes_only_that_entry_fail_when_opened(tmp_path):
    path = write(tmp_path / "mcp.json", {"mcpServers": {
        "needs_key": {"url": "https://example.org/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}},
        "fine": {"command": "python"}}})
    servers = config.load_file(path, environ={})
    assert servers["fine"].target() == ["python"]
    with pytest.raises(ConfigError, match=r"server 'needs_key' .* uses \$\{API_KEY\}, which is not set"):
        servers["needs_key"].open()


def test_a_config_error_is_also_a_value_error_and_an_mcp_error(tmp_path):
    from mcpclient import MCPError

    with pytest.raises(ValueError) as info:
        config.load_file(write(tmp_path / "x.json", {"other": {}}))
    assert isinstance(info.value, MCPError)
    assert "has no 'mcpServers' or 'servers' object" in str(info.value)


def test_unreadable_or_invalid_files_raise_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the config file"):
        config.load_file(tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        config.load_file(write(tmp_path / "bad.json", "{nope"))
    with pytest.raises(ConfigError, match="args must be a list of strings"):
        config.load_file(write(tmp_path / "args.json", {"mcpServers": {"s": {"command": "x", "args": "y"}}}))


def test_an_entry_without_command_or_url_cannot_be_opened(tmp_path):
    entry = config.load_file(write(tmp_path / "m.json", {"mcpServers": {"s": {"env": {}}}}))["s"]
    with pytest.raises(ConfigError, match="has neither 'command' nor 'url'"):
        entry.target()


def test_default_paths_cover_the_user_files_per_os_then_the_project(tmp_path):
    home = tmp_path / "home"
    project = [tmp_path / "mcp.json", tmp_path / ".mcp.json", tmp_path / ".cursor" / "mcp.json",
               tmp_path / ".vscode" / "mcp.json"]
    linux = config.default_paths(tmp_path, home=home, platform="linux", environ={})
    assert linux[-4:] == project
    assert linux[0] == home / ".cursor" / "mcp.json"
    assert linux[-5] == home / ".config" / "Claude" / "claude_desktop_config.json"
    mac = config.default_paths(tmp_path, home=home, platform="darwin", environ={})
    assert mac[-5] == home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    win = config.default_paths(tmp_path, home=home, platform="win32", environ={"APPDATA": "C:/Users/a/AppData/Roaming"})
    assert win[-5] == Path("C:/Users/a/AppData/Roaming") / "Claude" / "claude_desktop_config.json"
    first = config.default_paths(tmp_path, home=home, environ={"MCPCLIENT_CONFIG": "/etc/mcp.json"})[0]
    assert first == Path("/etc/mcp.json")


def test_load_merges_the_usual_files_user_first_and_skips_disabled(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("MCPCLIENT_CONFIG", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    write(tmp_path / "mcp.json", {"mcpServers": {"shared": {"command": "project"}, "off": {"command": "x", "disabled": True},
                                                 "extra": {"command": "e"}}})
    write(home / ".cursor" / "mcp.json", {"mcpServers": {"shared": {"command": "user"}, "mine": {"command": "m"}}})
    write(home / ".config" / "Claude" / "claude_desktop_config.json", "{broken")
    servers = config.load()
    assert servers["shared"].command == "user" and not servers["shared"].project
    assert servers["extra"].project
    assert set(servers) == {"shared", "mine", "extra"}
    assert "off" in config.load(tmp_path / "mcp.json", include_disabled=True)


def test_an_explicit_missing_path_is_an_error(tmp_path):
    with pytest.raises(ConfigError):
        config.load(tmp_path / "nope.json")


def test_an_entry_opens_a_working_client(tmp_path):
    path = write(tmp_path / "mcp.json", {"mcpServers": {"demo": {"command": DEMO_SERVER[0], "args": DEMO_SERVER[1:]}}})
    with config.load(path)["demo"].open(timeout=10) as client:
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"


def test_settings_json_mcp_servers_is_read(tmp_path):
    path = write(tmp_path / "settings.json", {"editor.fontSize": 14, "mcp": {"servers": {"s": {"command": sys.executable}}}})
    assert config.load_file(path)["s"].command == sys.executable
