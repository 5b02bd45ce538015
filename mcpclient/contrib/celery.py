"""Celery worker signals: each pool process opens its shared clients and closes them.

    mcp = SharedClient(["python", "server.py"], timeout=10)
    connect_worker_signals(mcp)

Why signals and not only the exit handler: a prefork pool process ends with ``os._exit``,
which runs no exit handlers; ``worker_process_shutdown`` is the last thing it runs.
``worker_process_init`` opens the client in each new pool process (a failure is logged and
the first task tries again). ``worker_shutdown`` closes what the main process opened (the solo
and threads pools run tasks there).
"""

from __future__ import annotations

import logging
from typing import Any, Union

from celery.signals import worker_process_init, worker_process_shutdown, worker_shutdown

from .._build.shared import SharedClient
from .._core.exceptions import MCPError
from .._shared_group import SharedGroup

__all__ = ["connect_worker_signals"]

log = logging.getLogger("mcpclient")

Shared = Union[SharedClient, SharedGroup]


def connect_worker_signals(*shared: Shared) -> None:
    """Open ``shared`` in each worker process as it starts, close them as it stops."""

    def opened(**_: Any) -> None:
        for each in shared:
            try:
                each.get()
            except MCPError as exc:
                log.warning("could not open %r in this worker process (the first task retries): %s", each, exc)

    def closed(**_: Any) -> None:
        for each in shared:
            each.close()

    worker_process_init.connect(opened, weak=False)
    worker_process_shutdown.connect(closed, weak=False)
    worker_shutdown.connect(closed, weak=False)
