"""A stdio MCP server (official MCP Python SDK, ``MCPServer``) that runs a tool as a task: the
2026-07-28 ``io.modelcontextprotocol/tasks`` extension, written with the SDK's own extension
API (``mcp.server.extension.Extension``: a ``tools/call`` interceptor and ``tasks/get`` and
``tasks/cancel`` methods). The SDK ships no tasks of its own; this is how a server adds them.

Tools:

* ``research(seconds)``: answered with ``resultType: "task"`` (a task that is ``working``),
  suggesting a poll every ``--poll-ms`` milliseconds (60000 unless told); the task completes
  ``seconds`` after it started (with the text ``"researched"``), or never with ``seconds < 0``;
* ``ping_tool()``: an ordinary tool, answered at once.

``tasks/get`` gives the task's state (with its result once completed); ``tasks/cancel`` ends it.
Each ``tasks/get`` is said on stderr (``GET <taskId>``), so a test can see the polls.

``python tests/servers/sdk_tasks_server.py [--poll-ms N]`` (stdio, 2026-07-28).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
import warnings
from datetime import datetime, timezone
from typing import Any

import mcp.types as types
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from pydantic import ConfigDict

warnings.filterwarnings("ignore", category=DeprecationWarning)

IDENTIFIER = "io.modelcontextprotocol/tasks"


class TaskParams(types.RequestParams):
    model_config = ConfigDict(extra="allow")
    taskId: str  # noqa: N815 - the wire's name


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class Tasks(Extension):
    """The tasks extension, server side: tasks in memory, finished by time."""

    identifier = IDENTIFIER

    def __init__(self, poll_ms: int) -> None:
        self.poll_ms = poll_ms
        self.tasks: dict[str, dict[str, Any]] = {}

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("tasks/get", TaskParams, self.get), MethodBinding("tasks/cancel", TaskParams, self.cancel)]

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        if params.name != "research":
            return await call_next(ctx)
        seconds = float((params.arguments or {}).get("seconds", 1))
        task_id = uuid.uuid4().hex
        self.tasks[task_id] = {"ends": None if seconds < 0 else time.monotonic() + seconds, "status": "working",
                               "created": _now()}
        return {"resultType": "task", **self.state(task_id)}

    def state(self, task_id: str) -> dict[str, Any]:
        task = self.tasks[task_id]
        if task["status"] == "working" and task["ends"] is not None and time.monotonic() >= task["ends"]:
            task["status"] = "completed"
        state: dict[str, Any] = {"taskId": task_id, "status": task["status"], "createdAt": task["created"],
                                 "lastUpdatedAt": _now(), "ttlMs": 600_000, "pollIntervalMs": self.poll_ms}
        if task["status"] == "completed":
            state["result"] = {"content": [{"type": "text", "text": "researched"}], "isError": False}
        return state

    async def get(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        print(f"GET {params.taskId}", file=sys.stderr, flush=True)
        if params.taskId not in self.tasks:
            raise ValueError(f"no task {params.taskId}")
        return self.state(params.taskId)

    async def cancel(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        if params.taskId in self.tasks:
            self.tasks[params.taskId]["status"] = "cancelled"
        return {}


def build_server(poll_ms: int) -> MCPServer:
    mcp = MCPServer("sdk-tasks-server", extensions=[Tasks(poll_ms)])

    @mcp.tool(structured_output=False)
    def research(seconds: float = 1.0) -> str:
        """Research a topic, as a task (the tasks extension answers this call)."""
        return "researched at once"  # only without the extension

    @mcp.tool(structured_output=False)
    def ping_tool() -> str:
        """Answer at once."""
        return "pong"

    return mcp


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--poll-ms", type=int, default=60_000)
    build_server(parser.parse_args().poll_ms).run("stdio")
