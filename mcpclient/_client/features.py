"""The interfaces through which ``Client``'s feature methods reach a built-in extension.

A ``Client`` method that belongs to a feature (``read_ui_resource`` is MCP Apps') stays on
``Client`` for compatibility and delegates: it asks its ``Seam`` for the extension that
implements the feature's interface (``Seam.feature(UIViews)``) and calls it, or says how to
turn the feature on. The interfaces are declared here, with the data types they return, so
the client core knows the interface of a feature and never the module that implements it.
"""

from __future__ import annotations

import abc
from typing import Any, Callable, Mapping

from .. import types as t
from .._core.cancel import Cancel
from .._core.timeouts import DEFAULT
from .app_views import UIResource
from .skill_model import Skill

__all__ = ["Skill", "SkillsFeature", "Task", "TasksFeature", "ToolOutputs", "UIResource", "UIViews"]

#: Extra ``_meta`` keys of one call (``Client``'s ``meta=``).
Meta = Mapping[str, Any] | None


class UIViews(abc.ABC):
    """MCP Apps: the views of tools (``Client.read_ui_resource``)."""

    #: What the Client says when no extension implements the interface.
    missing = "MCP Apps are off for this client: create it with plugins=Plugins(apps=True)"

    @abc.abstractmethod
    def read_ui_resource(self, uri: str, timeout: float | None) -> UIResource:
        """The view at ``uri`` with its ``_meta.ui``, read once per connection."""


class ToolOutputs(abc.ABC):
    """Output validation: a tool's result checked against the ``outputSchema`` it was listed
    with (``Task.result``; ``call_tool``'s results are checked in the extension's ``result`` hook)."""

    @abc.abstractmethod
    def check(self, tool: str, result: t.ToolResult) -> t.ToolResult:
        """``result`` with its tool's schema attached, checked as the client's mode says."""


class SkillsFeature(abc.ABC):
    """Skills over MCP: ``Client.list_skills``, ``get_skill``, ``load_skill``, ``read_skill_file``.

    Timeouts come resolved (the Client resolves ``DEFAULT``); see those methods for the rest.
    """

    missing = "this client has no skills extension (it was made without the built-in ones)"

    @abc.abstractmethod
    def list_skills(self, timeout: float | None, meta: Meta = None) -> list[Skill]:
        """Every skill the server lists, all pages; no file is read."""

    @abc.abstractmethod
    def get_skill(self, uri: str, timeout: float | None, meta: Meta = None) -> Skill:
        """The entry of the skill whose SKILL.md is at ``uri``."""

    @abc.abstractmethod
    def load_skill(self, skill: Skill | str, allow_dynamic: bool, timeout: float | None, meta: Meta = None) -> str:
        """A skill's SKILL.md, verified against its entry."""

    @abc.abstractmethod
    def read_skill_file(
        self, skill: Skill, path: str, allow_dynamic: bool, timeout: float | None, meta: Meta = None
    ) -> bytes:
        """One file of ``skill``, verified against its entry."""


#: The statuses after which a task never changes again.
TERMINAL = frozenset({"completed", "failed", "cancelled"})


