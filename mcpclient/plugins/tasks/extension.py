"""``Tasks``: the client's tasks as a built-in extension of the public seam.

One live ``LiveTask`` handle per task id (so a status notification reaches every waiter),
finding existing tasks (``tasks/get``, ``tasks/list``), and what starting a tool as a task
needs: the era's rules (``Session.era_rules``) and each tool's
``execution.taskSupport``, learned from every whole tool list in the ``result`` hook. The
status notifications are this extension's own claim (``notification_handlers``). Every Client
has one; its task methods, and the wait of a ``call_tool`` the server made a task, reach it
through the ``TasksFeature`` interface. It declares nothing: the 2026-07-28 era's requests
declare ``io.modelcontextprotocol/tasks`` themselves (``_eras.modern.CLIENT_EXTENSIONS``),
and the 2025-11-25 tasks have no client capability to declare.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Callable, Mapping, Sequence

from ... import types as t
from ..._client.features import Task, TasksFeature, ToolOutputs
from ..._core import bounded as _bounded
from ..._core.cancel import Cancel
from ..._core.exceptions import ClientClosedError, ProtocolError, RPCError, TaskSupportError
from ...extensions import Call, Extension, NotificationHandler, Options, Session
from .handle import STATUS_NOTIFICATIONS, LiveTask
from .push import TaskPush

__all__ = ["Tasks", "tasks_extension"]

log = logging.getLogger("mcpclient")


class Tasks(Extension, TasksFeature):
    """The tasks of one client (every Client has one; ``Client.call_tool_as_task``,
    ``get_task`` and ``list_tasks`` call it). ``outputs`` checks a task's result against its
    tool's ``outputSchema`` (the client's output validation), when given."""

    result_methods = frozenset({"tools/list"})  # it learns each tool's taskSupport there

    def __init__(self, outputs: ToolOutputs | None = None) -> None:
        self._outputs = outputs
        self._session: Session | None = None
        self._lock = threading.Lock()
        self._live: weakref.WeakValueDictionary[str, LiveTask] = weakref.WeakValueDictionary()
        self._task_support: dict[str, str] = {}  # tool name -> execution.taskSupport, from the last list
        self._push: TaskPush | None = None  # the task ids asked of the connection's listen stream

    # -- the hooks ----------------------------------------------------------------------------

    def bind(self, session: Session) -> None:
        """A new connection: its tasks and tools are its own."""
        with self._lock:
            self._session = session
            self._push = TaskPush(session)
            self._live = weakref.WeakValueDictionary()
            self._task_support = {}

    def notification_handlers(self) -> Mapping[str, NotificationHandler]:
        return {method: self._on_status for method in STATUS_NOTIFICATIONS}

    def result(self, call: Call, value: Any) -> Any:
        if call.method == "tools/list" and isinstance(value, list):  # not a raw request("tools/list")
            self._task_support = {tool.name: _task_support(tool) for tool in value if isinstance(tool, t.ToolDef)}
        return value

    # -- TasksFeature ---------------------------------------------------------------------------

    def task_call(
        self, params: dict[str, Any], ttl: float | None, timeout: float | None,
        list_tools: Callable[[float | None], object],
    ) -> dict[str, Any]:
        session = self._bound()
        era = session.era_rules
        era.require_tasks(session.server_capabilities, "start")
        if era.tools_declare_task_support:
            self._require_task_tool(params["name"], timeout, list_tools)
        return era.task_params(params, ttl)

    def started(self, result: dict[str, Any], tool: str) -> Task:
        state = self._bound().era_rules.task_state(result)
        return self._handle(state, tool) if state is not None else self._done(result, tool)

    def finish(self, result: dict[str, Any], tool: str, timeout: float | None, cancel: Cancel | None) -> dict[str, Any]:
        task = self._handle(result, tool)
        log.debug("tools/call %r became task %r; waiting for it", tool, task.task_id)
        return task._wait(timeout, cancel)

    def get_task(self, task_id: str, timeout: float | None, meta: Mapping[str, Any] | None = None) -> Task:
        session = self._bound()
        session.era_rules.require_tasks(session.server_capabilities, "get")
        task = self._live_task(task_id)
        task.refresh(timeout=timeout, meta=meta)
        return task

    def list_tasks(self, timeout: float | None, meta: Mapping[str, Any] | None = None) -> list[Task]:
        session = self._bound()
        session.era_rules.require_tasks(session.server_capabilities, "list")
        return [
            self._handle(item, None)
            for page in session.pages("tasks/list", options=Options(timeout=timeout, meta=meta))
            for item in page.get("tasks") or []
            if isinstance(item, dict) and isinstance(item.get("taskId"), str)
        ]

    # -- helpers --------------------------------------------------------------------------------

    def _require_task_tool(self, name: str, timeout: float | None, list_tools: Callable[[float | None], object]) -> None:
        """Refuse, before sending, a tool whose listing forbids tasks (listing the tools once if
        this one is unknown); a tool the server does not list at all is left to the server."""
        if name not in self._task_support:
            try:
                list_tools(timeout)  # the Client's, through the result hooks: this one learns
            except RPCError as exc:
                log.debug("no tool list to check %r against (%s): the server decides", name, exc)
                return
        support = self._task_support.get(name)
        if support is not None and support not in ("optional", "required"):
            raise TaskSupportError(name, support)

    def _handle(self, state: dict[str, Any], tool: str | None) -> LiveTask:
        """The live handle for the task ``state`` describes, brought up to date with it."""
        task_id = state.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise ProtocolError(f"the server's task has no taskId: {_bounded.excerpt(state, 200)}")
        task = self._live_task(task_id, tool)
        task._update(state)
        return task

    def _done(self, result: dict[str, Any], tool: str) -> LiveTask:
        """A handle already finished: the server answered at once instead of making a task."""
        task = LiveTask(self._bound(), self._outputs, "", tool=tool)
        task._finish(result)
        return task

    def _on_status(self, params: dict[str, Any]) -> None:
        """A status notification: update the live handle, if any (unknown ids are ignored)."""
        task_id = params.get("taskId")
        task = self._live.get(task_id) if isinstance(task_id, str) else None
        if task is not None:
            try:
                task._update(params)
            except ProtocolError as exc:
                log.warning("ignoring a malformed task notification: %s", exc)

    def _live_task(self, task_id: str, tool: str | None = None) -> LiveTask:
        with self._lock:
            task = self._live.get(task_id)
            if task is None:
                task = LiveTask(self._bound(), self._outputs, task_id, tool=tool, push=self._push)
                self._live[task_id] = task
        if tool and task.tool is None:
            task.tool = tool
        return task

    def _bound(self) -> Session:
        session = self._session
        if session is None:
            raise ClientClosedError("this tasks extension belongs to no client yet")
        return session


def _task_support(tool: t.ToolDef) -> str:
    """A tool's ``execution.taskSupport``; absent means "forbidden" (2025-11-25)."""
    support = tool.execution.get("taskSupport") if isinstance(tool.execution, dict) else None
    return support if isinstance(support, str) else "forbidden"


def tasks_extension(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """Every client has Tasks (none more when one was given by hand), checking a task's result
    with the output validation gathered before it (``ToolOutputs``)."""
    if any(isinstance(extension, Tasks) for extension in gathered):
        return ()
    outputs = next((extension for extension in gathered if isinstance(extension, ToolOutputs)), None)
    return (Tasks(outputs),)
