"""The pytest plugin: a ``fake_mcp`` fixture, verified when the test passes.

Installed with mcpclient through the ``pytest11`` entry point; it imports nothing heavy.
"""

from __future__ import annotations

from typing import Generator, Iterator

import pytest

from ._fake import FakeServer


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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fake_mcp(**kwargs): arguments for the fake_mcp FakeServer")
