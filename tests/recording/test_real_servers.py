"""Record sessions with real servers, then replay them with the servers absent.

The same scenario runs twice: once recording (against the official SDK server over stdio
and Streamable HTTP in both eras, and server-everything over stdio), once replaying the file
with ``subprocess.Popen`` and ``socket.socket.connect`` made to fail, so the replay provably
starts no process and opens no socket. The scenario has a tool call, a resource read, a
prompt, a sampling round trip (a server request in the legacy era, an input round in the
modern one) and errors; the files are grepped for the secrets the session carried.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from mcpclient import Client, MCPError, RPCError
from mcpclient.testing import RecordingTransport, ReplayTransport, recorded
from tests.conftest import SDK_SERVER
from tests.helpers import require_mcp_sdk
from tests.http.conftest import start_sdk_server

require_mcp_sdk()

pytestmark = pytest.mark.timeout(90)

TOKEN = "tok-SEKRIT-4f9a2c7e"
MARKED = "hunter2-marked-secret"
ERAS = {"modern": ([], "2026-07-28"), "legacy": (["--legacy-only"], "2025-11-25")}


def sampler(request):
    return {"role": "assistant", "content": {"type": "text", "text": "a recorded joke"}, "model": "fake-model"}


def sdk_scenario(client: Client, version: str) -> None:
    assert client.protocol_version == version
    assert client.call_tool("echo", {"text": f"say {MARKED}"}).text.startswith("say ")
    assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"result": 5}
    [contents] = client.read_resource("test://text")
    assert contents.text == "hello world"
    _, messages = client.get_prompt("greet", {"name": "Ann"})
    assert "Ann" in repr(messages[0])
    assert client.call_tool("sample", {"prompt": "tell a joke"}).text == "a recorded joke"
    assert client.call_tool("fail").is_error
    with pytest.raises(MCPError):
        client.read_resource("test://missing")


@pytest.fixture
def offline(monkeypatch):
    """During replay: starting a process or connecting a socket fails the test."""
    def no_process(*args, **kwargs):
        raise AssertionError(f"the replay started a process: {args!r:.200}")

    def no_socket(self, *args, **kwargs):
        raise AssertionError(f"the replay opened a socket to {args!r}")

    def apply():
        monkeypatch.setattr(subprocess, "Popen", no_process)
        monkeypatch.setattr(socket.socket, "connect", no_socket)
        monkeypatch.setattr(socket.socket, "connect_ex", no_socket)

    return apply


def record_then_replay(path: Path, target, scenario, offline, **options) -> ReplayTransport:
    transport = recorded(path, target, mode="all", secrets=[MARKED], **options)
    assert isinstance(transport, RecordingTransport)
    client = Client(transport)
    client.set_sampling_handler(sampler)
    with client:
        scenario(client)
    text = path.read_text()
    assert MARKED not in text and TOKEN not in text, "a secret reached the recording"
    offline()
    replay = recorded(path, mode="none", secrets=[MARKED], **options)
    assert isinstance(replay, ReplayTransport)
    client = Client(replay)
    client.set_sampling_handler(sampler)
    with client:
        scenario(client)
    replay.verify()
    return replay


@pytest.mark.parametrize("era", sorted(ERAS))
def test_sdk_server_stdio(era, tmp_path, offline):
    args, version = ERAS[era]
    path = tmp_path / "sdk-stdio.jsonl"
    record_then_replay(path, SDK_SERVER + args, lambda c: sdk_scenario(c, version), offline)
    assert '"kind": "stdio"' in path.read_text().splitlines()[0]


@pytest.mark.parametrize("era", sorted(ERAS))
def test_sdk_server_streamable_http(era, tmp_path, offline):
    args, version = ERAS[era]
    path = tmp_path / "sdk-http.jsonl"
    server = start_sdk_server("--transport", "streamable-http", *args)
    try:
        record_then_replay(
            path, server.url + "?key=" + TOKEN, lambda c: sdk_scenario(c, version), offline,
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
    finally:
        server.stop()
    assert '"kind": "http"' in path.read_text().splitlines()[0]


def test_server_everything_stdio(tmp_path, offline):
    try:
        from tests.node_tools import everything_server_cmd

        argv = everything_server_cmd("stdio")
    except (RuntimeError, FileNotFoundError) as exc:
        pytest.skip(f"server-everything is not installed: {exc}")

    def scenario(client: Client) -> None:
        assert client.protocol_version == "2025-11-25"
        assert client.call_tool("echo", {"message": MARKED}).text.startswith("Echo: ")  # redacted in replay
        [contents] = client.read_resource("demo://resource/dynamic/text/1")
        assert contents.text
        assert client.get_prompt("simple-prompt")[1]
        names = {t.name for t in client.list_tools()}
        while "trigger-sampling-request" not in names:  # registered just after initialize
            names = {t.name for t in client.list_tools()}
        result = client.call_tool("trigger-sampling-request", {"prompt": "a joke", "maxTokens": 20})
        assert "a recorded joke" in result.text
        with pytest.raises(RPCError):
            client.get_prompt("no-such-prompt")

    record_then_replay(tmp_path / "everything.jsonl", argv, scenario, offline)
