"""URL-mode elicitation, its completion notices, -32042 errors, and form answers checked
against the requested schema."""

from __future__ import annotations

import logging
import pickle
import socket
import time

import pytest

from mcpclient import Client, ElicitationRequest, ElicitationResult, RPCError, URLElicitationRequired
from mcpclient._client.elicitation import form_answer_problems
from tests.doubles import ScriptedServer, error
from tests.helpers import wait_for

URL = "https://auth.example.com/connect?state=Zm9v&flow=bank"


def ask(transport, request_id, params):
    transport.push({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params})
    assert wait_for(lambda: any(m.get("id") == request_id and "method" not in m for m in transport.sent))
    return next(m for m in transport.sent if m.get("id") == request_id and "method" not in m)


def url_request(elicitation_id="el-1"):
    return {"mode": "url", "message": "Connect your bank", "url": URL, "elicitationId": elicitation_id}


@pytest.fixture
def no_network(monkeypatch):
    """Fail the test if anything opens a network connection."""
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("no network in this test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts


def open_client(transport, handler, modes=("form", "url")):
    server = ScriptedServer(transport)
    client = Client(transport, timeout=5)
    client.set_elicitation_handler(handler, modes=modes)
    client.initialize()
    return server, client


# -- URL mode ----------------------------------------------------------------------------------


def test_the_handler_gets_the_full_url_and_the_client_fetches_nothing(transport, no_network):
    seen: list[ElicitationRequest] = []
    server, client = open_client(transport, lambda req: seen.append(req) or ElicitationResult(action="accept"))
    reply = ask(transport, 1, url_request())
    assert reply["result"] == {"action": "accept"}
    (request,) = seen
    assert (request.mode, request.url, request.elicitation_id) == ("url", URL, "el-1")
    assert no_network == []
    client.close()
    server.stop()


def test_a_url_mode_answer_never_carries_content(transport):
    server, client = open_client(transport, lambda req: ElicitationResult(action="accept", content={"secret": "x"}))
    assert ask(transport, 1, url_request())["result"] == {"action": "accept"}
    client.close()
    server.stop()


def test_an_undeclared_mode_is_refused_with_invalid_params(transport):
    called = []
    server, client = open_client(transport, lambda req: called.append(req), modes=("form",))
    reply = ask(transport, 1, url_request())
    assert reply["error"]["code"] == -32602 and "url" in reply["error"]["message"]
    assert called == []
    client.close()
    server.stop()


def test_completion_notices_reach_the_handler_once_and_only_for_known_ids(transport):
    done = []
    server, client = open_client(transport, lambda req: ElicitationResult(action="accept"))
    client.set_elicitation_complete_handler(done.append)
    ask(transport, 1, url_request("el-1"))
    for elicitation_id in ("unknown", "el-1", "el-1"):
        transport.push({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                        "params": {"elicitationId": elicitation_id}})
    transport.push({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {}})
    assert wait_for(lambda: done == ["el-1"])
    time.sleep(0.1)
    assert done == ["el-1"]
    client.close()
    server.stop()


def test_url_elicitation_required_is_raised_with_its_elicitations(transport):
    data = {"elicitations": [url_request("el-9"), {"mode": "url", "message": "no url"}]}
    server = ScriptedServer(transport, {
        "tools/call": lambda p, m: (_ for _ in ()).throw(error(m, -32042, "This request requires more information.", data)),
    })
    done = []
    with Client(transport, timeout=5) as client:
        client.set_elicitation_complete_handler(done.append)
        with pytest.raises(URLElicitationRequired) as caught:
            client.call_tool("bank_balance")
        err = caught.value
        assert isinstance(err, RPCError) and err.code == -32042 and err.method == "tools/call"
        (request,) = err.elicitations
        assert (request.mode, request.url, request.elicitation_id, request.message) == (
            "url", URL, "el-9", "Connect your bank")
        copy = pickle.loads(pickle.dumps(err))
        assert type(copy) is URLElicitationRequired and copy.elicitations == err.elicitations
        transport.push({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                        "params": {"elicitationId": "el-9"}})
        assert wait_for(lambda: done == ["el-9"]), "ids from the error are known ids"
    server.stop()


def test_other_errors_stay_plain_rpc_errors(transport):
    server = ScriptedServer(transport, {"tools/call": lambda p, m: (_ for _ in ()).throw(error(m, -32603, "boom"))})
    with Client(transport, timeout=5) as client:
        with pytest.raises(RPCError) as caught:
            client.call_tool("x")
        assert type(caught.value) is RPCError
    server.stop()


# -- form answers against the schema -----------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 10},
        "email": {"type": "string", "format": "email"},
        "born": {"type": "string", "format": "date"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number"},
        "ok": {"type": "boolean"},
        "size": {"type": "string", "enum": ["s", "m", "l"]},
        "colour": {"type": "string", "oneOf": [{"const": "red", "title": "Red"}, {"const": "blue", "title": "Blue"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
    },
    "required": ["name"],
}


def test_a_matching_answer_has_no_problems():
    answer = {"name": "Ada", "email": "ada@example.org", "born": "1815-12-10", "age": 36, "score": 9.5,
              "ok": True, "size": "m", "colour": "blue", "tags": ["a", "b"], "extra": "allowed"}
    assert form_answer_problems(SCHEMA, answer) == []


@pytest.mark.parametrize("answer, problem", [
    ({}, "'name' is required"),
    ({"name": 3}, "'name' must be a string"),
    ({"name": ""}, "at least 1 characters"),
    ({"name": "x" * 11}, "at most 10 characters"),
    ({"name": "a", "email": "not-an-email"}, "valid email"),
    ({"name": "a", "born": "10/12/1815"}, "valid date"),
    ({"name": "a", "age": 3.5}, "must be an integer"),
    ({"name": "a", "age": True}, "must be an integer, got True"),
    ({"name": "a", "age": 200}, "at most 150"),
    ({"name": "a", "score": "9"}, "must be a number"),
    ({"name": "a", "ok": "yes"}, "must be a boolean"),
    ({"name": "a", "size": "xl"}, "must be one of"),
    ({"name": "a", "colour": "green"}, "must be one of"),
    ({"name": "a", "tags": ["c"]}, "not one of"),
    ({"name": "a", "tags": ["a", "b", "a"]}, "at most 2 items"),
])
def test_each_kind_of_mismatch_is_found(answer, problem):
    problems = form_answer_problems(SCHEMA, answer)
    assert any(problem in p for p in problems), problems


def test_a_mismatched_accept_is_sent_as_cancel_and_logged(transport, caplog):
    server, client = open_client(transport, lambda req: ElicitationResult(action="accept", content={"age": "old"}))
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        reply = ask(transport, 1, {"message": "who?", "requestedSchema": SCHEMA})
    assert reply["result"] == {"action": "cancel"}
    assert "field 'name' is required" in caplog.text and "field 'age' must be an integer" in caplog.text
    assert "'who?'" in caplog.text and "the user cancelled" in caplog.text  # which request, and what the server sees
    client.close()
    server.stop()


def test_defaults_are_filled_before_the_answer_is_checked(transport):
    schema = {"type": "object", "properties": {"size": {"type": "string", "enum": ["s", "m"], "default": "m"}},
              "required": ["size"]}
    server, client = open_client(transport, lambda req: ElicitationResult(action="accept", content={}))
    assert ask(transport, 1, {"message": "size?", "requestedSchema": schema})["result"] == {
        "action": "accept", "content": {"size": "m"}}
    client.close()
    server.stop()


def test_decline_and_cancel_are_sent_unchecked(transport):
    server, client = open_client(transport, lambda req: ElicitationResult(action="decline"))
    assert ask(transport, 1, {"message": "who?", "requestedSchema": SCHEMA})["result"] == {"action": "decline"}
    client.close()
    server.stop()
