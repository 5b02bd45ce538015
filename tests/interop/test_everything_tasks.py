"""Tasks (2025-11-25) against ``@modelcontextprotocol/server-everything`` over stdio.

Its ``simulate-research-query`` tool requires task execution (``taskSupport: "required"``):
four one-second stages, ``pollInterval`` 1000 ms, and with ``ambiguous: true`` an elicitation
delivered while ``tasks/result`` is pending (status ``input_required``). The official Python
SDK (``mcp`` 2.3.0) implements no tasks, so this is the only real server tasks run against.
"""

from __future__ import annotations

import time

import pytest

from mcpclient import Client, ElicitationResult, RequestCancelled, StdioTransport
from tests.node_tools import NODE_DIR, everything_server_cmd

try:
    ARGV = everything_server_cmd("stdio")
except FileNotFoundError as exc:  # CI installs them; locally: `npm ci` in tests/node
    pytest.skip(f"server-everything needs Node 22 and {NODE_DIR}/node_modules: {exc}", allow_module_level=True)

pytestmark = pytest.mark.node

TOOL = "simulate-research-query"


@pytest.fixture
def client():
    """A fresh server per test: its notifications start a dispatch thread, which must end with it."""
    asked = []

    def clarify(request):
        asked.append(request)
        return ElicitationResult(action="accept", content={"interpretation": "snake"})

    client = Client(StdioTransport(ARGV), timeout=20)
    client.set_elicitation_handler(clarify)
    client.asked = asked  # type: ignore[attr-defined]
    with client:
        yield client


def test_two_tasks_run_side_by_side_one_asking_for_input_and_both_are_listed(client):
    assert client.server_capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
    tool = next(t for t in client.list_tools() if t.name == TOOL)
    assert tool.execution == {"taskSupport": "required"}
    started = time.monotonic()
    plain = client.call_tool_as_task(TOOL, {"topic": "rust"}, ttl=120)
    ambiguous = client.call_tool_as_task(TOOL, {"topic": "python", "ambiguous": True})
    assert plain.status == "working" and plain.poll_interval == 1.0 and plain.ttl
    listed = {t.task_id for t in client.list_tasks()}
    assert {plain.task_id, ambiguous.task_id} <= listed

    report = ambiguous.result(timeout=20)
    assert "python (snake)" in report.text, report.text[:300]
    assert ambiguous.status == "completed"
    assert [r.message for r in client.asked if "python" in r.message], "the elicitation reached the handler"
    assert "Research Report: rust" in plain.result(timeout=20).text
    assert time.monotonic() - started < 15, "the tasks ran in parallel, not one after the other"


def test_a_cancelled_task_reports_cancelled(client):
    task = client.call_tool_as_task(TOOL, {"topic": "go"})
    task.cancel()
    assert task.status == "cancelled"
    assert client.get_task(task.task_id).status == "cancelled"
    with pytest.raises(RequestCancelled):
        task.result(timeout=5)
