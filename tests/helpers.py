"""Helpers shared by the test suite."""

from __future__ import annotations

import time
from typing import Any, Callable

import pytest

__all__ = ["require_mcp_sdk", "wait_for"]


def wait_for(predicate: Callable[[], Any], timeout: float = 5.0, interval: float = 0.01) -> Any:
    """Poll ``predicate`` until it is truthy and return its value; fail after ``timeout`` s."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= end:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


def require_mcp_sdk() -> None:
    """Skip the calling test module (or test) unless the official ``mcp`` SDK is installed.

    The SDK-based test servers (tests/servers/sdk_*.py) run with this interpreter, so a
    missing SDK would otherwise show up as a server that never starts.
    """
    pytest.importorskip("mcp", reason="needs the official mcp SDK (pip install mcp)")
