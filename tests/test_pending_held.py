"""A tool call that waits for a person, legacy era: the server's request is held unanswered in
this process while the ``tools/call`` stays open; ``resume`` answers it. The hold ends at the
call's deadline, its cancel, ``close()`` and the server's death, within about a second; a
``PendingInput`` of another process is refused (issue #48).

Against the official SDK server over stdio (``sdk_server.py``, asked for the legacy era), which
records every request it receives (``SDK_SERVER_REQUESTS``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from mcpclient import (
    Client,
    ClientClosedError,
    CreateMessageResult,
    ElicitationResult,
    Handlers,
    MCPError,
    PendingInput,
    PendingInputRefused,
    RequestTimeout,
    StdioTransport,
)
from mcpclient._core.cancel import CancelToken
from mcpclient._client.holding import find
from tests.conftest import SDK_SERVER
from tests.helpers import RELEASED_WITHIN, require_mcp_sdk, wait_for
from tests.test_pending_input import ANN, KEY, Recorded

#: The held call's own time in the tests that end it otherwise: far from the event's bound.
HELD = 30.0


@pytest.fixture
def recorded(tmp_path):
    require_mcp_sdk()
    return Recorded(tmp_path / "received.jsonl")


def held_client(recorded: Recorded, **handlers) -> Client:
    transport = StdioTransport(SDK_SERVER, env={"SDK_SERVER_REQUESTS": str(recorded.path)})
    client = Client(transport, timeout=HELD, protocol="legacy", handlers=Handlers(pending_key=KEY, **handlers))
    client.initialize()
    return client


def ask(client: Client, tool: str = "elicit", arguments: dict | None = None, **kwargs) -> PendingInput:
    pending = client.call_tool(tool, arguments or {"message": "Who are you?"}, on_input="return", **kwargs)
    assert isinstance(pending, PendingInput) and pending.era == "legacy"
    return pending


def ended_within(hold, start: float) -> None:
    """The hold is over, its call's thread done and its question let go, within RELEASED_WITHIN of ``start``."""
    assert wait_for(lambda: hold.job.done.is_set() and not hold.waiting(), timeout=RELEASED_WITHIN + 1)
    assert time.monotonic() - start < RELEASED_WITHIN


def test_the_call_is_held_and_resume_answers_the_server(recorded):
    answered_by_handler = []

    def handler(request):
        answered_by_handler.append(request)
        return ElicitationResult(action="decline")

    client = held_client(recorded, elicitation=handler)
    try:
        pending = ask(client)
        (question,) = pending.questions.values()
        assert question.kind == "form" and question.message == "Who are you?" and "name" in question.schema["properties"]
        result = client.resume(pending, ANN)
        assert result.text == 'accept {"age": 30, "name": "Ann"}'
        assert [r["name"] for r in recorded.all() if r["method"] == "tools/call"] == ["elicit"]  # sent once
        assert answered_by_handler == []
        assert client.call_tool("elicit", {"message": "again"}).text == "decline null"  # without on_input: the handler
        assert [request.message for request in answered_by_handler] == ["again"]
    finally:
        client.close()


def test_a_sampling_question_is_held_too(recorded):
    client = held_client(recorded)
    try:
        pending = ask(client, "sample", {"prompt": "capital of France?"})
        (question,) = pending.questions.values()
        assert question.kind == "sampling" and question.params["messages"][0]["content"]["text"] == "capital of France?"
        result = client.resume(pending, CreateMessageResult.from_text("Paris", model="person"))
        assert result.text == "Paris"
    finally:
        client.close()


