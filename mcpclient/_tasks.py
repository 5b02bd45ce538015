"""Client methods for tasks: start a tool as a task, find tasks, and wait for unsolicited ones.

The ``Task`` handle and the waiting loop are in ``_task``; this module decides, per era, how a
task is asked for and which server capability that needs.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Mapping

from ._eras import modern
from ._base import ClientBase
from ._exceptions import CapabilityError, ProtocolError, RPCError
from ._rpc.cancel import CancelToken
from ._session import LEGACY
from ._task import TASKS_EXTENSION, Task
from ._timeouts import DEFAULT

__all__ = ["TasksMixin", "finish_task_result"]

log = logging.getLogger("mcpclient")


class TasksMixin(ClientBase):
    """Task-augmented tool calls in either era (part of ``Client``)."""

    def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: float | None = None,
        timeout: float | None = DEFAULT,
    ) -> Task:
        """Start a tool as a task and return its ``Task`` handle without waiting for the end.

        Legacy servers must declare ``tasks.requests.tools.call`` and the tool must allow it
        (``execution.taskSupport``); ``ttl`` asks for how many seconds the server keeps the task.
        Modern servers must declare the ``io.modelcontextprotocol/tasks`` extension; they
        decide on their own whether to make a task (``ttl`` is not sent: the extension has no
        such field). A server that answers at once gives a Task that is already done.

        Raises ``CapabilityError`` if the server supports no tasks, and what ``call_tool`` raises.
        """
        self._require_open()
        if arguments is not None and not isinstance(arguments, Mapping):
            raise TypeError(f"arguments must be a mapping, got {type(arguments).__name__}")
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments) if arguments else {}}
        if self._session.era == LEGACY:
            self._require_tasks("requests.tools.call", "tools/call")
            params["task"] = {} if ttl is None else {"ttl": int(ttl * 1000)}
            result = self._call("tools/call", params, timeout)
            task = result.get("task")
            return self._handle(task, name) if isinstance(task, dict) else self._done(result, name)
        self._require_extension("tools/call")
        try:
            result = self._call("tools/call", params, timeout)
        except RPCError as exc:
            if exc.code != modern.HEADER_MISMATCH:
                raise
            self.list_tools(timeout=timeout)
            result = self._call("tools/call", params, timeout)
        return self._handle(result, name) if result.get("resultType") == "task" else self._done(result, name)

    def get_task(self, task_id: str, *, timeout: float | None = DEFAULT) -> Task:
        """A handle on an existing task (e.g. one started before a restart), freshly polled."""
        self._require_open()
        if self._session.era == LEGACY:
            self._require_tasks(None, "tasks/get")
        else:
            self._require_extension("tasks/get")
        task = self._live_task(task_id)
        task.refresh(timeout=timeout)
        return task

    def list_tasks(self, *, timeout: float | None = DEFAULT) -> list[Task]:
        """Every task the server lists (legacy era only, with ``tasks.list`` declared).

        The 2026 extension has no ``tasks/list``: there it raises ``CapabilityError``.
        """
        self._require_open()
        self._require_tasks("list", "tasks/list")
        tasks: list[Task] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = self._call("tasks/list", {"cursor": cursor} if cursor else None, timeout)
            for item in result.get("tasks") or []:
                if isinstance(item, dict) and isinstance(item.get("taskId"), str):
                    tasks.append(self._handle(item, None))
            cursor = result.get("nextCursor")
            if not cursor:
                return tasks
            if not isinstance(cursor, str) or cursor in seen:
                raise ProtocolError(f"the server repeated the tasks/list cursor {cursor!r}; stopping")
            seen.add(cursor)

    # -- helpers for Task and for call_tool ---------------------------------------------------

    def _require_tasks(self, feature: str | None, method: str) -> None:
        """Legacy: the server's ``tasks`` capability (and ``feature`` under it, dotted)."""
        if self._session.era != LEGACY:
            raise CapabilityError(f"tasks.{feature}" if feature else "tasks", method)
        node: Any = self.server_capabilities.get("tasks")
        for part in (feature.split(".") if feature else []):
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            raise CapabilityError(f"tasks.{feature}" if feature else "tasks", method)

    def _require_extension(self, method: str) -> None:
        extensions = self.server_capabilities.get("extensions")
        if not (isinstance(extensions, dict) and TASKS_EXTENSION in extensions):
            raise CapabilityError(f"extensions.{TASKS_EXTENSION}", method)

    def _live_task(self, task_id: str, tool: str | None = None) -> Task:
        # One handle per task id while anyone holds it, so notifications reach every waiter.
        live: weakref.WeakValueDictionary[str, Task] = self.__dict__.setdefault(
            "_live_tasks", weakref.WeakValueDictionary()
        )
        task = live.get(task_id)
        if task is None:
            task = live.setdefault(task_id, Task(self, task_id, self._session.era or LEGACY, tool=tool))
        if tool and task.tool is None:
            task.tool = tool
        return task

    def _handle(self, state: dict[str, Any], tool: str | None) -> Task:
        task_id = state.get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise ProtocolError(f"the server's task has no taskId: {state!r:.200}")
        task = self._live_task(task_id, tool)
        task._update(state)
        return task

    def _done(self, result: dict[str, Any], tool: str) -> Task:
        task = Task(self, "", self._session.era or LEGACY, tool=tool)
        task._finish(result)
        return task

    def _on_task_status(self, params: dict[str, Any]) -> None:
        """A status notification: update the live handle, if any (unknown ids are ignored)."""
        live = self.__dict__.get("_live_tasks")
        task = live.get(params.get("taskId")) if live is not None and isinstance(params.get("taskId"), str) else None
        if task is not None:
            try:
                task._update(params)
            except ProtocolError as exc:
                log.warning("ignoring a malformed task notification: %s", exc)

    def _answer_task_inputs(self, task_id: str, requests: dict[str, Any], cancel: Any) -> dict[str, Any]:
        token = CancelToken()
        if isinstance(cancel, CancelToken):
            cancel.add_callback(lambda: token.cancel(cancel.reason or "cancelled"))
        responses: dict[str, Any] = {}
        for key, request in requests.items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ProtocolError(f"task {task_id!r}: input request {key!r} is malformed: {request!r:.100}")
            params: dict[str, Any] = request["params"] if isinstance(request.get("params"), dict) else {}
            try:
                responses[key] = self._handlers.handle(request["method"], params, token)
            except RPCError as exc:
                raise ProtocolError(
                    f"task {task_id!r} needs {request['method']!r} from this client, which it cannot answer: "
                    f"{exc.message}; the task stays input_required (cancel() it, or install a handler)"
                ) from exc
        return responses


def finish_task_result(
    client: TasksMixin,
    result: dict[str, Any],
    tool: str,
    timeout: float | None,
    cancel: CancelToken | threading.Event | None = None,
) -> dict[str, Any]:
    """Wait for the task a server answered ``tools/call`` with; return the tool's raw result.

    ``timeout`` bounds the whole wait; ``cancel`` cancels the task on the server too.
    """
    task = client._handle(result, tool)
    log.debug("tools/call %r became task %s; waiting for it", tool, task.task_id)
    return task._wait(timeout, cancel)
