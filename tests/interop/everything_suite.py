"""Interop checks against ``@modelcontextprotocol/server-everything`` (the TypeScript reference
server, version pinned in ``tests/node/package.json``).

Like ``suite.py``, each ``check_*`` takes a connected ``Client`` (and the ``Peer`` installed
on it where the server asks or tells the client something) and knows nothing of the
transport. What is expected comes from reading the server's ``dist/`` (tools/, resources/,
prompts/, server/): nothing here needs a network, and the only URLs sent are never fetched.

Some of the server's tools are registered after ``initialize()`` and only for clients that
declared the matching capability, so ``check_tool_list`` and ``check_tool_list_without_
capabilities`` see different lists.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import time

import pytest

import mcpclient
from mcpclient import Client, CompletionRef, ElicitationRequest, ElicitationResult, RequestTimeout, Root, RPCError

from tests.helpers import RELEASED_WITHIN

from .peer import MODEL, WAIT, Peer
from .suite import png_size

SERVER_NAME = "mcp-servers/everything"

#: Registered for every client.
BASE_TOOLS = {
    "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
    "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
    "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
    "simulate-research-query",
}  # fmt: skip
#: Registered after initialize() for a client with roots, sampling and elicitation (form + url).
CONDITIONAL_TOOLS = {
    "get-roots-list", "trigger-sampling-request", "trigger-elicitation-request", "trigger-url-elicitation",
}  # fmt: skip
#: Registered only for clients that declare ``tasks.requests`` for sampling and elicitation
#: (the server runs them as client-side tasks); mcpclient declares no such capability.
TASK_TOOLS = {"trigger-sampling-request-async", "trigger-elicitation-request-async"}

STATIC_DOCUMENTS = {
    "architecture.md", "extension.md", "features.md", "how-it-works.md", "instructions.md",
    "startup.md", "structure.md",
}  # fmt: skip

WEATHER = {
    "New York": {"temperature": 33, "conditions": "Cloudy", "humidity": 82},
    "Chicago": {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82},
    "Los Angeles": {"temperature": 73, "conditions": "Sunny / Clear", "humidity": 48},
}

#: A full answer to trigger-elicitation-request's form.
ELICITED = {
    "name": "Ann Example",
    "check": True,
    "email": "ann@example.com",
    "integer": 7,
    "number": 2.5,
}
#: What mcpclient adds to an accepted ``ELICITED``: the defaults of the fields left out.
ELICITED_DEFAULTS = {
    "firstLine": "It was a dark and stormy night.",
    "untitledSingleSelectEnum": "Monica",
    "untitledMultipleSelectEnum": ["Guitar"],
    "titledSingleSelectEnum": "hero-1",
    "titledMultipleSelectEnum": ["fish-1"],
    "legacyTitledEnum": "pet-1",
}


def url_peer(**kwargs) -> Peer:
    """A peer that accepts form elicitations with ``ELICITED`` and URL ones without content."""

    def answer(request: ElicitationRequest) -> ElicitationResult:
        if request.mode == "url":
            return ElicitationResult(action="accept")
        return ElicitationResult(action="accept", content=ELICITED)

    return Peer(elicitation=answer, elicitation_modes=("form", "url"), **kwargs)


def wait_for_tools(peer: Peer) -> None:
    """The server registers its per-client tools after initialize() and says so."""
    peer.wait_for("notifications/tools/list_changed")


# -- handshake ---------------------------------------------------------------------------------


def check_handshake(client: Client) -> None:
    assert client.protocol_version == "2025-11-25"  # the TypeScript SDK 1.x speaks no newer one
    info = client.server_info
    assert info is not None
    assert (info.name, info.title, info.version) == (SERVER_NAME, "Everything Reference Server", "2.0.0")
    caps = client.server_capabilities
    assert caps["tools"] == {"listChanged": True}
    assert caps["prompts"] == {"listChanged": True}
    assert caps["resources"] == {"subscribe": True, "listChanged": True}
    assert caps["logging"] == {} and caps["completions"] == {}
    assert caps["tasks"]["requests"] == {"tools": {"call": {}}}
    assert client.instructions is not None
    assert client.instructions.startswith("# Everything Server")
    assert "get-roots-list" in client.instructions


def check_ping(client: Client) -> None:
    assert client.ping() is None


# -- tools ------------------------------------------------------------------------------------


def check_tool_list(client: Client, peer: Peer) -> None:
    """For a client with sampling, elicitation (form and URL) and roots."""
    wait_for_tools(peer)
    tools = {tool.name: tool for tool in client.list_tools()}
    assert set(tools) == BASE_TOOLS | CONDITIONAL_TOOLS
    assert not TASK_TOOLS & set(tools)
    echo = tools["echo"]
    assert (echo.title, echo.description) == ("Echo Tool", "Echoes back the input string")
    assert echo.input_schema == {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"message": {"type": "string", "description": "Message to echo"}},
        "required": ["message"],
    }
    assert echo.annotations == {
        "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False
    }  # fmt: skip
    assert echo.execution == {"taskSupport": "forbidden"}
    assert tools["get-structured-content"].output_schema == {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "temperature": {"type": "number", "description": "Temperature in celsius"},
            "conditions": {"type": "string", "description": "Weather conditions description"},
            "humidity": {"type": "number", "description": "Humidity percentage"},
        },
        "required": ["temperature", "conditions", "humidity"],
        "additionalProperties": False,
    }
    assert tools["simulate-research-query"].execution == {"taskSupport": "required"}
    assert tools["trigger-url-elicitation"].input_schema["required"] == ["url"]


def check_tool_list_without_capabilities(client: Client) -> None:
    """A client that declared nothing gets no sampling, elicitation or roots tools."""
    assert {tool.name for tool in client.list_tools()} == BASE_TOOLS


def check_echo(client: Client) -> None:
    message = 'héllo 世界 🌍 "quoted"\nnext line'
    result = client.call_tool("echo", {"message": message})
    assert (result.text, result.is_error) == (f"Echo: {message}", False)


def check_get_sum(client: Client) -> None:
    assert client.call_tool("get-sum", {"a": 1.5, "b": 2}).text == "The sum of 1.5 and 2 is 3.5."
    assert client.call_tool("get-sum", {"a": -7, "b": 7}).text == "The sum of -7 and 7 is 0."


def check_invalid_arguments(client: Client) -> None:
    result = client.call_tool("get-sum", {"a": "one", "b": 2})
    assert result.is_error
    assert "a" in result.text


def check_tiny_image(client: Client) -> None:
    result = client.call_tool("get-tiny-image")
    assert [part.type for part in result.content] == ["text", "image", "text"]
    before, image, after = result.content
    assert before.text == "Here's the image you requested:"
    assert after.text == "The image above is the MCP logo."
    assert image.mime_type == "image/png"
    assert png_size(image.decoded()) == (20, 20)


def check_annotated_message(client: Client) -> None:
    expected = {
        "error": ("Error: Operation failed", {"priority": 1, "audience": ["user", "assistant"]}),
        "success": ("Operation completed successfully", {"priority": 0.7, "audience": ["user"]}),
        "debug": ("Debug: Cache hit ratio 0.95, latency 150ms", {"priority": 0.3, "audience": ["assistant"]}),
    }
    for message_type, (text, expected_annotations) in expected.items():
        [part] = client.call_tool("get-annotated-message", {"messageType": message_type}).content
        assert (part.type, part.text, part.annotations) == ("text", text, expected_annotations)

    result = client.call_tool("get-annotated-message", {"messageType": "success", "includeImage": True})
    text, image = result.content
    assert text.text == "Operation completed successfully"
    assert image.type == "image" and png_size(image.decoded()) == (20, 20)
    assert image.annotations == {"priority": 0.5, "audience": ["user"]}


def check_get_env(client: Client, expected: dict[str, str]) -> None:
    """``expected``: variables the test gave the server's environment."""
    env = json.loads(client.call_tool("get-env").text)
    assert isinstance(env, dict)
    for key, value in expected.items():
        assert env.get(key) == value


