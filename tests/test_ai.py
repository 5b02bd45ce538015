"""mcpclient.tools(): server tools as callables for an LLM loop."""

from __future__ import annotations

import pytest

import mcpclient
from mcpclient import Client, ToolError
from tests.doubles import ScriptedServer

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "$defs": {"x": {}}}


def call(params, message):
    if params["name"] == "bad":
        return {"content": [{"type": "text", "text": "it broke"}], "isError": True}
    return {"content": [{"type": "text", "text": f"q={params['arguments'].get('q')}"}]}


@pytest.fixture
def client(transport):
    server = ScriptedServer(transport, {
        "tools/list": lambda p, m: {"tools": [{"name": "search", "description": "Find", "inputSchema": SCHEMA},
                                              {"name": "bad", "inputSchema": {}}]},
        "tools/call": call,
    })
    with Client(transport, timeout=5) as client:
        yield client
    server.stop()


def test_tools_pass_name_description_and_schema_verbatim(client):
    search, bad = mcpclient.tools(client)
    assert (search.name, search.description) == ("search", "Find")
    assert search.schema == SCHEMA
    assert bad.description == ""


def test_execute_returns_the_text(client):
    search = mcpclient.tools(client)[0]
    assert search.execute({"q": "cats"}) == "q=cats"
    assert search.execute('{"q": "dogs"}') == "q=dogs"


def test_execute_raises_tool_error_on_is_error(client):
    bad = mcpclient.tools(client)[1]
    with pytest.raises(ToolError, match="it broke") as info:
        bad.execute({})
    assert info.value.result.is_error


def test_execute_rejects_arguments_that_are_not_a_json_object(client):
    search = mcpclient.tools(client)[0]
    with pytest.raises(ToolError, match="JSON"):
        search.execute("{not json")
    with pytest.raises(ToolError, match="object"):
        search.execute("[1, 2]")
