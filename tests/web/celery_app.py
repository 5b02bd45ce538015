"""A Celery app for the tests: the filesystem broker and result backend (no server needed),
a SharedClient opened per pool process by mcpclient's worker signals."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from celery import Celery

from mcpclient import SharedClient
from mcpclient.contrib.celery import connect_worker_signals

FOLDER = Path(os.environ["MCP_CELERY_DIR"])
for sub in ("queue", "processed", "results", "control"):
    (FOLDER / sub).mkdir(parents=True, exist_ok=True)

app = Celery("mcp_tests", broker="filesystem://", backend=f"file://{FOLDER / 'results'}")
app.conf.update(
    broker_transport_options={"data_folder_in": str(FOLDER / "queue"), "data_folder_out": str(FOLDER / "queue"),
                              "processed_folder": str(FOLDER / "processed"),
                              "control_folder": str(FOLDER / "control"), "polling_interval": 0.05},
    worker_hijack_root_logger=False,
    broker_connection_retry_on_startup=True,
)

DEMO_SERVER = [sys.executable, str(Path(__file__).resolve().parents[2] / "examples" / "servers" / "demo_server.py")]
mcp = SharedClient(DEMO_SERVER, timeout=10)
connect_worker_signals(mcp)


@app.task
def add(a: int, b: int) -> dict[str, object]:
    return {"sum": mcp.call_tool("add", {"a": a, "b": b}).text, "worker": os.getpid(),
            "server": mcp.get().transport.pid, "opened": mcp.opened}


@app.task
def add_chunk(start: int, count: int) -> dict[str, object]:
    """``count`` calls of ``add`` (``a`` = ``start`` + i, ``b`` = 1) through ``map_tool`` (issue 33's job)."""
    results = mcp.map_tool("add", ({"a": start + i, "b": 1} for i in range(count)), concurrency=8)
    return {"start": start, "sums": [int(result.text) for result in results], "worker": os.getpid(),  # type: ignore[union-attr]
            "server": mcp.get().transport.pid, "opened": mcp.opened}