def check_resource_links(client: Client) -> None:
    result = client.call_tool("get-resource-links", {"count": 4})
    intro, *links = result.content
    assert intro.text == "Here are 4 resource links to resources available in this server:"
    assert [(link.type, link.uri, link.name) for link in links] == [
        ("resource_link", "demo://resource/dynamic/blob/1", "Blob Resource 1"),
        ("resource_link", "demo://resource/dynamic/text/2", "Text Resource 2"),
        ("resource_link", "demo://resource/dynamic/blob/3", "Blob Resource 3"),
        ("resource_link", "demo://resource/dynamic/text/4", "Text Resource 4"),
    ]
    # Extra link fields survive in ``raw``. (The server's blobs claim text/plain, hence "plaintext".)
    assert links[0].raw["description"] == "Resource 1: plaintext resource"
    for n, link in enumerate(links, 1):
        [contents] = client.read_resource(link.uri)  # a link is followed with resources/read
        assert contents.uri == link.uri
        body = contents.text if contents.text is not None else contents.blob.decode()
        assert body.startswith(f"Resource {n}: This is a ")


def check_resource_reference(client: Client) -> None:
    result = client.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 2})
    assert [part.type for part in result.content] == ["text", "resource", "text"]
    before, embedded, after = result.content
    assert before.text == "Returning resource reference for Resource 2:"
    assert after.text == "You can access this resource using the URI: demo://resource/dynamic/text/2"
    resource = embedded.resource
    assert (resource.uri, resource.mime_type, resource.blob) == ("demo://resource/dynamic/text/2", "text/plain", None)
    assert resource.text.startswith("Resource 2: This is a plaintext resource created at ")

    result = client.call_tool("get-resource-reference", {"resourceType": "Blob", "resourceId": 3})
    resource = result.content[1].resource
    assert (resource.uri, resource.text) == ("demo://resource/dynamic/blob/3", None)
    assert resource.blob.startswith(b"Resource 3: This is a base64 blob created at ")

    bad = client.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 0})
    assert bad.is_error and "Invalid resourceId" in bad.text


