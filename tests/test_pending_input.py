"""A tool call that waits for a person, 2026-07-28 era: ``call_tool(on_input="return")`` gives a
``PendingInput``; ``resume`` sends the call again once with the answers and the server's state,
in this process or another; a tampered, foreign, expired or key-less state is refused before
anything is sent (issue #48).

Against the official SDK server over Streamable HTTP, which records every request it receives
(``SDK_SERVER_REQUESTS``): "nothing arrives" is read there.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

import mcpclient
from mcpclient import (
    Client,
    Handlers,
    MCPError,
    PendingInput,
    PendingInputRefused,
    Plugins,
    StdioTransport,
    StreamableHTTPTransport,
    ToolCallDenied,
)
from mcpclient.policy import Policy, Rule
from tests.conftest import SDK_SERVER
from tests.helpers import require_mcp_sdk

KEY = b"a test key of the app, 32 bytes!"
ANN = {"action": "accept", "content": {"name": "Ann"}}


class Recorded:
    """The requests the server received, read from its file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def all(self) -> list[dict]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    def mark(self) -> int:
        return len(self.all())

    def since(self, mark: int) -> list[dict]:
        return self.all()[mark:]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_mcp_sdk()
    from tests.http.conftest import start_sdk_server

    path = tmp_path_factory.mktemp("requests") / "received.jsonl"
    started = start_sdk_server("--transport", "streamable-http", env={"SDK_SERVER_REQUESTS": str(path)})
    yield started.url, Recorded(path)
    started.stop()


def client_for(url: str, *, key: bytes | None = KEY, token: str = "alice", **handlers) -> Client:
    return Client(StreamableHTTPTransport(url, headers={"Authorization": f"Bearer {token}"}), timeout=30,
                  protocol="2026-07-28", handlers=Handlers(pending_key=key, **handlers))


def asked(url: str, **kwargs) -> tuple[Client, PendingInput]:
    client = client_for(url, **kwargs).__enter__()
    pending = client.call_tool("elicit", {"message": "Who are you?"}, on_input="return")
    assert isinstance(pending, PendingInput)
    return client, pending


@contextlib.contextmanager
def asking(url: str, **kwargs) -> Iterator[tuple[Client, PendingInput]]:
    """``asked``, the client closed after the block."""
    client, pending = asked(url, **kwargs)
    try:
        yield client, pending
    finally:
        client.close()


def test_the_call_returns_the_form_and_resume_sends_the_answers_once(server):
    url, received = server
    answered_by_handler = []
    with asking(url, elicitation=lambda request: answered_by_handler.append(request)) as (client, pending):
        assert pending.era == "modern" and pending.name == "elicit" and pending.rounds == 1
        (question,) = pending.questions.values()
        assert question.kind == "form" and question.message == "Who are you?"
        assert question.schema["required"] == ["name"] and "age" in question.schema["properties"]
        mark = received.mark()
        result = client.resume(pending, ANN)
        assert result.text == 'accept {"age": 30, "name": "Ann"}'  # the schema's default filled in
        sent = received.since(mark)
        assert [(r["method"], r["name"]) for r in sent] == [("tools/call", "elicit")]  # once
        assert sent[0]["requestState"] == pending.request_state and pending.request_state
        assert sent[0]["inputResponses"] == {question.key: {"action": "accept", "content": {"age": 30, "name": "Ann"}}}
        assert answered_by_handler == []  # the handlers were not asked


def test_answers_by_key_and_a_decline(server):
    url, received = server
    with asking(url) as (client, pending):
        (key,) = pending.questions
        assert client.resume(pending, {key: {"action": "decline"}}).text == "decline null"


def test_another_process_resumes_the_json_with_a_fresh_client(server):
    url, received = server
    client, pending = asked(url)
    text = pending.to_json()
    client.close()
    mark = received.mark()
    child = (
        "import sys\n"
        "from mcpclient import Client, Handlers, PendingInput, StreamableHTTPTransport\n"
        f"url, key = {url!r}, {KEY!r}\n"
        "pending = PendingInput.from_json(sys.stdin.read())\n"
        "transport = StreamableHTTPTransport(url, headers={'Authorization': 'Bearer alice'})\n"
        "with Client(transport, timeout=30, handlers=Handlers(pending_key=key)) as client:\n"
        "    print('RESULT', client.resume(pending, {'action': 'accept', 'content': {'name': 'Bo', 'age': 4}}).text)\n"
    )
    done = subprocess.run([sys.executable, "-c", child], input=text, capture_output=True, text=True, timeout=120,
                          env={**os.environ})
    assert done.returncode == 0, done.stderr[-3000:]
    assert 'RESULT accept {"age": 4, "name": "Bo"}' in done.stdout
    calls = [r for r in received.since(mark) if r["method"] == "tools/call"]
    assert len(calls) == 1 and calls[0]["inputResponses"] and calls[0]["requestState"] == pending.request_state


