"""The client's tasks: one live ``Task`` handle per task id, and finding existing tasks.

The ``Task`` handle and its waiting loop are in ``_task``; how a task is asked for and which
server capability each action needs is the era's (``Era.require_tasks``, ``task_params``);
starting a tool as a task is a tool call, in ``_calls``.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import TYPE_CHECKING, Any, Mapping

from . import _bounded
from ._exceptions import ProtocolError
from ._pages import pages
from ._rpc.cancel import Cancel
from ._task_handle import Task
from ._timeouts import Timeouts

if TYPE_CHECKING:
    from ._conversation import Conversation
    from ._features import ToolOutputs

__all__ = ["Tasks"]

log = logging.getLogger("mcpclient")


class Tasks:
    """The tasks of one client: handles are shared, so a notification reaches every waiter."""

    def __init__(self, session: Conversation, timeouts: Timeouts, outputs: ToolOutputs | None) -> None:
        self._conversation = session
        self._timeouts = timeouts
        self._outputs = outputs
        self._lock = threading.Lock()
        self._live: weakref.WeakValueDictionary[str, Task] = weakref.WeakValueDictionary()

    def get_task(self, task_id: str, timeout: float | None, meta: Mapping[str, Any] | None = None) -> Task:
        self._conversation.strategy.require_tasks(self._conversation.capabilities, "get")
        task = self._live_task(task_id)
        task.refresh(timeout=timeout, meta=meta)
        return task

    def list_tasks(self, timeout: float | None, meta: Mapping[str, Any] | None = None) -> list[Task]:
        self._conversation.strategy.require_tasks(self._conversation.capabilities, "list")
        return [
            self.handle(item, None)
            for page in pages(self._conversation, "tasks/list", timeout, meta=meta)
            for item in page.get("tasks") or []
            if isinstance(item, dict) and isinstance(item.get("taskId"), str)
        ]

    def handle(self, state: dict[str, Any], tool: str | None) -> Task:
        """The live handle for the task ``state`` describes, brought up to date with it."""
        task_id = state.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise ProtocolError(f"the server's task has no taskId: {_bounded.excerpt(state, 200)}")
        task = self._live_task(task_id, tool)
        task._update(state)
        return task

    def done(self, result: dict[str, Any], tool: str) -> Task:
        """A handle already finished: the server answered at once instead of making a task."""
        task = Task(self._conversation, self._timeouts, self._outputs, "", tool=tool)
        task._finish(result)
        return task

    def finish(self, result: dict[str, Any], tool: str, timeout: float | None, cancel: Cancel | None) -> dict[str, Any]:
        """Wait for the task a server answered ``tools/call`` with; return the tool's raw result.

        ``timeout`` bounds the whole wait; ``cancel`` cancels the task on the server too.
        """
        task = self.handle(result, tool)
        log.debug("tools/call %r became task %r; waiting for it", tool, task.task_id)
        return task._wait(timeout, cancel)

    def on_status(self, params: dict[str, Any]) -> None:
        """A status notification: update the live handle, if any (unknown ids are ignored)."""
        task_id = params.get("taskId")
        task = self._live.get(task_id) if isinstance(task_id, str) else None
        if task is not None:
            try:
                task._update(params)
            except ProtocolError as exc:
                log.warning("ignoring a malformed task notification: %s", exc)

    def _live_task(self, task_id: str, tool: str | None = None) -> Task:
        with self._lock:
            task = self._live.get(task_id)
            if task is None:
                task = Task(self._conversation, self._timeouts, self._outputs, task_id, tool=tool)
                self._live[task_id] = task
        if tool and task.tool is None:
            task.tool = tool
        return task
