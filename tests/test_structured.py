"""Structured tool output checked against the tool's outputSchema."""

from __future__ import annotations

import logging

import pytest

from mcpclient import Client, OutputValidationError, Plugins, ProtocolError
from tests.doubles import ScriptedServer

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"n": {"type": "integer"}, "items": {"type": "array", "prefixItems": [{"type": "string"}]}},
    "required": ["n"],
    "unevaluatedProperties": False,
}
TOOLS = [
    {"name": "typed", "inputSchema": {"type": "object"}, "outputSchema": SCHEMA},
    {"name": "remote", "inputSchema": {}, "outputSchema": {"$ref": "https://example.invalid/schema.json"}},
    {"name": "untyped", "inputSchema": {}},
]


def make(transport, structured, is_error=False):
    result = {"content": [{"type": "text", "text": "x"}], "isError": is_error}
    if structured is not None:
        result["structuredContent"] = structured
    return ScriptedServer(transport, {"tools/list": lambda p, m: {"tools": TOOLS},
                                      "tools/call": lambda p, m: result})


def test_matching_output_passes(transport):
    server = make(transport, {"n": 1, "items": ["a"]})
    with Client(transport, timeout=5) as client:
        client.list_tools()
        assert client.call_tool("typed").structured_content == {"n": 1, "items": ["a"]}
    server.stop()


@pytest.mark.parametrize("structured", [{"n": "one"}, {}, {"n": 1, "extra": True}, {"n": 1, "items": [5]}, None])
def test_mismatching_output_raises_in_strict_mode(transport, structured):
    server = make(transport, structured)
    with Client(transport, timeout=5) as client:
        client.list_tools()
        with pytest.raises(OutputValidationError) as info:
            client.call_tool("typed")
    assert isinstance(info.value, ProtocolError)
    assert info.value.tool == "typed" and info.value.errors
    assert info.value.result.content[0].text == "x"
    server.stop()


def test_lenient_mode_logs_and_returns(transport, caplog):
    server = make(transport, {"n": "one"})
    with Client(transport, timeout=5, plugins=Plugins(output_validation="lenient")) as client:
        client.list_tools()
        with caplog.at_level(logging.WARNING, logger="mcpclient"):
            assert client.call_tool("typed").structured_content == {"n": "one"}
    assert any("outputSchema" in r.getMessage() for r in caplog.records)
    server.stop()


def test_error_results_are_never_validated(transport):
    server = make(transport, {"n": "wrong"}, is_error=True)
    with Client(transport, timeout=5) as client:
        client.list_tools()
        assert client.call_tool("typed").is_error
    server.stop()


def test_a_network_ref_is_never_fetched(transport, monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise AssertionError("validation tried to reach the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    server = make(transport, {"n": 1})
    with Client(transport, timeout=5) as client:
        client.list_tools()
        with pytest.raises(OutputValidationError, match="cannot be applied"):
            client.call_tool("remote")
    server.stop()


def test_tools_without_a_schema_or_not_listed_are_passed_through(transport):
    server = make(transport, {"anything": [1, 2]})
    with Client(transport, timeout=5) as client:
        assert client.call_tool("typed").structured_content == {"anything": [1, 2]}  # never listed
        client.list_tools()
        assert client.call_tool("untyped").structured_content == {"anything": [1, 2]}
    server.stop()


def test_an_unknown_mode_is_refused(transport):
    with pytest.raises(ValueError, match="output_validation"):
        Client(transport, plugins=Plugins(output_validation="sometimes"))


def _bad_result():
    from mcpclient import types as t

    return t.ToolResult(content=[], structured_content={"n": "one"})


def test_without_jsonschema_strict_mode_says_once_per_process_that_it_checks_nothing(transport, caplog, monkeypatch):
    """Strict validation with the library missing used to be silent (one debug line): issue #30."""
    from mcpclient.plugins import validation as _structured

    monkeypatch.setitem(__import__("sys").modules, "jsonschema.validators", None)  # import fails
    monkeypatch.setattr(_structured, "_missing_library_warned", __import__("threading").Event())
    server = make(transport, {"n": "one"})  # would fail validation if it ran
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        with Client(transport, timeout=5) as client:
            tools = client.list_tools()
            assert client.call_tool("typed").structured_content == {"n": "one"}
            assert client.call_tool("typed").structured_content == {"n": "one"}
        other = _structured.OutputValidator("lenient")  # another client's validator in the same process
        other.learn(tools)
        assert other.check("typed", _bad_result()).structured_content == {"n": "one"}
    warned = [r for r in caplog.records if "checks nothing" in r.getMessage()]
    assert len(warned) == 1
    assert "mcpclient[validation]" in warned[0].getMessage() and "'strict'" in warned[0].getMessage()
    server.stop()
