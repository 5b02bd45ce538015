"""Module-level task functions for the engine tests (a worker process imports them by name)."""

from __future__ import annotations

import os
from typing import Any

from mcpclient import SharedClient, SharedGroup
from mcpclient.transports.stdio import StdioTransport


def add(shared: SharedClient, a: int, b: int) -> dict[str, Any]:
    """One call through a received SharedClient, and who answered it."""
    text = shared.call_tool("add", {"a": a, "b": b}).text
    transport = shared.get().transport
    server = transport.pid if isinstance(transport, StdioTransport) else None
    return {"sum": text, "worker": os.getpid(), "server": server, "opened": shared.opened, "id": id(shared)}


def add_many(shared: SharedClient, pairs: list[tuple[int, int]]) -> dict[str, Any]:
    """A chunk of calls through one received SharedClient (the engines' 10,000-call job)."""
    sums = [shared.call_tool("add", {"a": a, "b": b}).text for a, b in pairs]
    transport = shared.get().transport
    server = transport.pid if isinstance(transport, StdioTransport) else None
    return {"sums": sums, "worker": os.getpid(), "server": server, "opened": shared.opened}


def group_add(group: SharedGroup, tool: str, a: int, b: int) -> dict[str, Any]:
    """One call through a received SharedGroup."""
    return {"sum": group.call_tool(tool, {"a": a, "b": b}).text, "worker": os.getpid(), "opened": group.opened}


def group_retry(group: SharedGroup) -> str:
    """The retry mode of a received SharedGroup."""
    return group.retry


def handler(*args: Any) -> Any:
    """A module-level handler: it travels by name."""
    return None


def add_chunk(shared: SharedClient, start: int, count: int) -> dict[str, Any]:
    """``count`` calls of ``add`` (``a`` = ``start`` + i, ``b`` = 1) through ``map_tool`` in one task."""
    results = shared.map_tool("add", ({"a": start + i, "b": 1} for i in range(count)), concurrency=8)
    sums = [int(result.text) for result in results]  # type: ignore[union-attr]
    transport = shared.get().transport
    server = transport.pid if isinstance(transport, StdioTransport) else None
    return {"start": start, "sums": sums, "worker": os.getpid(), "server": server, "opened": shared.opened}


def sample(request: Any) -> dict[str, Any]:
    """A module-level sampling handler (it travels by name): says which process answered."""
    return {"role": "assistant", "content": {"type": "text", "text": f"sampled in {os.getpid()}"}, "model": "m"}


def late_settings(shared: SharedClient) -> dict[str, Any]:
    """What the server sees of settings made on ``shared`` after it was made (roots, sampling),
    and the timeout, in the worker that received it."""
    return {
        "roots": shared.call_tool("roots").text,
        "sample": shared.call_tool("sample", {"prompt": "x"}).text,
        "timeout": shared.get().timeout,
        "worker": os.getpid(),
    }