def refused(client: Client, pending: PendingInput, received: Recorded, match: str) -> None:
    mark = received.mark()
    with pytest.raises(PendingInputRefused, match=match):
        client.resume(pending, ANN)
    assert received.since(mark) == []  # nothing arrived


def test_a_tampered_state_is_refused_before_anything_is_sent(server):
    url, received = server
    with asking(url) as (client, pending):
        data = json.loads(pending.to_json())
        for change in ({"arguments": {"message": "Who else?"}}, {"requestState": "forged"}, {"rounds": 0},
                       {"expires": data["expires"] + 3600}, {"owner": "0" * 64}, {"name": "echo"}):
            forged = PendingInput.from_json(json.dumps({**data, **change}))
            refused(client, forged, received, "signature does not match")


def test_a_state_of_another_key_is_refused(server):
    url, received = server
    client, pending = asked(url)
    client.close()
    with client_for(url, key=b"another app's key, 32 bytes long") as other:
        refused(other, PendingInput.from_json(pending.to_json()), received, "signature does not match")


def test_a_state_made_for_another_user_is_refused(server):
    url, received = server
    client, pending = asked(url, token="alice")
    client.close()
    with client_for(url, token="bob") as bob:
        refused(bob, PendingInput.from_json(pending.to_json()), received, "other credentials")
        refused(bob, pending, received, "other credentials")  # in memory too


def test_a_state_made_for_another_server_is_refused(server):
    url, received = server
    client, pending = asked(url)
    client.close()
    sent = []
    middleware = [lambda message, next_: sent.append(message.method) or next_(message)]
    with Client(StdioTransport(SDK_SERVER), timeout=30, protocol="2026-07-28", middleware=middleware,
                handlers=Handlers(pending_key=KEY)) as other:
        opened = list(sent)
        refused(other, PendingInput.from_json(pending.to_json()), received, "another server")
        assert sent == opened  # the stdio server was sent nothing either


def test_an_expired_state_is_refused(server):
    url, received = server
    with asking(url, pending_expiry=0.2) as (client, pending):
        text = pending.to_json()
        deadline = time.time() + 10
        while time.time() < pending.expires_at and time.time() < deadline:
            time.sleep(0.05)
        refused(client, pending, received, "expired")
        refused(client, PendingInput.from_json(text), received, "expired")


def test_without_a_key_to_json_says_which_setting_and_resume_works_in_process(server):
    url, received = server
    with asking(url, key=None) as (client, pending):
        with pytest.raises(MCPError, match=r"pending_key"):
            pending.to_json()
        assert client.resume(pending, ANN).text.startswith("accept")
    keyed, made = asked(url)
    keyed.close()
    with client_for(url, key=None) as keyless:
        refused(keyless, PendingInput.from_json(made.to_json()), received, "pending_key")


def test_a_token_provider_without_a_partition_cannot_be_saved(server):
    url, received = server
    transport = StreamableHTTPTransport(url, token_provider=lambda: "alice")
    with Client(transport, timeout=30, handlers=Handlers(pending_key=KEY)) as client:
        pending = client.call_tool("elicit", {"message": "?"}, on_input="return")
        with pytest.raises(MCPError, match="cache_partition"):
            pending.to_json()
    transport = StreamableHTTPTransport(url, token_provider=lambda: "alice")
    with Client(transport, timeout=30, handlers=Handlers(pending_key=KEY),
                plugins=Plugins(cache=True, cache_partition="user-1")) as client:
        pending = client.call_tool("elicit", {"message": "?"}, on_input="return")
        again = PendingInput.from_json(pending.to_json())
    with Client(StreamableHTTPTransport(url, token_provider=lambda: "alice"), timeout=30,
                handlers=Handlers(pending_key=KEY), plugins=Plugins(cache=True, cache_partition="user-2")) as other:
        refused(other, again, received, "other credentials")


