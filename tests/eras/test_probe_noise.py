"""The era probe leaves no noise on the user's stderr: a server on the official Python SDK 1.x
logs a pydantic validation error of a hundred lines (through ``rich``, two hundred and fifty)
when it refuses ``server/discover``; with ``protocol="auto"`` the user sees what the same server
writes with ``protocol="legacy"``, and every other line, in order.

The servers run on the real SDK 1.x (``mcp==1.30.0``, the last 1.x release, with ``rich``, which
its ``cli`` extra brings and its FastMCP logs through when present), in a virtual environment of
their own, kept in tmp/venvs between runs; the tests are skipped when pip cannot install it."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from mcpclient import Stdio, StdioTransport, connect
from mcpclient._client.conversation import _era_cache
from tests.helpers import wait_for

pytestmark = pytest.mark.timeout(240)

SDK1 = "mcp==1.30.0"

#: FastMCP 1.x: it logs through rich when rich is installed (a frame and wrapped lines).
FASTMCP_SERVER = '''
import sys

from mcp.server.fastmcp import FastMCP

print("sdk1 fastmcp starting", file=sys.stderr, flush=True)
server = FastMCP("sdk1-fastmcp")


@server.tool()
def add(a: int, b: int) -> int:
    print(f"adding {a} and {b}", file=sys.stderr, flush=True)
    return a + b


server.run()
'''

#: The low-level 1.x Server with logging left alone: the complaint comes through Python's
#: last-resort handler, as plain lines.
LOWLEVEL_SERVER = '''
import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

print("sdk1 lowlevel starting", file=sys.stderr, flush=True)
server = Server("sdk1-lowlevel")


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [types.Tool(name="echo", inputSchema={"type": "object", "properties": {"text": {"type": "string"}}})]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[types.TextContent]:
    print("echoing", file=sys.stderr, flush=True)
    return [types.TextContent(type="text", text=str(arguments.get("text", "")))]


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
'''


#: The SDK 1.x's virtual environment, kept between runs (tmp/ is not committed): pip
#: installs it once, not on every run (about a minute).
VENV = Path(__file__).resolve().parents[2] / "tmp" / "venvs" / SDK1.replace("==", "-")


def sdk1_venv() -> Path:
    """The kept virtual environment with the SDK 1.x and rich, made first if need be (under a
    lock: two test runs may want it at once); its Python."""
    import fcntl
    import shutil

    python = VENV / "bin" / "python"
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (VENV / "ready").exists():
            return python
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, capture_output=True, timeout=120)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", SDK1, "rich"],
                       check=True, capture_output=True, timeout=600)
        (VENV / "ready").write_text(SDK1)
    return python


@pytest.fixture(scope="module")
def sdk1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the two server scripts (their Python: ``sdk1_venv()``)."""
    root = tmp_path_factory.mktemp("sdk1")
    try:
        sdk1_venv()
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot install {SDK1} in a virtual environment: {exc}")
    (root / "fastmcp_server.py").write_text(FASTMCP_SERVER)
    (root / "lowlevel_server.py").write_text(LOWLEVEL_SERVER)
    return root


def command(sdk1: Path, server: str) -> list[str]:
    return [str(VENV / "bin" / "python"), str(sdk1 / f"{server}_server.py")]


def session_lines(cmd: list[str], protocol: str, tool: str, arguments: dict[str, object], said: str) -> list[str]:
    """The stderr lines the user sees for one opening and one call, up to the line the call
    makes the server write (``said``: the stderr thread may still be forwarding at close)."""
    lines: list[str] = []
    transport = StdioTransport(cmd, stderr=None)
    _era_cache.pop(transport.about.server_key, None)  # probe afresh every time
    transport.close()
    with connect(cmd, stdio=Stdio(stderr=lines.append), protocol=protocol, timeout=60) as client:
        assert client.protocol_version.startswith("2025")
        assert client.call_tool(tool, arguments).is_error is False
    wait_for(lambda: any(said in line for line in lines), timeout=10, what=lambda: f"{said!r} in {lines}")
    return lines[:next(i for i, line in enumerate(lines) if said in line) + 1]


CASES = [("fastmcp", "add", {"a": 2, "b": 3}, "adding 2 and 3"),
         ("lowlevel", "echo", {"text": "hi"}, "echoing")]


@pytest.mark.parametrize(("server", "tool", "arguments", "said"), CASES, ids=[case[0] for case in CASES])
def test_the_probe_adds_no_line_to_a_python_sdk_1_servers_stderr(sdk1, server, tool, arguments, said):
    cmd = command(sdk1, server)
    legacy = session_lines(cmd, "legacy", tool, arguments, said)
    auto = session_lines(cmd, "auto", tool, arguments, said)
    assert not any("validat" in line for line in legacy)
    assert not any("validat" in line or "server/discover" in line for line in auto), auto
    assert len(auto) == len(legacy)
    # What the server says of its own still comes, in order: its start, then the call's line.
    started, answered = (next(i for i, line in enumerate(auto) if text in line)
                         for text in (f"sdk1 {server} starting", said))
    assert started < answered


def test_the_complaint_is_logged_at_debug_level(sdk1, caplog):
    with caplog.at_level(logging.DEBUG, logger="mcpclient.transports._stdio_stderr"):
        session_lines(command(sdk1, "lowlevel"), "auto", "echo", {"text": "hi"}, "echoing")
    kept = [record.getMessage() for record in caplog.records if record.name == "mcpclient.transports._stdio_stderr"]
    assert len(kept) == 1 and "validation errors for ClientRequest" in kept[0] and "server/discover" in kept[0]
    assert "\n" not in kept[0]


def test_a_recording_transport_holds_its_inner_transports_stderr(sdk1, tmp_path):
    from mcpclient import Client
    from mcpclient.testing import RecordingTransport

    lines: list[str] = []
    inner = StdioTransport(command(sdk1, "lowlevel"), stderr=lines.append)
    with Client(RecordingTransport(inner, tmp_path / "session.jsonl"), timeout=60) as client:
        assert client.call_tool("echo", {"text": "hi"}).is_error is False
    wait_for(lambda: "echoing" in lines, timeout=10, what=lambda: f"'echoing' in {lines}")
    assert not any("validat" in line for line in lines), lines
    assert [line for line in lines if "sdk1" in line or "echoing" in line] == ["sdk1 lowlevel starting", "echoing"]