def test_its_json_resumes_here_and_is_refused_in_another_process(recorded):
    client = held_client(recorded)
    try:
        pending = ask(client)
        text = pending.to_json()
        assert "only that process can resume it" in json.loads(text)["heldIn"]["note"]
        child = (
            "import sys\n"
            "from mcpclient import Client, Handlers, PendingInput, PendingInputRefused, StdioTransport\n"
            f"command, key, env = {SDK_SERVER!r}, {KEY!r}, {{'SDK_SERVER_REQUESTS': {str(recorded.path)!r}}}\n"
            "pending = PendingInput.from_json(sys.stdin.read())\n"
            "with Client(StdioTransport(command, env=env), timeout=30, protocol='legacy',\n"
            "            handlers=Handlers(pending_key=key)) as client:\n"
            "    try:\n"
            "        client.resume(pending, {'action': 'accept', 'content': {'name': 'Bo'}})\n"
            "    except PendingInputRefused as exc:\n"
            "        print('REFUSED', exc)\n"
        )
        done = subprocess.run([sys.executable, "-c", child], input=text, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "REFUSED" in done.stdout and "another process" in done.stdout
        assert client.resume(PendingInput.from_json(text), ANN).text.startswith("accept")
    finally:
        client.close()


def test_another_client_cannot_resume_it(recorded):
    client, other = held_client(recorded), held_client(recorded)
    try:
        pending = ask(client)
        with pytest.raises(PendingInputRefused, match="another client"):
            other.resume(PendingInput.from_json(pending.to_json()), ANN)
        assert client.resume(pending, ANN).text.startswith("accept")
    finally:
        client.close()
        other.close()


def test_one_call_is_held_at_a_time_per_client(recorded):
    client = held_client(recorded)
    try:
        pending = ask(client)
        with pytest.raises(MCPError, match="one call is held at a time"):
            client.call_tool("elicit", {"message": "second"}, on_input="return")
        assert client.resume(pending, ANN).text.startswith("accept")
        assert client.resume(ask(client), ANN).text.startswith("accept")  # the next one may be held
    finally:
        client.close()


def test_close_ends_the_hold_at_once(recorded):
    client = held_client(recorded)
    pending = ask(client)
    hold = pending.hold
    start = time.monotonic()
    client.close()
    ended_within(hold, start)
    with pytest.raises(ClientClosedError):
        client.resume(pending, ANN)
    assert find(pending.hold_id) is None


def test_the_servers_death_ends_the_hold_at_once(recorded):
    client = held_client(recorded)
    try:
        pending = ask(client)
        hold = pending.hold
        start = time.monotonic()
        os.kill(client.transport.pid, signal.SIGKILL)
        ended_within(hold, start)
        with pytest.raises(MCPError) as raised:
            client.resume(pending, ANN)
        assert not isinstance(raised.value, PendingInputRefused)  # the connection's own error
    finally:
        client.close()


def test_the_calls_cancel_ends_the_hold_at_once(recorded):
    client = held_client(recorded)
    try:
        token = CancelToken()
        pending = ask(client, cancel=token)
        hold = pending.hold
        start = time.monotonic()
        token.cancel("the person left")
        ended_within(hold, start)
        with pytest.raises(MCPError, match="cancel"):
            client.resume(pending, ANN)
        assert client.call_tool("echo", {"text": "still open"}).text == "still open"
    finally:
        client.close()


def test_a_hold_never_resumed_is_answered_and_cleaned_up_at_its_deadline(recorded):
    client = held_client(recorded)
    try:
        limit = 2.0
        start = time.monotonic()
        pending = ask(client, timeout=limit)
        hold = pending.hold
        assert pending.expires_at <= time.time() + limit  # no later than the call's own deadline
        ended_within(hold, start + limit)
        with pytest.raises((RequestTimeout, PendingInputRefused), match="did not end within|expired"):
            client.resume(pending, ANN)
        assert client.call_tool("echo", {"text": "after"}).text == "after"
        # The server got its answer (cancel) and the call ended there: its next call is served.
        assert client.resume(ask(client), ANN).text.startswith("accept")
    finally:
        client.close()


def test_a_hold_without_a_timeout_ends_at_the_pendings_expiry(recorded):
    client = held_client(recorded, pending_expiry=2.0)
    try:
        start = time.monotonic()
        pending = ask(client, timeout=None)
        ended_within(pending.hold, start + 2.0)
        with pytest.raises((RequestTimeout, PendingInputRefused)):
            client.resume(pending, ANN)
    finally:
        client.close()