class Task(abc.ABC):
    """A handle on one task running on the server; safe to share between threads.

    Get one from ``Client.call_tool_as_task()``, ``Client.get_task()`` or
    ``Client.list_tasks()``. The state attributes (``status``, ``status_message``, ...) are the
    last ones seen and never touch the network; ``refresh()`` asks the server. ``wait()``
    blocks until the task ends, ``result()`` returns its ``ToolResult``, ``cancel()`` asks the
    server to stop it. A task the server needs input for is served by the handlers installed
    on the client (elicitation, sampling, roots), as direct server requests are.

    (The built-in tasks extension, ``mcpclient.plugins.tasks``, makes them.)
    """

    #: The server's id of the task ("" for a call the server answered at once).
    task_id: str
    #: The tool the task runs, when known.
    tool: str | None

    @property
    @abc.abstractmethod
    def status(self) -> str:
        """"working", "input_required", "completed", "failed" or "cancelled" (last seen)."""

    @property
    def done(self) -> bool:
        """Whether the task reached a terminal status (completed, failed, cancelled)."""
        return self.status in TERMINAL

    @property
    @abc.abstractmethod
    def status_message(self) -> str | None:
        """The server's message with the last status, if any."""

    @property
    @abc.abstractmethod
    def created_at(self) -> str | None:
        """ISO 8601 creation time, as the server sent it."""

    @property
    @abc.abstractmethod
    def last_updated_at(self) -> str | None:
        """ISO 8601 time of the last change, as the server sent it."""

    @property
    @abc.abstractmethod
    def ttl(self) -> float | None:
        """Seconds from creation the server keeps the task (None: unlimited or unknown)."""

    @property
    @abc.abstractmethod
    def poll_interval(self) -> float | None:
        """The server's suggested seconds between polls, if it gave one."""

    @abc.abstractmethod
    def refresh(self, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> str:
        """Ask the server for the task's state (``tasks/get``) and return its status.

        ``meta`` adds keys to the request's ``_meta``, as ``Client``'s ``meta=`` does.
        """

    @abc.abstractmethod
    def wait(self, timeout: float | None = DEFAULT) -> str:
        """Block until the task ends and return its terminal status.

        Polls ``tasks/get`` at the server's ``pollInterval`` (1 s if it gives none) and wakes
        early on a status notification. When the server needs input, the client's handlers
        provide it. Raises ``RequestTimeout`` if the task is still running after ``timeout``
        seconds (the task itself goes on: wait again, or ``cancel()`` it), ``RPCError`` if the
        server rejects a poll, ``ProtocolError`` if it needs input no handler can give.
        """

    @abc.abstractmethod
    def result(self, timeout: float | None = DEFAULT) -> t.ToolResult:
        """Wait for the task to end and return the tool's ``ToolResult``.

        A tool that reported failure gives a result with ``is_error=True``, as ``call_tool``
        does. Raises ``RPCError`` when the underlying request failed with a JSON-RPC error,
        ``RequestCancelled`` when the task was cancelled, and what ``wait()`` raises.
        """

    @abc.abstractmethod
    def cancel(self, *, timeout: float | None = DEFAULT) -> None:
        """Ask the server to cancel the task (``tasks/cancel``).

        Cancellation is cooperative: the task may still end in another status. In the legacy
        era the server must declare ``tasks.cancel`` (else ``CapabilityError``) and rejects a
        task already ended with an ``RPCError``.
        """


class TasksFeature(abc.ABC):
    """Tasks: ``Client.call_tool_as_task``, ``get_task``, ``list_tasks``, and the wait of a
    ``call_tool`` the server made a task.

    ``call_tool_as_task`` is a tool call of the Client's (``_calls``: its one place for a
    ``tools/call``): the feature says how to ask for the task (``task_call``) and makes the
    handle from the answer (``started``). Timeouts come resolved.
    """

    missing = "this client has no tasks extension (it was made without the built-in ones)"

    @abc.abstractmethod
    def task_call(
        self, params: dict[str, Any], ttl: float | None, timeout: float | None,
        list_tools: Callable[[float | None], object],
    ) -> dict[str, Any]:
        """The ``tools/call`` params that start the tool ``params["name"]`` as a task.

        Raises ``CapabilityError`` when the server supports no tasks and ``TaskSupportError``
        when its listing forbids them for the tool; ``list_tools(timeout)`` is the Client's
        listing, called once when the tool's support is not known yet.
        """

    @abc.abstractmethod
    def started(self, result: dict[str, Any], tool: str) -> Task:
        """The handle for the task ``result`` (the ``tools/call`` answer) stands for; a
        finished one when the server answered at once instead of making a task."""

    @abc.abstractmethod
    def finish(self, result: dict[str, Any], tool: str, timeout: float | None, cancel: Cancel | None) -> dict[str, Any]:
        """Wait for the task a server answered ``call_tool`` with and return the tool's raw
        result; ``timeout`` bounds the whole wait, ``cancel`` cancels the task on the server too."""

    @abc.abstractmethod
    def get_task(self, task_id: str, timeout: float | None, meta: Meta = None) -> Task:
        """A handle on an existing task, freshly polled."""

    @abc.abstractmethod
    def list_tasks(self, timeout: float | None, meta: Meta = None) -> list[Task]:
        """Every task the server lists, all pages."""