def check_structured_content(client: Client) -> None:
    for city, weather in WEATHER.items():
        result = client.call_tool("get-structured-content", {"location": city})
        assert result.structured_content == weather
        assert json.loads(result.text) == weather  # the backward-compatible text block


def check_long_running_operation(client: Client) -> None:
    """With ``on_progress`` the server reports each step (on dispatch threads, so the reports
    may still be arriving when the call returns)."""
    reports: list[tuple[float, float | None, str | None]] = []
    done = threading.Event()

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))
        if len(reports) == 3:
            done.set()

    result = client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3}, on_progress=on_progress)
    assert result.text == "Long running operation completed. Duration: 0.3 seconds, Steps: 3."
    assert done.wait(WAIT), f"progress reports: {reports}"
    assert sorted(reports) == [(1.0, 3.0, None), (2.0, 3.0, None), (3.0, 3.0, None)]


def check_timeout(client: Client) -> None:
    started = time.monotonic()
    with pytest.raises(RequestTimeout):
        client.call_tool("trigger-long-running-operation", {"duration": 30, "steps": 3}, timeout=0.3)
    assert time.monotonic() - started < 0.3 + RELEASED_WITHIN  # (the operation runs 30 s)
    assert client.call_tool("echo", {"message": "after"}).text == "Echo: after"


def check_task_only_tool(client: Client) -> None:
    """A plain ``call_tool`` of simulate-research-query, which requires task execution, gets the
    server's error result naming the requirement (the task path is in test_everything_tasks)."""
    result = client.call_tool("simulate-research-query", {"topic": "python"})
    assert result.is_error
    assert "requires task augmentation" in result.text


def check_gzip_resource(client: Client, peer: Peer) -> None:
    """gzip-file-as-resource, fed a data: URI so nothing is fetched, registers session resources."""
    payload = "gzip me, please\n" * 20
    data_uri = "data:text/plain;base64," + base64.b64encode(payload.encode()).decode()

    result = client.call_tool(
        "gzip-file-as-resource", {"name": "inline.txt.gz", "data": data_uri, "outputType": "resource"}
    )
    [part] = result.content
    assert part.type == "resource"
    assert (part.resource.uri, part.resource.mime_type) == ("demo://resource/session/inline.txt.gz", "application/gzip")
    assert gzip.decompress(part.resource.blob).decode() == payload

    result = client.call_tool("gzip-file-as-resource", {"name": "linked.txt.gz", "data": data_uri})
    [link] = result.content
    assert (link.type, link.uri, link.name, link.mime_type) == (
        "resource_link", "demo://resource/session/linked.txt.gz", "linked.txt.gz", "application/gzip"
    )  # fmt: skip
    [contents] = client.read_resource(link.uri)
    assert gzip.decompress(contents.blob).decode() == payload

    peer.wait_for("notifications/resources/list_changed")
    listed = {r.uri: r for r in client.list_resources()}
    assert listed["demo://resource/session/linked.txt.gz"].mime_type == "application/gzip"
    assert "demo://resource/session/inline.txt.gz" in listed


