"""``LiveTask``: a tool call running on the server in the background, behind one blocking handle.

Two wire forms exist and the handle hides the difference:

* the experimental tasks of 2025-11-25 (legacy era): the client asks for a task with a
  ``task`` field on ``tools/call``; ``tasks/get`` polls, ``tasks/result`` blocks until the end
  and returns the result (the server sends its elicitation or sampling requests while it
  blocks), ``tasks/list`` and ``tasks/cancel`` exist when the server declares them, and
  ``notifications/tasks/status`` may announce changes;
* the ``io.modelcontextprotocol/tasks`` extension of 2026-07-28: the server alone decides to
  answer a ``tools/call`` with a task (``resultType: "task"``), ``tasks/get`` carries the final
  result or error inline, ``inputRequests`` are answered with ``tasks/update``, and there is no
  ``tasks/list`` and no ``tasks/result``.

Waiting polls ``tasks/get`` at the server's suggested interval and wakes early when a status
notification arrives (each wait through the session's ``Until``, so the caller's timeout and
cancel, the client's ``close()`` and the connection's death end it at once, never its next poll); where the server pushes a task's status (the 2026 extension's
``subscriptions/listen`` for task ids, ``push.TaskPush``) it waits for the push and polls only
as a safety net. Every wait is bounded by a timeout. Every request goes through the
extension's ``Session`` (so through the client's middleware), and the era's rules are read
from the session (``Session.era_rules``). ``mcpclient.Task`` is the interface it implements.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Mapping

from ... import types as t
from ..._client.features import TERMINAL, Task, ToolOutputs
from ..._core import bounded as _bounded
from ..._core.cancel import Cancel, is_cancelled
from ..._core.exceptions import ProtocolError, RequestCancelled, RequestTimeout, RPCError
from ..._core.timeouts import DEFAULT
from ...extensions import Options, Session, Signal, Until
from .push import PUSHED_POLL_INTERVAL, TaskPush

__all__ = ["STATUS_NOTIFICATIONS", "TERMINAL", "LiveTask"]

log = logging.getLogger("mcpclient")

#: Notifications carrying a task's full state (2025-11-25, then the 2026 extension).
STATUS_NOTIFICATIONS = frozenset({"notifications/tasks/status", "notifications/tasks"})
#: Seconds between polls when the server suggests no interval.
DEFAULT_POLL_INTERVAL = 1.0
#: Bounds on the server's suggested interval: never busy-wait, never sleep past a minute.
MIN_POLL_INTERVAL = 0.05
MAX_POLL_INTERVAL = 60.0


class LiveTask(Task):
    """The ``Task`` of one connection: its last state seen, and the loop that waits for its end.

    What each public member does is documented on the interface, ``mcpclient.Task``.
    """

    def __init__(
        self,
        session: Session,
        outputs: ToolOutputs | None,
        task_id: str,
        *,
        tool: str | None = None,
        push: TaskPush | None = None,
    ) -> None:
        self.task_id = task_id
        self._push = push
        self.tool = tool
        self._session = session
        self._outputs = outputs
        self._era = session.era_rules
        self._state_lock = threading.Lock()  # the state's
        self._state: dict[str, Any] = {"status": "working"}
        self._seen_at = time.monotonic()
        #: Set when the server next says something of the task (then replaced by a fresh one):
        #: a waiter takes the one of the state it read, so no word between is missed.
        self._heard = Signal()
        self._outcome: dict[str, Any] | RPCError | None = None
        self._answered: set[str] = set()
        self._input_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Task {self.task_id!r} {self.status}{f' tool={self.tool!r}' if self.tool else ''}>"

    # -- the last state seen ------------------------------------------------------------------

    @property
    def status(self) -> str:
        with self._state_lock:
            return str(self._state.get("status"))

    @property
    def status_message(self) -> str | None:
        return self._get_str("statusMessage")

    @property
    def created_at(self) -> str | None:
        return self._get_str("createdAt")

    @property
    def last_updated_at(self) -> str | None:
        return self._get_str("lastUpdatedAt")

    @property
    def ttl(self) -> float | None:
        return _seconds(self._get("ttlMs", "ttl"))

    @property
    def poll_interval(self) -> float | None:
        return _seconds(self._get("pollIntervalMs", "pollInterval"))

    def _get(self, *keys: str) -> Any:
        with self._state_lock:
            for key in keys:
                if self._state.get(key) is not None:
                    return self._state[key]
        return None

    def _get_str(self, key: str) -> str | None:
        value = self._get(key)
        return value if isinstance(value, str) else None

    def _update(self, state: Mapping[str, Any]) -> None:
        """Take a task object from the server (a poll, a notification, a cancel reply)."""
        status = state.get("status")
        if not isinstance(status, str):
            raise ProtocolError(f"task {self.task_id!r}: the server sent a task without a status: {_bounded.excerpt(dict(state), 200)}")
        with self._state_lock:
            if self._state.get("status") in TERMINAL and status != self._state.get("status"):
                log.debug("task %r: ignoring %r after terminal %r", self.task_id, status, self._state.get("status"))
                return
            self._state = dict(state)
            if status == "completed" and isinstance(state.get("result"), dict):
                self._outcome = state["result"]
            elif status == "failed" and isinstance(state.get("error"), dict):
                self._outcome = _rpc_error(state["error"], self.task_id)
            self._seen_at = time.monotonic()
            heard, self._heard = self._heard, Signal()
        heard.set()

    def _finish(self, outcome: dict[str, Any] | RPCError) -> None:
        """Record the outcome got from ``tasks/result`` or from a call that was not a task."""
        failed = isinstance(outcome, RPCError) or bool(outcome.get("isError"))
        with self._state_lock:
            self._outcome = outcome
            if self._state.get("status") not in TERMINAL:
                self._state = {**self._state, "status": "failed" if failed else "completed"}
            self._seen_at = time.monotonic()
            heard, self._heard = self._heard, Signal()
        heard.set()

    # -- asking the server --------------------------------------------------------------------

    def refresh(self, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> str:
        if not self.task_id:
            return self.status  # a call the server answered at once: nothing to ask
        result = self._session.request(
            "tasks/get", {"taskId": self.task_id}, options=Options(timeout=self._resolve(timeout), meta=meta)
        )
        self._update(result)
        return self.status

    def wait(self, timeout: float | None = DEFAULT) -> str:
        self._wait(self._resolve(timeout), None)
        return self.status

    def result(self, timeout: float | None = DEFAULT) -> t.ToolResult:
        outcome = self._wait(self._resolve(timeout), None)
        tool_result = self._session.structure(outcome, t.ToolResult)
        return self._outputs.check(self.tool, tool_result) if self.tool and self._outputs is not None else tool_result

    def cancel(self, *, timeout: float | None = DEFAULT) -> None:
        if not self.task_id or self.done:
            return
        self._era.require_tasks(self._session.server_capabilities, "cancel")
        result = self._session.request(
            "tasks/cancel", {"taskId": self.task_id}, options=Options(timeout=self._resolve(timeout))
        )
        if isinstance(result.get("status"), str):
            self._update(result)  # 2025-11-25 answers with the task; the extension only acks

    def _resolve(self, timeout: float | None) -> float | None:
        """``timeout``, or the client's (read afresh) for ``DEFAULT``."""
        return self._session.timeout if timeout is DEFAULT else timeout

    # -- the waiting loop ---------------------------------------------------------------------

    def _wait(self, timeout: float | None, cancel: Cancel | None) -> dict[str, Any]:
        """Drive the task to its end within ``timeout`` seconds and return its raw result.

        Every pause waits through the session's ``Until``: ``timeout``, ``cancel``, the
        client's ``close()`` and the connection's death end it at once."""
        until = self._session.until(Options(timeout=timeout, cancel=cancel),
                                    what=f"waiting for task {self.task_id!r}")
        push = self._push if self.task_id else None
        if push is not None:
            push.watch(self.task_id)
        try:
            while True:
                if is_cancelled(cancel):
                    raise RequestCancelled(f"waiting for task {self.task_id!r} was cancelled", method="tasks/get")
                with self._state_lock:
                    status, seen, heard = self._state.get("status"), self._seen_at, self._heard
                if status in TERMINAL:
                    return self._outcome_or_fetch(status, until.remaining(), cancel)
                if status == "input_required" and self._provide_input(until.remaining(), cancel):
                    continue
                left = until.remaining()
                if left is not None and left <= 0:
                    raise self._still(status, timeout)
                # A poll is due one interval after the server last told us anything (a reply
                # or a notification), so notifications put polls off and nothing busy-waits.
                # A pushed task is told of its changes: a poll is then only a safety net.
                interval = (PUSHED_POLL_INTERVAL if push is not None and push.pushed(self.task_id)
                            else _clamp(self.poll_interval or DEFAULT_POLL_INTERVAL))
                pause = seen + interval - time.monotonic()
                if pause <= 0:
                    self._poll(until)
                    continue
                try:
                    until.wait(heard, timeout=pause)  # a word from the server, or the poll is due
                except RequestTimeout:
                    raise self._still(status, timeout) from None
        except RequestCancelled:
            if is_cancelled(cancel):
                self._cancel_quietly()
            raise
        finally:
            if push is not None:
                push.unwatch(self.task_id)

    def _still(self, status: Any, timeout: float | None) -> RequestTimeout:
        return RequestTimeout(
            f"task {self.task_id!r} is still {status} after {timeout}s; it goes on running: "
            "wait again, or cancel() it", method="tasks/get", timeout=timeout,
        )

    def _poll(self, until: Until) -> None:
        """``tasks/get`` within what is left of the wait (the client's timeout without a
        limit: no poll hangs for ever), ended by the wait's cancel too."""
        left = until.remaining()
        result = self._session.request(
            "tasks/get", {"taskId": self.task_id},
            options=Options(timeout=self._session.timeout if left is None else left, cancel=until.cancel),
        )
        self._update(result)

    def _cancel_quietly(self) -> None:
        try:
            self.cancel(timeout=5.0)
        except Exception as exc:  # the caller is told of the cancellation, not of this
            log.warning("could not cancel task %r: %s", self.task_id, exc)

    def _outcome_or_fetch(self, status: str | None, timeout: float | None, cancel: Any = None) -> dict[str, Any]:
        if status == "cancelled":
            message = self.status_message
            raise RequestCancelled(
                f"task {self.task_id!r} was cancelled{f': {message}' if message else ''}", method="tools/call"
            )
        with self._state_lock:
            outcome = self._outcome
        if outcome is None and self._era.blocking_task_result:
            self._fetch_result(timeout, cancel)
        elif outcome is None:
            self.refresh(timeout=DEFAULT if timeout is None else timeout)  # a notice without the result
        with self._state_lock:
            outcome = self._outcome
        if isinstance(outcome, RPCError):
            raise outcome
        if outcome is None:
            raise ProtocolError(f"task {self.task_id!r} is {status} but the server gave no result or error")
        return outcome

    def _fetch_result(self, timeout: float | None, cancel: Any = None) -> None:
        """``tasks/result`` (legacy): blocks until the end; the server asks for input meanwhile."""
        try:
            result = self._session.request(
                "tasks/result", {"taskId": self.task_id}, options=Options(timeout=timeout, cancel=cancel)
            )
        except RPCError as exc:
            self._finish(exc)
            return
        self._finish(result)

    def _provide_input(self, timeout: float | None, cancel: Any) -> bool:
        """Serve an ``input_required`` task; return whether anything was done."""
        if self._era.blocking_task_result:
            # The server sends its requests while tasks/result is pending (spec: "SHOULD
            # preemptively call tasks/result"); our handlers answer them as any server request.
            self._fetch_result(timeout, cancel)
            return True
        with self._input_lock:
            requests = self._get("inputRequests")
            if not isinstance(requests, dict):
                return False
            fresh = {key: value for key, value in requests.items() if key not in self._answered}
            if not fresh:
                return False  # already answered; the server has not caught up yet
            responses = self._session.answer_inputs(
                fresh, cancel, asker=f"task {self.task_id!r}",
                advice="; the task stays input_required (cancel() it, or install a handler)",
            )
            update = {"taskId": self.task_id, "inputResponses": responses}
            self._session.request(
                "tasks/update", update, options=Options(timeout=self._resolve(DEFAULT if timeout is None else timeout))
            )
            self._answered.update(fresh)
        return True


def _rpc_error(error: dict[str, Any], task_id: str) -> RPCError:
    code = error.get("code")
    message = error.get("message")
    return RPCError(
        code if isinstance(code, int) else RPCError.INTERNAL_ERROR,
        message if isinstance(message, str) else f"task {task_id} failed",
        error.get("data"),
        method="tools/call",
    )


def _seconds(milliseconds: Any) -> float | None:
    if isinstance(milliseconds, bool) or not isinstance(milliseconds, (int, float)):
        return None
    return milliseconds / 1000.0


def _clamp(seconds: float) -> float:
    return min(max(seconds, MIN_POLL_INTERVAL), MAX_POLL_INTERVAL)


