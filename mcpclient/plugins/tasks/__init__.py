"""Tasks (2025-11-25's experimental tasks, the 2026-07-28 ``io.modelcontextprotocol/tasks``
extension) as a built-in plug-in: ``extension.Tasks`` (every Client has one) and the handle it
makes, ``handle.LiveTask`` (the ``mcpclient.Task`` interface)."""

from __future__ import annotations

from .extension import Tasks, tasks_extension
from .handle import STATUS_NOTIFICATIONS, LiveTask

__all__ = ["STATUS_NOTIFICATIONS", "LiveTask", "Tasks", "tasks_extension"]