def check_simulated_logging(client: Client, peer: Peer) -> None:
    client.set_log_level("debug")
    started = client.call_tool("toggle-simulated-logging")
    assert started.text.startswith("Started simulated, random-leveled logging")
    try:
        [params] = peer.wait_for("notifications/message", lambda p: "message" in str(p.get("data")))
        assert params["level"] in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
        assert params["data"].lower().startswith(params["level"])
    finally:
        stopped = client.call_tool("toggle-simulated-logging")
    assert stopped.text.startswith("Stopped simulated logging")


def check_subscriber_updates(client: Client, peer: Peer) -> None:
    uri = "demo://resource/dynamic/text/1"
    client.subscribe_resource(uri)
    started = client.call_tool("toggle-subscriber-updates")
    assert started.text.startswith("Started simulated resource updated notifications")
    try:
        peer.wait_for("notifications/resources/updated", lambda p: p.get("uri") == uri)
    finally:
        stopped = client.call_tool("toggle-subscriber-updates")
        client.unsubscribe_resource(uri)
    assert stopped.text.startswith("Stopped simulated resource updates")


# -- what the server asks of the client --------------------------------------------------------


def wait_for_roots_sync(peer: Peer) -> None:
    """The server fetches the roots once, 350 ms after initialize(), and logs that it did."""
    peer.wait_for("notifications/message", lambda p: str(p.get("data")).startswith("Roots updated: "))


def _roots_synced(peer: Peer, count: int, *, times: int = 1) -> None:
    peer.wait_for(
        "notifications/message",
        lambda p: p.get("data") == f"Roots updated: {count} root(s) received from client",
        count=times,
    )


def check_roots(client: Client, peer: Peer) -> None:
    """The server asks for roots on its own after initialize(), and again on list_changed."""
    _roots_synced(peer, len(peer.roots))
    text = client.call_tool("get-roots-list").text
    assert text.startswith(f"Current MCP Roots ({len(peer.roots)} total):")
    for n, root in enumerate(peer.roots, 1):
        root = root if isinstance(root, Root) else Root(uri=root)
        assert f"{n}. {root.name or 'Unnamed Root'}\n   URI: {root.uri}" in text

    client.set_roots([Root(uri="file:///srv/one", name="one"), "file:///srv/two"])
    _roots_synced(peer, 2)
    text = client.call_tool("get-roots-list").text
    assert text.startswith("Current MCP Roots (2 total):")
    assert "1. one\n   URI: file:///srv/one" in text
    assert "2. Unnamed Root\n   URI: file:///srv/two" in text


def check_sampling(client: Client, peer: Peer) -> None:
    wait_for_tools(peer)
    result = client.call_tool("trigger-sampling-request", {"prompt": "Tell me a joke", "maxTokens": 42})
    head, _, body = result.text.partition("\n")
    assert head == "LLM sampling result: "
    assert json.loads(body) == {
        "model": MODEL,
        "stopReason": "endTurn",
        "role": "assistant",
        "content": {"type": "text", "text": peer.reply},
    }
    [request] = peer.sampling_requests
    assert request.system_prompt == "You are a helpful test server."
    assert (request.max_tokens, request.temperature) == (42, 0.7)
    assert [(m.role, m.content) for m in request.messages] == [
        ("user", {"type": "text", "text": "Resource trigger-sampling-request context: Tell me a joke"})
    ]


