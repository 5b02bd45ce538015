"""Helpers shared by the test suite."""

from __future__ import annotations

import time
from typing import Any, Callable

__all__ = ["wait_for"]


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