def test_the_state_holds_no_credential_and_its_repr_no_secret(server):
    url, received = server
    with asking(url, token="s3cret-token-of-alice") as (client, pending):
        text = pending.to_json()
        assert "s3cret" not in text and "alice" not in text
        shown = repr(pending)
        assert "s3cret" not in shown and pending.request_state not in shown and KEY.decode() not in shown
        assert "***" in repr(Handlers(pending_key=KEY)) and KEY.decode() not in repr(Handlers(pending_key=KEY))


def test_a_form_answer_that_breaks_the_schema_raises_and_sends_nothing(server):
    url, received = server
    with asking(url) as (client, pending):
        mark = received.mark()
        with pytest.raises(ValueError, match="name"):
            client.resume(pending, {"action": "accept", "content": {"age": "old"}})
        with pytest.raises(ValueError, match="action"):
            client.resume(pending, {"action": "maybe"})
        assert received.since(mark) == []
        assert client.resume(pending, ANN).text.startswith("accept")  # still good for a right answer


def test_a_resumed_call_still_passes_the_policy_gate(server):
    url, received = server
    client, pending = asked(url)
    client.close()
    strict = Policy([Rule("deny", tool="elicit", name="no forms")], default="allow")
    with Client(StreamableHTTPTransport(url, headers={"Authorization": "Bearer alice"}), timeout=30,
                handlers=Handlers(pending_key=KEY), plugins=Plugins(policy=strict)) as gated:
        mark = received.mark()
        with pytest.raises(ToolCallDenied):
            gated.resume(PendingInput.from_json(pending.to_json()), ANN)
        assert [r for r in received.since(mark) if r["method"] == "tools/call"] == []


def test_a_call_that_asks_nothing_returns_its_result(server):
    url, received = server
    with client_for(url) as client:
        assert client.call_tool("echo", {"text": "hi"}, on_input="return").text == "hi"
        with pytest.raises(ValueError, match="on_input"):
            client.call_tool("echo", {"text": "hi"}, on_input="later")


def test_bad_keys_and_texts_are_refused_clearly():
    with pytest.raises(ValueError, match="16 bytes"):
        Client(StreamableHTTPTransport("http://127.0.0.1:9/mcp"), handlers=Handlers(pending_key="short"))
    for text in ("not json", "{}", json.dumps({"kind": "mcpclient.PendingInput", "v": 99})):
        with pytest.raises(PendingInputRefused):
            PendingInput.from_json(text)
    assert mcpclient.PendingInputRefused.__mro__[1] is MCPError and issubclass(PendingInputRefused, ValueError)


def test_a_pool_of_clients_per_user_binds_each_pending_to_its_user(server):
    url, received = server
    pool = mcpclient.ClientPool(lambda user: client_for(url, token=user), max_clients=4)
    try:
        pending = pool.get("alice").call_tool("elicit", {"message": "Who?"}, on_input="return")
        text = pending.to_json()
        pool.open_client("bob")  # opened before: what follows is the resume alone
        refused(pool.get("bob"), PendingInput.from_json(text), received, "other credentials")
        pool.discard("alice")  # a new client for alice (a new worker, a restart): hers resumes it
        assert pool.get("alice").resume(PendingInput.from_json(text), ANN).text.startswith("accept")
    finally:
        pool.close()


def test_a_call_past_the_input_rounds_cap_is_not_sent_again(server):
    url, received = server
    with asking(url) as (client, pending):
        pending.rounds = mcpclient._client.conversation.MAX_INPUT_ROUNDS  # as if the server had asked that often
        mark = received.mark()
        with pytest.raises(mcpclient.ProtocolError, match="more than"):
            client.resume(pending, ANN)
        assert received.since(mark) == []


def test_sampling_and_roots_questions_take_what_their_handlers_return(server):
    url, received = server
    with client_for(url) as client:
        pending = client.call_tool("sample", {"prompt": "capital of France?"}, on_input="return")
        (question,) = pending.questions.values()
        assert question.kind == "sampling" and question.params["messages"][0]["content"]["text"] == "capital of France?"
        answer = mcpclient.CreateMessageResult.from_text("Paris", model="a person")
        assert client.resume(PendingInput.from_json(pending.to_json()), answer).text == "Paris"
        pending = client.call_tool("roots", {}, on_input="return")
        assert [q.kind for q in pending.questions.values()] == ["roots"]
        with pytest.raises(ValueError, match="roots"):
            client.resume(pending, "file:///srv/one")  # one URI alone is not a list
        result = client.resume(pending, ["file:///srv/one", mcpclient.Root(uri="file:///srv/two")])
        assert result.text == "file:///srv/one\nfile:///srv/two"
