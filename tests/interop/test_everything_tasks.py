"""Tasks (2025-11-25) against ``@modelcontextprotocol/server-everything`` over stdio.

Its ``simulate-research-query`` tool requires task execution (``taskSupport: "required"``):
four one-second stages, ``pollInterval`` 1000 ms, and with ``ambiguous: true`` an elicitation
delivered while ``tasks/result`` is pending (status ``input_required``). The official Python
SDK (``mcp`` 2.3.0) implements no tasks, so this is the only real server tasks run against.
"""

from __future__ import annotations


import pytest

from mcpclient import Client, ElicitationResult, RequestCancelled, StdioTransport
from tests.helpers import wait_for
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
    plain = client.call_tool_as_task(TOOL, {"topic": "rust"}, ttl=120)
    ambiguous = client.call_tool_as_task(TOOL, {"topic": "python", "ambiguous": True})
    assert plain.status == "working" and plain.poll_interval == 1.0 and plain.ttl
    listed = {t.task_id for t in client.list_tasks()}
    assert {plain.task_id, ambiguous.task_id} <= listed

    def both_underway() -> bool:
        """Both past their first stage and neither done: side by side, not one after the other."""
        for task in (plain, ambiguous):
            task.refresh()
        return all(task.status in ("working", "input_required")
                   and not (task.status_message or "Gathering").startswith("Gathering") for task in (plain, ambiguous))

    wait_for(both_underway, timeout=30, interval=0.2,
             what=lambda: f"both tasks underway ({plain.status_message!r}, {ambiguous.status_message!r})")

    report = ambiguous.result(timeout=20)
    assert "python (snake)" in report.text, report.text[:300]
    assert ambiguous.status == "completed"
    assert [r.message for r in client.asked if "python" in r.message], "the elicitation reached the handler"
    assert "Research Report: rust" in plain.result(timeout=20).text


def test_a_cancelled_task_reports_cancelled(client):
    task = client.call_tool_as_task(TOOL, {"topic": "go"})
    task.cancel()
    assert task.status == "cancelled"
    assert client.get_task(task.task_id).status == "cancelled"
    with pytest.raises(RequestCancelled):
        task.result(timeout=5)


def test_a_tool_that_forbids_tasks_is_refused_before_anything_is_sent():
    """``echo`` declares no ``execution`` (taskSupport "forbidden"): it used to be sent as a task
    and come back as the tool's error; now it is refused before sending (issue #30)."""
    from mcpclient import CapabilityError, TaskSupportError

    transport = StdioTransport(ARGV)
    sent: list[str] = []
    real_send = transport.send  # count what reaches the wire

    def counting(message, **kwargs):
        sent.append(message.get("method"))
        return real_send(message, **kwargs)

    transport.send = counting  # type: ignore[method-assign]
    with Client(transport, timeout=20) as client:
        del sent[:]  # the handshake
        with pytest.raises(TaskSupportError) as info:  # not listed yet: listed once, then refused
            client.call_tool_as_task("echo", {"message": "hi"})
        assert isinstance(info.value, CapabilityError)
        assert info.value.tool == "echo" and info.value.support == "forbidden"
        assert "call_tool()" in str(info.value)
        assert sent == ["tools/list"], sent
        with pytest.raises(TaskSupportError):  # known now: refused with nothing sent
            client.call_tool_as_task("echo", {"message": "hi"})
        assert sent == ["tools/list"], sent
        assert client.call_tool("echo", {"message": "hi"}).text == "Echo: hi"  # a plain call still works
        task = client.call_tool_as_task(TOOL, {"topic": "go"})  # a tool that allows tasks runs as one
        assert task.status == "working"
        task.cancel()
