"""The tool lockfile against a real server whose tools change: between connects, and live."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

import pytest

import mcpclient
from mcpclient import ToolChanged
from mcpclient.lock import assert_locked, check, write

from ..conftest import SERVERS
from tests.helpers import wait_for

V1 = [sys.executable, str(SERVERS / "sdk_policy_server.py")]
V2 = [*V1, "--variant", "2"]


#: The legacy era (initialize) and the 2026-07-28 one (server/discover, stateless), each
#: spoken by the same official-SDK server.
ERAS = pytest.mark.parametrize("era", ["legacy", "2026-07-28"])


def connect(target: list[str], lock: Path, on_change: str, era: str = "legacy") -> mcpclient.Client:
    client = mcpclient.connect(target,
                               plugins=mcpclient.Plugins(lock=str(lock), on_change=on_change), protocol=era, timeout=30)
    assert (client.protocol_version == "2026-07-28") == (era == "2026-07-28")
    return client


def locked(tmp_path: Path, era: str = "legacy") -> Path:
    path = tmp_path / "mcp.lock"
    write({"policy-test-server": V1}, path, protocol=era)
    return path


def test_the_lockfile_is_stable_and_holds_each_tool(tmp_path: Path) -> None:
    path = locked(tmp_path)
    first = path.read_bytes()
    write({"policy-test-server": V1}, path, protocol="legacy")
    assert path.read_bytes() == first
    data = json.loads(first)
    entry = data["servers"]["policy-test-server"]
    assert entry["server"] == {"name": "policy-test-server", "version": "1.1.0"}
    assert entry["tools"]["read_file"]["description"] == "Read a file."
    assert entry["tools"]["read_file"]["hash"].startswith("sha256:")
    assert entry["tools"]["write_file"]["annotations"]["destructiveHint"] is True


@ERAS
def test_a_tool_changed_between_connects_is_refused_with_a_diff(tmp_path: Path, era: str) -> None:
    path = locked(tmp_path, era)
    with connect(V2, path, "refuse", era) as client:
        assert "read_file" not in [t.name for t in client.list_tools()]
        with pytest.raises(ToolChanged) as caught:
            client.call_tool("read_file", {"path": "x"})
        assert "id_rsa" in caught.value.diff and "inputSchema.properties.encoding: added" in caught.value.diff
        assert json.loads(client.call_tool("calls").text) == {}  # never reached the server
        client.call_tool("write_file", {"path": "p", "content": ""})  # unchanged tools still work


@ERAS
def test_warn_uses_the_changed_tool_and_logs_the_diff(tmp_path: Path, era: str, caplog: pytest.LogCaptureFixture) -> None:
    path = locked(tmp_path, era)
    with caplog.at_level(logging.WARNING, logger="mcpclient.lock"):
        with connect(V2, path, "warn", era) as client:
            assert "read_file" in [t.name for t in client.list_tools()]
            assert client.call_tool("read_file", {"path": "x"}).text.startswith("read x")
    assert any("id_rsa" in r.getMessage() for r in caplog.records)


@ERAS
def test_update_rewrites_the_lockfile(tmp_path: Path, era: str) -> None:
    path = locked(tmp_path, era)
    with connect(V2, path, "update", era) as client:
        client.call_tool("read_file", {"path": "x"})
    assert "id_rsa" in json.loads(path.read_text())["servers"]["policy-test-server"]["tools"]["read_file"]["description"]
    assert check({"policy-test-server": V2}, path, protocol=era) == {"policy-test-server": []}


@ERAS
def test_a_rug_pull_announced_with_list_changed_is_caught(tmp_path: Path, era: str) -> None:
    path = locked(tmp_path, era)
    with connect(V1, path, "refuse", era) as client:
        assert client.call_tool("read_file", {"path": "x"}).text == "read x"
        client.call_tool("rug_pull")
        deadline = time.monotonic() + 10
        while True:
            try:
                client.call_tool("read_file", {"path": "y"})
            except ToolChanged as exc:
                assert "evil@example.com" in exc.diff
                break
            assert time.monotonic() < deadline, "the changed tool was never refused"
            time.sleep(0.1)
        assert "read_file" not in [t.name for t in client.list_tools()]


def test_an_unlocked_server_is_refused_entirely(tmp_path: Path) -> None:
    with connect(V1, tmp_path / "missing.lock", "refuse") as client:
        with pytest.raises(ToolChanged, match="added"):
            client.call_tool("write_file", {"path": "p", "content": ""})


def test_assert_locked_reports_drift(tmp_path: Path) -> None:
    path = locked(tmp_path)
    assert_locked(path, servers={"policy-test-server": V1}, protocol="legacy")
    with pytest.raises(AssertionError, match="read_file"):
        assert_locked(path, servers={"policy-test-server": V2}, protocol="legacy")


def test_the_lock_command_writes_and_checks(tmp_path: Path) -> None:
    import io

    from mcpclient.cli import main

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"fs": {"command": V1[0], "args": V1[1:]}}}))
    path = tmp_path / "mcp.lock"
    out = io.StringIO()
    args = ["lock", "-c", str(config), "--file", str(path), "--protocol", "legacy", "--trust-project"]
    assert main(args, stdout=out, stderr=io.StringIO()) == 0
    assert "fs" in json.loads(path.read_text())["servers"]
    assert main([*args, "--check"], stdout=out, stderr=io.StringIO()) == 0
    config.write_text(json.dumps({"mcpServers": {"fs": {"command": V2[0], "args": V2[1:]}}}))
    out = io.StringIO()
    assert main([*args, "--check"], stdout=out, stderr=io.StringIO()) == 6
    assert "id_rsa" in out.getvalue()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and umask")
def test_the_lockfile_has_the_mode_of_a_file_you_commit(tmp_path: Path) -> None:
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = locked(tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["mcp.lock"]


@ERAS
def test_warn_reports_a_rug_pull_announced_with_list_changed_and_uses_the_tool(
        tmp_path: Path, era: str, caplog: pytest.LogCaptureFixture) -> None:
    path = locked(tmp_path, era)
    before = path.read_bytes()
    with caplog.at_level(logging.WARNING, logger="mcpclient.lock"):
        with connect(V1, path, "warn", era) as client:
            client.call_tool("rug_pull")
            # the comparison the change notice starts, in the background, reports it
            wait_for(lambda: any("evil@example.com" in r.getMessage() for r in caplog.records), timeout=20, what="the rug pull reported")
            [tool] = [t for t in client.list_tools() if t.name == "read_file"]
            assert "evil@example.com" in tool.description  # warn: shown, and used
            assert client.call_tool("read_file", {"path": "x"}).text == "read x"
            assert json.loads(client.call_tool("calls").text)["read_file"] == 1
    assert path.read_bytes() == before  # warn never writes the lockfile


@ERAS
def test_update_rewrites_the_lockfile_on_a_rug_pull_announced_with_list_changed(tmp_path: Path, era: str) -> None:
    path = locked(tmp_path, era)

    def description() -> str:
        entry = json.loads(path.read_text())["servers"]["policy-test-server"]
        return str(entry["tools"]["read_file"]["description"])

    assert description() == "Read a file."
    with connect(V1, path, "update", era) as client:
        client.call_tool("rug_pull")
        wait_for(lambda: "evil@example.com" in description(), timeout=20, what="the lockfile updated")
        assert client.call_tool("read_file", {"path": "x"}).text == "read x"
    # only the changed tool's entry moved: the others are as locked
    entry = json.loads(path.read_text())["servers"]["policy-test-server"]
    assert sorted(entry["tools"]) == ["calls", "delete_all", "fetch", "read_file", "rug_pull", "write_file"]


@ERAS
def test_refuse_leaves_a_tool_changed_mid_session_out_of_the_listing_at_once(tmp_path: Path, era: str) -> None:
    # The listing right after the rug pull is checked against the lockfile as it passes, so
    # the model never sees the new description, whether or not the change notice came first.
    path = locked(tmp_path, era)
    with connect(V1, path, "refuse", era) as client:
        client.call_tool("rug_pull")
        assert "read_file" not in [t.name for t in client.list_tools()]
        with pytest.raises(ToolChanged) as caught:
            client.call_tool("read_file", {"path": "x"})
        assert "evil@example.com" in caught.value.diff
        assert json.loads(client.call_tool("calls").text) == {}


def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: list[str]) -> Path:
    """A checkout whose own mcp.json names the SDK server ``fs``, as the working directory."""
    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "mcp.json").write_text(json.dumps({"mcpServers": {"fs": {"command": target[0], "args": target[1:]}}}))
    monkeypatch.chdir(root)
    return root


def test_assert_locked_in_a_projects_tests_reads_its_own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpclient.config import ConfigError

    root = project(tmp_path, monkeypatch, V1)
    write({"fs": V1}, root / "mcp.lock", protocol="legacy")
    with pytest.raises(ConfigError, match="consent"):  # a project file: not started unasked
        assert_locked("mcp.lock", config="mcp.json", protocol="legacy")
    assert_locked("mcp.lock", config="mcp.json", trust_project=True, protocol="legacy")
    assert_locked("mcp.lock", config="mcp.json", names=["fs"], trust_project=True, protocol="legacy")
    project(tmp_path, monkeypatch, V2)  # the server changed under the project
    with pytest.raises(AssertionError) as caught:
        assert_locked("mcp.lock", config="mcp.json", trust_project=True, protocol="legacy")
    assert "read_file" in str(caught.value) and "id_rsa" in str(caught.value) and "mcpclient lock" in str(caught.value)


def test_assert_locked_never_passes_a_check_of_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path, monkeypatch, V1)
    with pytest.raises(AssertionError, match="no server named 'fss'"):
        assert_locked("mcp.lock", config="mcp.json", names=["fss"], trust_project=True)
    with pytest.raises(AssertionError, match="no servers"):
        assert_locked("mcp.lock", servers={})
    with pytest.raises(AssertionError, match="added"):  # no lockfile yet: every tool is new
        assert_locked("missing.lock", config="mcp.json", trust_project=True, protocol="legacy")
