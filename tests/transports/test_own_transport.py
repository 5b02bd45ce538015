"""A user's own transport, as docs/transports.md writes it: the three methods and nothing else,
against the official SDK's server through its stdin and stdout.

The transport is the docs' code block itself, read from the page and run here, so the page and
this test cannot drift apart (tests/test_docs_python_blocks.py runs the block as a reader
would, against the demo server).
"""

from __future__ import annotations

import ast
import threading
import time
import types
from pathlib import Path
from typing import Any

import pytest

from mcpclient import CancelToken, Client, ClientClosedError, ConnectionClosed, RequestCancelled, Transport
from tests.conftest import SDK_SERVER
from tests.helpers import InBackground, wait_for

pytestmark = pytest.mark.timeout(120)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "transports.md"
CLASS = "class LinePipe(Transport):"


def docs_block() -> str:
    """The docs' ```python block that defines the transport."""
    text = DOCS.read_text()
    start = text.index("```python\n", text.index("## Your own transport")) + len("```python\n")
    code = text[start:text.index("```\n", start)]
    assert CLASS in code
    return code


def load() -> types.ModuleType:
    """The block run as a module of its own (not ``__main__``: its demo stays unrun)."""
    module = types.ModuleType("docs_transport")
    exec(compile(docs_block(), str(DOCS), "exec"), module.__dict__)  # noqa: S102 - the project's own docs
    return module


@pytest.fixture(scope="module")
def line_pipe() -> Any:
    return load().LinePipe


def test_the_docs_transport_is_thirty_lines_of_three_methods():
    tree = ast.parse(docs_block())
    (cls,) = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert cls.end_lineno - cls.lineno + 1 <= 30
    methods = {node.name for node in cls.body if isinstance(node, ast.FunctionDef)}
    assert methods == {"__init__", "send", "receive", "close"}


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_the_docs_transport_speaks_to_the_sdk_server(line_pipe, protocol):
    transport = line_pipe([*SDK_SERVER])
    assert isinstance(transport, Transport)
    with Client(transport, timeout=60, protocol=protocol) as client:
        assert (client.protocol_version == "2026-07-28") is (protocol == "auto")  # the SDK server speaks both
        assert "echo" in {tool.name for tool in client.list_tools()}
        assert client.call_tool("echo", {"text": "through a pipe"}).text == "through a pipe"
        assert client.call_tool("add", {"a": 2, "b": 3}).data == 5
        seen: list[float] = []
        assert client.call_tool("slow", {"seconds": 0.2, "steps": 2},
                                on_progress=lambda p, total, message: seen.append(p)).text
        assert seen  # the server's notifications come through receive too
        results = []
        threads = [threading.Thread(target=lambda n=n: results.append(client.call_tool("echo", {"text": f"t{n}"}).text))
                   for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sorted(results) == sorted(f"t{n}" for n in range(8))  # sends from many threads, one at a time
    assert transport.process.poll() is not None  # close() ended the server


def in_flight(client: Client) -> None:
    """Wait until a call of ``client`` waits for its reply."""
    wait_for(lambda: client._engine._pending, timeout=30, what="a call in flight")


def test_a_cancel_and_close_end_calls_on_the_docs_transport(line_pipe):
    client = Client(line_pipe([*SDK_SERVER]), timeout=60)
    client.initialize()
    token = CancelToken()
    cancelled = InBackground(lambda: client.call_tool("slow", {"seconds": 30, "steps": 1}, cancel=token))
    in_flight(client)
    start = time.monotonic()
    token.cancel()
    assert isinstance(cancelled.released_within(start), RequestCancelled)
    assert client.call_tool("echo", {"text": "still here"}).text == "still here"
    pending = InBackground(lambda: client.call_tool("slow", {"seconds": 30, "steps": 1}))
    in_flight(client)
    start = time.monotonic()
    client.close()
    assert isinstance(pending.released_within(start), (ClientClosedError, ConnectionClosed))


def test_the_servers_death_ends_the_calls_on_the_docs_transport(line_pipe):
    transport = line_pipe([*SDK_SERVER])
    with Client(transport, timeout=60) as client:
        pending = InBackground(lambda: client.call_tool("slow", {"seconds": 30, "steps": 1}))
        in_flight(client)
        start = time.monotonic()
        transport.process.kill()
        assert isinstance(pending.released_within(start), ConnectionClosed)