def check_elicitation_accepted(client: Client, peer: Peer) -> None:
    """``peer`` must accept with ``ELICITED``."""
    wait_for_tools(peer)
    result = client.call_tool("trigger-elicitation-request")
    texts = [part.text for part in result.content]
    assert texts[0] == "✅ User provided the requested information!"
    assert texts[1] == (
        "User inputs:\n- Name: Ann Example\n- Agreed to terms: true\n- Email: ann@example.com\n"
        "- Favorite Integer: 7\n- Favorite Number: 2.5"
    )
    raw = json.loads(texts[2].split("Raw result: ", 1)[1])
    assert raw["action"] == "accept"
    # mcpclient filled in the schema's defaults for the fields the answer left out (SEP-1034).
    assert raw["content"] == {**ELICITED_DEFAULTS, **ELICITED}
    [request] = peer.elicitation_requests
    assert request.mode == "form"
    assert request.message == "Please provide inputs for the following fields:"
    schema = request.requested_schema
    assert schema["required"] == ["name"]
    assert len(schema["properties"]) == 13
    # Passed through verbatim, including the non-standard enumNames.
    assert schema["properties"]["legacyTitledEnum"]["enumNames"] == ["Cats", "Dogs", "Birds", "Fish", "Reptiles"]
    assert schema["properties"]["titledMultipleSelectEnum"]["items"]["anyOf"][0] == {"const": "fish-1", "title": "Tuna"}


def check_elicitation_refused(client: Client, peer: Peer, action: str) -> None:
    """``peer`` must answer ``action`` ("decline" or "cancel")."""
    wait_for_tools(peer)
    result = client.call_tool("trigger-elicitation-request")
    first = result.content[0].text
    expected = {
        "decline": "❌ User declined to provide the requested information.",
        "cancel": "⚠️ User cancelled the elicitation dialog.",
    }
    assert first == expected[action]
    assert json.loads(result.content[1].text.split("Raw result: ", 1)[1]) == {"action": action}


def check_url_elicitation(client: Client, peer: Peer) -> None:
    """``peer`` must be a ``url_peer()``."""
    wait_for_tools(peer)
    url = "https://example.com/consent"
    result = client.call_tool("trigger-url-elicitation", {"url": url, "elicitationId": "consent-1"})
    assert result.content[0].text == (
        "✅ User completed the URL elicitation flow.\nElicitation ID: consent-1\nURL: " + url
    )
    [request] = peer.elicitation_requests
    assert (request.mode, request.url, request.elicitation_id) == ("url", url, "consent-1")
    assert request.message == "Please open the link to complete this action."
    assert request.requested_schema is None

    # The error path: -32042 names the URL elicitation to complete first; a retry proceeds.
    arguments = {"url": url, "elicitationId": "consent-2", "errorPath": True}
    with pytest.raises(RPCError) as caught:
        client.call_tool("trigger-url-elicitation", arguments)
    assert caught.value.code == -32042
    [required] = caught.value.data["elicitations"]
    assert (required["mode"], required["url"]) == ("url", "https://modelcontextprotocol.io")
    retried = client.call_tool("trigger-url-elicitation", arguments)
    assert retried.content[0].text.startswith("✅ User completed the URL elicitation flow.")


# -- resources ---------------------------------------------------------------------------------


def check_resources(client: Client) -> None:
    resources = {r.uri: r for r in client.list_resources()}
    static = {uri.rsplit("/", 1)[1] for uri in resources if uri.startswith("demo://resource/static/document/")}
    assert static == STATIC_DOCUMENTS
    features = resources["demo://resource/static/document/features.md"]
    assert (features.name, features.mime_type) == ("features.md", "text/markdown")
    assert features.description == "Static document file exposed from /docs: features.md"

    [contents] = client.read_resource(features.uri)
    assert (contents.uri, contents.mime_type, contents.blob) == (features.uri, "text/markdown", None)
    assert contents.text.startswith("# Everything Server - Features")


def check_resource_templates(client: Client) -> None:
    templates = {t.uri_template: t for t in client.list_resource_templates()}
    assert set(templates) == {
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    }
    text = templates["demo://resource/dynamic/text/{resourceId}"]
    assert (text.name, text.mime_type) == ("Dynamic Text Resource", "text/plain")
    blob = templates["demo://resource/dynamic/blob/{resourceId}"]
    assert (blob.name, blob.mime_type) == ("Dynamic Blob Resource", "application/octet-stream")

    [contents] = client.read_resource("demo://resource/dynamic/text/5")
    assert contents.text.startswith("Resource 5: This is a plaintext resource created at ")
    [contents] = client.read_resource("demo://resource/dynamic/blob/6")
    assert contents.text is None
    assert contents.blob.startswith(b"Resource 6: This is a base64 blob created at ")


