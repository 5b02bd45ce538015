"""The HTTP transports against real servers: the official Python SDK and server-everything.

One SDK server per mode for the module: each test opens its own client (and session) on it.
"""

from __future__ import annotations

import json
import threading

import pytest

import mcpclient
from mcpclient import (
    CompletionRef,
    CreateMessageResult,
    ElicitationResult,
    Handlers,
    RPCError,
    SSETransport,
    StreamableHTTPTransport,
)
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

pytestmark = pytest.mark.timeout(120)


def handlers() -> dict:
    return {"handlers": Handlers(
        sampling=lambda request: CreateMessageResult.from_text("model says hi", model="fake-model"),
        elicitation=lambda request: ElicitationResult(action="accept", content={"name": "Ann"}),
        roots=["file:///srv/project"],
    )}


SDK_MODES = {
    "stateful-sse": ("--transport", "streamable-http"),
    "stateful-json": ("--transport", "streamable-http", "--json-response"),
    "stateless-sse": ("--transport", "streamable-http", "--stateless"),
    "stateless-json": ("--transport", "streamable-http", "--stateless", "--json-response"),
    "http+sse": ("--transport", "sse"),
}


@pytest.mark.parametrize("mode", list(SDK_MODES))
def test_sdk_server_tools_resources_prompts_and_completions(shared_sdk_server, mode):
    server = shared_sdk_server(*SDK_MODES[mode])
    with mcpclient.connect(server.url, timeout=20, **handlers()) as client:
        expected = SSETransport if mode == "http+sse" else StreamableHTTPTransport
        assert isinstance(client.transport, expected)
        assert {"echo", "add", "slow"} <= {tool.name for tool in client.list_tools()}
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"result": 5}
        assert client.call_tool("fail").is_error
        (contents,) = client.read_resource("test://text")
        assert contents.text == "hello world"
        assert client.read_resource("test://blob")[0].blob == bytes(range(256))
        assert any(r.uri == "test://text" for r in client.list_resources())
        assert client.list_resource_templates()[0].uri_template == "test://items/{item_id}"
        description, messages = client.get_prompt("greet", {"name": "Bob"})
        assert "Bob" in messages[0].content[0].text
        completion = client.complete(CompletionRef.prompt("greet"), "name", "al")
        assert completion.values == ["alice", "albert"]


@pytest.mark.parametrize("mode", ["stateful-sse", "http+sse"])
def test_sdk_server_requests_sampling_elicitation_and_roots_over_http(shared_sdk_server, mode):
    server = shared_sdk_server(*SDK_MODES[mode])
    with mcpclient.connect(server.url, timeout=20, **handlers()) as client:
        assert client.call_tool("sample", {"prompt": "hello"}).text == "model says hi"
        assert client.call_tool("elicit", {"message": "who?"}).text == 'accept {"age": 30, "name": "Ann"}'
        assert client.call_tool("roots").text == "file:///srv/project"


def test_sdk_server_concurrent_calls_over_streamable_http(shared_sdk_server):
    server = shared_sdk_server(*SDK_MODES["stateful-sse"])
    results: list[str] = []
    with mcpclient.connect(server.url, timeout=20) as client:
        threads = [
            threading.Thread(target=lambda i=i: results.append(client.call_tool("echo", {"text": str(i)}).text))
            for i in range(16)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert sorted(results, key=int) == [str(i) for i in range(16)]


def test_sdk_server_progress_notifications_arrive_on_the_reply_stream(shared_sdk_server):
    server = shared_sdk_server(*SDK_MODES["stateful-sse"])
    seen = []
    with mcpclient.connect(server.url, timeout=20) as client:
        client.call_tool("slow", {"seconds": 0.2, "steps": 3}, on_progress=lambda *a: seen.append(a))
    assert len(seen) == 3


def test_sdk_server_session_is_deleted_on_close(shared_sdk_server):
    server = shared_sdk_server(*SDK_MODES["stateful-sse"])
    client = mcpclient.connect(server.url, timeout=20, protocol="legacy")  # sessions are legacy-only
    transport = client.transport
    session_id = transport.session_id
    assert session_id
    client.close()
    import requests

    reply = requests.post(
        server.url,
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                 "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"},
        timeout=10,
    )
    assert reply.status_code == 404  # the server forgot the session


def test_sdk_server_stateless_refuses_server_requests_with_an_rpc_error(shared_sdk_server):
    server = shared_sdk_server(*SDK_MODES["stateless-json"])
    with mcpclient.connect(server.url, timeout=20, protocol="legacy", **handlers()) as client:
        with pytest.raises(RPCError, match="back-channel"):
            client.call_tool("roots")


@pytest.mark.parametrize("transport", ["streamableHttp", "sse"])
def test_server_everything_over_http(everything_server, transport):
    server = everything_server(transport)
    with mcpclient.connect(server.url, timeout=30, **handlers()) as client:
        expected = SSETransport if transport == "sse" else StreamableHTTPTransport
        assert isinstance(client.transport, expected)
        tools = {tool.name for tool in client.list_tools()}
        assert client.call_tool("echo", {"message": "hi"}).text.endswith("hi")
        assert "5" in client.call_tool("get-sum", {"a": 2, "b": 3}).text
        resources = client.list_resources()
        assert client.read_resource(resources[0].uri)
        prompts = {prompt.name for prompt in client.list_prompts()}
        assert "simple-prompt" in prompts
        client.get_prompt("simple-prompt")
        client.complete(CompletionRef.prompt("completable-prompt"), "department", "E")
        sampling = next((name for name in tools if "sampling" in name), None)
        if sampling:
            assert "model says hi" in client.call_tool(sampling, {"prompt": "hi", "maxTokens": 10}).text
        roots = next((name for name in tools if "roots" in name), None)
        if roots:
            assert "file:///srv/project" in client.call_tool(roots).text
        elicitation = next((name for name in tools if "elicitation" in name), None)
        if elicitation:
            client.call_tool(elicitation)
