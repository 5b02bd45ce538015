"""The pytest plugin: ``fake_mcp``, ``mcp_recording`` and ``mcp_in_process`` fixtures.

The first two are verified when the test passes; ``mcp_in_process`` closes its clients.

Installed with mcpclient through the ``pytest11`` entry point; it imports nothing heavy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Generator, Iterator

import pytest

from .._client.client import Client
from ._fake import FakeServer
from ._in_process import connect_in_process
from ._recording import MODES, RecordingTransport, Target
from ._replay import ReplayTransport, recorded


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


_CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def fake_mcp(request: pytest.FixtureRequest) -> Iterator[FakeServer]:
    """A strict ``FakeServer``; after a passing test it is closed and ``verify()``-ed.

    Mark a test with ``@pytest.mark.fake_mcp(strict=False, name="x", ...)`` to pass
    constructor arguments.
    """
    marker = request.node.get_closest_marker("fake_mcp")
    server = FakeServer(**(marker.kwargs if marker else {}))
    yield server
    server.close()
    if not request.node.stash.get(_CALL_FAILED, False):
        server.verify()


@pytest.fixture
def mcp_recording(request: pytest.FixtureRequest) -> Iterator[Callable[..., RecordingTransport | ReplayTransport]]:
    """``mcp_recording(target, **options)``: a transport that records or replays this test's session.

    The file is ``recordings/<test module>/<test name>.jsonl`` beside the test module, unless
    ``@pytest.mark.mcp_recording(path=...)`` names one; the mode comes from the marker's
    ``mode``, else ``--mcp-record-mode`` (default ``once``). Any other marker keyword is a
    default option of ``recorded``. After a passing test every replay is ``verify()``-ed:
    strict by default, so an unused recorded message fails the test.
    """
    marker = request.node.get_closest_marker("mcp_recording")
    defaults: dict[str, Any] = dict(marker.kwargs) if marker else {}
    node_path = Path(str(request.node.path))
    default_path = node_path.parent / "recordings" / node_path.stem / f"{request.node.name}.jsonl"
    path = Path(defaults.pop("path", default_path))
    mode = defaults.pop("mode", None) or request.config.getoption("mcp_record_mode")
    made: list[RecordingTransport | ReplayTransport] = []

    def make(target: Target | None = None, **options: Any) -> RecordingTransport | ReplayTransport:
        name = options.pop("name", None)
        where = path if name is None else path.with_name(f"{path.stem}-{name}.jsonl")
        transport = recorded(where, target, mode=mode, **{**defaults, **options})
        made.append(transport)
        return transport

    yield make
    for transport in made:
        transport.close()
    if not request.node.stash.get(_CALL_FAILED, False):
        for transport in made:
            transport.verify()


@pytest.fixture
def mcp_in_process() -> Iterator[Callable[..., Client]]:
    """``mcp_in_process(server, **options)``: an initialized Client on a server object in-process.

    ``server`` is an official-SDK ``MCPServer`` or low-level ``Server``, or a ``FastMCP``;
    ``options`` are ``connect_in_process``'s. Every client it made is closed after the test,
    with its server's thread.
    """
    made: list[Client] = []

    def connect(server: Any, **options: Any) -> Client:
        client = connect_in_process(server, **options)
        made.append(client)
        return client

    yield connect
    for client in made:
        client.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--mcp-record-mode", default="once", choices=MODES,
        help="mcp_recording: once (record a missing file, else replay), none (replay only), all (record again)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fake_mcp(**kwargs): arguments for the fake_mcp FakeServer")
    config.addinivalue_line("markers", "mcp_recording(path=None, mode=None, **options): the mcp_recording fixture's file and options")