def check_read_unknown_resource(client: Client) -> None:
    with pytest.raises(RPCError) as caught:
        client.read_resource("demo://resource/dynamic/text/not-a-number")
    assert caught.value.method == "resources/read"


# -- prompts and completions ---------------------------------------------------------------------


def check_prompts(client: Client) -> None:
    prompts = {p.name: p for p in client.list_prompts()}
    assert set(prompts) == {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}
    assert (prompts["simple-prompt"].title, prompts["simple-prompt"].arguments) == ("Simple Prompt", [])
    args = prompts["args-prompt"]
    assert args.description == "A prompt with two arguments, one required and one optional"
    assert [(a.name, a.description, a.required) for a in args.arguments] == [
        ("city", "Name of the city", True),
        ("state", None, False),
    ]
    team = prompts["completable-prompt"]
    assert team.title == "Team Management"
    assert [a.name for a in team.arguments] == ["department", "name"]
    assert [a.name for a in prompts["resource-prompt"].arguments] == ["resourceType", "resourceId"]


def check_get_prompt(client: Client) -> None:
    def texts(messages):
        return [(m.role, [(p.type, p.text) for p in m.content]) for m in messages]

    _, messages = client.get_prompt("simple-prompt")
    assert texts(messages) == [("user", [("text", "This is a simple prompt without arguments.")])]
    _, messages = client.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
    assert texts(messages) == [("user", [("text", "What's weather in Paris, Texas?")])]
    _, messages = client.get_prompt("args-prompt", {"city": "Zürich"})
    assert texts(messages) == [("user", [("text", "What's weather in Zürich?")])]
    _, messages = client.get_prompt("completable-prompt", {"department": "Sales", "name": "Eve"})
    assert texts(messages) == [("user", [("text", "Please promote Eve to the head of the Sales team.")])]


def check_prompt_with_resource(client: Client) -> None:
    _, messages = client.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "2"})
    intro, embedded = messages
    assert intro.content[0].text == (
        "This prompt includes the Text resource with id: 2. Please analyze the following resource:"
    )
    [part] = embedded.content
    assert part.type == "resource"
    assert part.resource.uri == "demo://resource/dynamic/text/2"
    assert part.resource.text.startswith("Resource 2: This is a plaintext resource")

    _, messages = client.get_prompt("resource-prompt", {"resourceType": "Blob", "resourceId": "3"})
    resource = messages[1].content[0].resource
    assert resource.uri == "demo://resource/dynamic/blob/3"
    assert resource.blob.startswith(b"Resource 3: This is a base64 blob")


def check_completions(client: Client) -> None:
    team = CompletionRef.prompt("completable-prompt")
    completion = client.complete(team, "department", "S")
    assert (completion.values, completion.total, completion.has_more) == (["Sales", "Support"], 2, False)
    assert client.complete(team, "name", "", context={"department": "Engineering"}).values == [
        "Alice", "Bob", "Charlie"
    ]  # fmt: skip
    assert client.complete(team, "name", "I", context={"department": "Marketing"}).values == ["Iris"]
    assert client.complete(team, "name", "A").values == []  # no department given
    assert client.complete(CompletionRef.prompt("resource-prompt"), "resourceType", "B").values == ["Blob"]
    template = CompletionRef.resource("demo://resource/dynamic/text/{resourceId}")
    assert client.complete(template, "resourceId", "7").values == ["7"]
    assert client.complete(template, "resourceId", "x").values == []


def check_ai_tools(client: Client) -> None:
    tools = {tool.name: tool for tool in mcpclient.tools(client)}
    assert tools["echo"].execute('{"message": "from an LLM"}') == "Echo: from an LLM"
    assert tools["get-sum"].schema["required"] == ["a", "b"]
    assert tools["get-sum"].execute({"a": 2, "b": 3}) == "The sum of 2 and 3 is 5."
