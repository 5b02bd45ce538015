"""Interop checks against the official-SDK test server (``tests/servers/sdk_server.py``).

Each ``check_*`` function takes a connected ``Client`` (and, where the server asks the client
something, the ``Peer`` installed on it) and asserts on what a real server sends. Nothing here
knows the transport: a test module builds the client for stdio, Streamable HTTP or SSE and
calls these. The expected values are those documented in the server's docstring.

What each check needs from its client:

* most: an initialized client, handlers or not;
* ``check_sampling``, ``check_elicitation_*``, ``check_roots``, ``check_log_notification``:
  a ``Peer`` installed before ``initialize()`` (``Connections.open(peer)``), and a transport
  on which the server can reach the client (not ``--stateless`` or ``--json-response``);
* ``check_elicitation_without_handler``: a client with no elicitation handler;
* ``check_timeout_cancels``: the server started with ``SDK_SERVER_EVENTS`` set;
* ``check_resource_subscription``, ``check_tools_list_changed``, ``check_cache``: a client of
  their own (``Client(cache=True)`` for the last) with a ``Peer`` recording notifications, as
  modern clients must wait for ``subscriptions/listen`` to be acknowledged.

A client shared by several tests must not start a dispatch thread during one of them (the
thread-leak check fails it): share only clients the server never sends anything unasked, or
open them with ``max_dispatch=1`` and make the server send one message up front (see
``test_sdk_stdio.py``).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import struct
import threading
import time
from typing import Any, Callable

import attrs
import pytest

import mcpclient
from mcpclient import (
    Client,
    CompletionRef,
    ElicitationResult,
    RequestTimeout,
    Root,
    StructuredOutputError,
    ToolError,
)

from tests.helpers import RELEASED_WITHIN

from .peer import WAIT, Peer

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: The server speaks both eras; which one is used depends on what the client asks for first.
PROTOCOL_VERSIONS = ("2025-11-25", "2026-07-28")

TOOL_NAMES = {
    "echo", "add", "image", "fail", "slow", "sample", "elicit", "roots", "log", "mixed", "counter",
    "touch", "toggle_tool", "forecast",
}  # fmt: skip


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG; fails the test if ``data`` is not one."""
    assert data[:8] == PNG_SIGNATURE, f"not a PNG: {data[:16]!r}"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


# -- handshake ------------------------------------------------------------------------------


def check_handshake(client: Client) -> None:
    assert client.protocol_version in PROTOCOL_VERSIONS
    assert client.server_info is not None
    assert (client.server_info.name, client.server_info.version) == ("sdk-test-server", "1.0.0")
    assert client.instructions == "Test server for the mcpclient test suite."
    caps = client.server_capabilities
    assert caps["tools"] == {"listChanged": True}
    assert caps["prompts"] == {"listChanged": True}
    assert caps["resources"] == {"listChanged": True, "subscribe": True}
    assert "completions" in caps and "logging" in caps


def check_ping(client: Client) -> None:
    assert client.ping() is None


# -- tools ------------------------------------------------------------------------------------


def check_list_tools(client: Client) -> None:
    tools = {tool.name: tool for tool in client.list_tools()}
    assert set(tools) == TOOL_NAMES
    echo = tools["echo"]
    assert echo.description == "Echo the given text."
    assert echo.input_schema == {
        "type": "object",
        "title": "echoArguments",
        "properties": {"text": {"description": "Text to echo back", "title": "Text", "type": "string"}},
        "required": ["text"],
    }
    assert echo.output_schema is None
    add = tools["add"]
    assert add.output_schema == {
        "type": "object",
        "title": "addOutput",
        "properties": {"result": {"title": "Result", "type": "integer"}},
        "required": ["result"],
    }
    assert add.input_schema["required"] == ["a", "b"]
    slow = tools["slow"].input_schema
    assert slow["properties"]["seconds"]["default"] == 1.0
    assert slow["properties"]["steps"]["default"] == 5


def check_text_tool(client: Client) -> None:
    text = 'héllo, 世界 🌍\nsecond line "quoted" \\ back'
    result = client.call_tool("echo", {"text": text})
    assert not result.is_error
    assert result.text == text
    assert [part.type for part in result.content] == ["text"]
    assert result.structured_content is None


def check_structured_tool(client: Client) -> None:
    result = client.call_tool("add", {"a": 2, "b": 40})
    assert result.structured_content == {"result": 42}
    assert result.text == "42"
    assert not result.is_error


@dataclasses.dataclass
class Day:
    date: str
    high: int
    sky: str
    note: str | None = None


@dataclasses.dataclass
class Forecast:
    days: list[Day]
    issued: datetime.datetime


@dataclasses.dataclass
class WrongDay:
    high: str


@dataclasses.dataclass
class WrongForecast:
    days: list[WrongDay]


def check_typed_results(client: Client) -> None:
    """``data`` builds objects from the listed outputSchema; ``structured()`` fills a user's class."""
    client.list_tools()  # the client learns the output schemas here
    added = client.call_tool("add", {"a": 2, "b": 40})
    assert added.output_schema is not None and added.data == 42  # {"result": 42} unwrapped
    assert added.structured(int) == 42

    result = client.call_tool("forecast", {"city": "Paris"})
    data = result.data
    assert type(data).__name__ == "Forecast" and attrs.has(type(data))
    assert (data.place.name, data.place.lat, data.place.lon) == ("Paris", 48.5, 2.0)
    assert [(day.date, day.high, day.sky, day.note) for day in data.days] == [
        ("2026-01-01", 7, "rain", "windy"), ("2026-01-02", 9, "sun", None),
    ]
    assert data.issued == "2026-01-01T06:00:00Z"  # formats stay plain values
    assert type(result.data.place) is type(data.place)  # the classes are made once per schema

    mine = result.structured(Forecast)
    assert mine.days[1] == Day(date="2026-01-02", high=9, sky="sun")
    assert mine.issued == datetime.datetime(2026, 1, 1, 6, tzinfo=datetime.timezone.utc)
    with pytest.raises(StructuredOutputError) as info:
        result.structured(WrongForecast)
    assert info.value.path == "$.days[0].high" and isinstance(info.value, ValueError)
    assert "$.days[1].high" in info.value.errors[1]


def check_image_tool(client: Client) -> None:
    result = client.call_tool("image")
    [part] = result.content
    assert (part.type, part.mime_type) == ("image", "image/png")
    assert png_size(part.decoded()) == (1, 1)
    assert result.text == ""


def check_error_tool(client: Client) -> None:
    result = client.call_tool("fail")
    assert result.is_error is True
    assert result.text == "Error executing tool fail: this tool always fails"
    with pytest.raises(ToolError) as caught:
        result.raise_for_error("fail")
    assert caught.value.result is result
    assert caught.value.tool == "fail"
    assert "this tool always fails" in str(caught.value)
    ok = client.call_tool("echo", {"text": "fine"})
    assert ok.raise_for_error() is ok


def check_tool_errors_are_results(client: Client) -> None:
    """Bad arguments and unknown tools come back as is_error results, not exceptions."""
    unknown = client.call_tool("no-such-tool")
    assert unknown.is_error and "no-such-tool" in unknown.text
    invalid = client.call_tool("echo", {})
    assert invalid.is_error and "text" in invalid.text


def check_progress_tool(client: Client) -> None:
    result = client.call_tool("slow", {"seconds": 0.2, "steps": 2})
    assert result.text == "done after 2 steps"


def check_progress_reports(client: Client) -> None:
    """``on_progress`` gets every report of the call (they run on dispatch threads, so they may
    still be arriving when the call returns)."""
    reports: list[tuple[float, float | None, str | None]] = []
    done = threading.Event()

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))
        if len(reports) == 4:
            done.set()

    result = client.call_tool("slow", {"seconds": 0.4, "steps": 4}, on_progress=on_progress)
    assert result.text == "done after 4 steps"
    assert done.wait(WAIT), f"progress reports: {reports}"
    assert sorted(reports) == [(float(i), 4.0, f"step {i} of 4") for i in range(1, 5)]


def check_mixed_content(client: Client) -> None:
    result = client.call_tool("mixed")
    assert [part.type for part in result.content] == ["text", "image", "resource"]
    text, image, resource = result.content
    assert text.text == "some text"
    assert image.mime_type == "image/png" and png_size(image.decoded()) == (1, 1)
    assert resource.resource is not None
    assert (resource.resource.uri, resource.resource.mime_type) == ("test://text", "text/plain")
    assert resource.resource.text == "hello world"
    assert result.text == "some text"


def check_state_kept_between_calls(client: Client) -> None:
    first = int(client.call_tool("counter").text)
    assert int(client.call_tool("counter").text) == first + 1


def check_timeout_cancels(client: Client, events: Callable[[], list[dict[str, Any]]]) -> None:
    """A call that times out raises RequestTimeout, the server is told to cancel, and the client
    stays usable. ``events()`` returns the server's ``SDK_SERVER_EVENTS`` records so far."""
    already = len(events())
    started = time.monotonic()
    with pytest.raises(RequestTimeout) as caught:
        client.call_tool("slow", {"seconds": 30, "steps": 30}, timeout=0.5)
    elapsed = time.monotonic() - started
    assert 0.4 < elapsed < 0.5 + RELEASED_WITHIN  # (the tool runs 30 s)
    assert isinstance(caught.value, TimeoutError)
    assert caught.value.method == "tools/call" and caught.value.timeout == 0.5

    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        seen = {e["event"]: e for e in events()[already:]}
        if "slow_cancelled" in seen:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the server never recorded the cancellation; events: {events()[already:]}")
    assert seen["slow_started"]["request_id"] == seen["slow_cancelled"]["request_id"]
    assert "slow_finished" not in seen

    assert client.call_tool("echo", {"text": "still here"}).text == "still here"
    client.ping()


# -- what the server asks of the client --------------------------------------------------------


def check_sampling(client: Client, peer: Peer) -> None:
    result = client.call_tool("sample", {"prompt": "What is 2+2?"})
    assert not result.is_error
    assert result.text == peer.reply
    [request] = peer.sampling_requests
    assert request.max_tokens == 100
    assert request.server is not None and request.server == client.server_info  # who asks, for the UI
    assert [(m.role, m.content) for m in request.messages] == [("user", {"type": "text", "text": "What is 2+2?"})]


def check_elicitation_accepted(client: Client, peer: Peer) -> None:
    result = client.call_tool("elicit", {"message": "Who are you?"})
    action, _, content = result.text.partition(" ")
    assert action == "accept"
    # mcpclient fills in the schema's defaults for fields an answer leaves out (SEP-1034).
    assert json.loads(content) == {"name": "Ann", "age": 30}
    [request] = peer.elicitation_requests
    assert request.message == "Who are you?"
    assert request.server is not None and request.server == client.server_info  # who asks, for the UI
    assert request.mode == "form"
    schema = request.requested_schema
    assert schema is not None
    assert schema["required"] == ["name"]
    assert schema["properties"]["age"] == {
        "type": "integer", "title": "Age", "description": "Your age", "default": 30
    }  # fmt: skip


def check_elicitation_declined(client: Client, peer: Peer) -> None:
    peer.elicitation = ElicitationResult(action="decline")
    result = client.call_tool("elicit", {"message": "Who are you?"})
    assert result.text == "decline null"
    assert len(peer.elicitation_requests) == 1


def check_elicitation_without_handler(client: Client) -> None:
    """A client with no elicitation handler declines automatically."""
    result = client.call_tool("elicit", {"message": "Who are you?"})
    assert result.text == "decline null"


def check_roots(client: Client, peer: Peer) -> None:
    """The server asks for the roots on every call; ``set_roots`` changes the answer."""
    assert client.call_tool("roots").text == "\n".join(_uri(r) for r in peer.roots)
    try:
        client.set_roots([Root(uri="file:///srv/a", name="a"), "file:///srv/b"])
        assert client.call_tool("roots").text == "file:///srv/a\nfile:///srv/b"
    finally:
        client.set_roots(peer.roots)


def check_log_notification(client: Client, peer: Peer) -> None:
    client.set_log_level("debug")  # 2026-07-28 servers send logs only to requests that opt in
    assert client.call_tool("log", {"message": "something happened", "level": "warning"}).text == "logged"
    [params] = peer.wait_for("notifications/message", lambda p: p.get("data") == "something happened")
    assert params == {"level": "warning", "logger": "sdk_server", "data": "something happened"}


# -- resources --------------------------------------------------------------------------------


def check_resources(client: Client) -> None:
    resources = {r.uri: r for r in client.list_resources()}
    assert set(resources) == {"test://text", "test://blob"}
    text = resources["test://text"]
    assert (text.name, text.description, text.mime_type) == ("text", "A text resource", "text/plain")
    blob = resources["test://blob"]
    assert (blob.name, blob.description, blob.mime_type) == ("blob", "Bytes 0..255", "application/octet-stream")

    [contents] = client.read_resource("test://text")
    assert (contents.uri, contents.mime_type, contents.text, contents.blob) == (
        "test://text", "text/plain", "hello world", None
    )  # fmt: skip
    [contents] = client.read_resource("test://blob")
    assert contents.blob == bytes(range(256))
    assert contents.text is None
    assert contents.mime_type == "application/octet-stream"


def check_resource_templates(client: Client) -> None:
    [template] = client.list_resource_templates()
    assert template.uri_template == "test://items/{item_id}"
    assert (template.name, template.description, template.mime_type) == ("item", "An item by id", "text/plain")
    [contents] = client.read_resource("test://items/42")
    assert (contents.uri, contents.text) == ("test://items/42", "item 42")


def check_read_missing_resource(client: Client) -> None:
    with pytest.raises(mcpclient.RPCError) as caught:
        client.read_resource("test://nope")
    assert caught.value.method == "resources/read"


# -- prompts and completions ---------------------------------------------------------------------


def check_prompts(client: Client) -> None:
    prompts = {p.name: p for p in client.list_prompts()}
    assert set(prompts) == {"greet", "with_resource", "with_image"}
    greet = prompts["greet"]
    assert greet.description == "Greet someone by name"
    [argument] = greet.arguments
    assert (argument.name, argument.description, argument.required) == (
        "name", "Name of the person to greet", True
    )  # fmt: skip
    assert prompts["with_resource"].arguments == []
    assert prompts["with_image"].description == "A message with an image"


def check_get_prompt(client: Client) -> None:
    description, messages = client.get_prompt("greet", {"name": "Zoë"})
    assert description == "Greet someone by name"
    [message] = messages
    assert message.role == "user"
    [part] = message.content
    assert (part.type, part.text) == ("text", "Hello, Zoë! Please greet me back.")

    _, messages = client.get_prompt("with_resource")
    [part] = messages[0].content
    assert part.type == "resource" and part.resource is not None
    assert (part.resource.uri, part.resource.mime_type, part.resource.text) == (
        "test://text", "text/plain", "hello world"
    )  # fmt: skip

    _, messages = client.get_prompt("with_image")
    [part] = messages[0].content
    assert (part.type, part.mime_type) == ("image", "image/png")
    assert png_size(part.data) == (1, 1)


def check_completions(client: Client) -> None:
    completion = client.complete(CompletionRef.prompt("greet"), "name", "al")
    assert completion.values == ["alice", "albert"]
    assert completion.total == 2 and completion.has_more is False
    assert client.complete(CompletionRef.prompt("greet"), "name", "z").values == []
    template = CompletionRef.resource("test://items/{item_id}")
    assert client.complete(template, "item_id", "").values == ["1", "2", "3"]
    assert client.complete(template, "item_id", "2").values == ["2"]


# -- change notifications and caching ------------------------------------------------------------
#
# Legacy servers take resources/subscribe and push notifications unasked; modern ones
# (2026-07-28) send them only on a subscriptions/listen stream, which mcpclient opens on a thread
# of its own. These checks need a client of their own (that thread, and the dispatch threads of
# the handlers, must be gone by the end of the test) with a Peer recording its notifications.


def check_resource_subscription(client: Client, peer: Peer) -> None:
    """``touch`` on a subscribed resource reaches ``set_resource_updated_handler``; after an
    unsubscribe the same resource can be subscribed again."""
    updates = _Collector()
    client.set_resource_updated_handler(updates.add)
    for times in (1, 2):
        peer.reset()
        client.subscribe_resource("test://text")
        _wait_listening(client, peer, lambda f: "test://text" in f.get("resourceSubscriptions", ()))
        client.call_tool("touch", {"uri": "test://text"})
        assert updates.wait_for(times) == ["test://text"] * times
        client.unsubscribe_resource("test://text")
    if client.protocol_version < "2026":  # the server keeps legacy subscriptions itself
        assert client.call_tool("touch", {"uri": "test://text"}).text == "not subscribed"


def check_subscribe_returns_once_the_server_listens(client: Client, peer: Peer) -> None:
    """``subscribe_resource`` returns only when the server will deliver: an update caused right
    after it reaches the handler, with no wait for the acknowledgement in between (issue #30:
    in the 2026 era it returned before the listen stream was even open)."""
    updates = _Collector()
    client.set_resource_updated_handler(updates.add)
    client.subscribe_resource("test://text")
    client.call_tool("touch", {"uri": "test://text"})
    assert updates.wait_for(1) == ["test://text"]
    client.unsubscribe_resource("test://text")


def check_tools_list_changed(client: Client, peer: Peer) -> None:
    """``toggle_tool`` adds and removes a tool; each change reaches ``set_list_changed_handler``."""
    changes = _Collector()
    client.set_list_changed_handler(changes.add)
    _wait_listening(client, peer, lambda f: f.get("toolsListChanged") is True)
    before = {tool.name for tool in client.list_tools()}
    assert _toggle(client, changes) == "added"
    assert {tool.name for tool in client.list_tools()} == before | {"extra"}
    assert _toggle(client, changes) == "removed"
    assert {tool.name for tool in client.list_tools()} == before - {"extra"}
    assert set(changes.items) == {"tools"}


def check_cache(client: Client, peer: Peer) -> None:
    """With ``Client(cache=True)``, lists are kept while fresh and dropped on list_changed.

    The SDK server's modern results say ``ttlMs: 0`` (never fresh), so every list goes to the
    server; its legacy results carry no ttl, but it announces ``listChanged``, so they are kept
    until the server says the list changed.
    """
    sent = spy_methods(client)
    changes = _Collector()
    client.set_list_changed_handler(changes.add)
    _wait_listening(client, peer, lambda f: f.get("toolsListChanged") is True)
    modern = client.protocol_version >= "2026"
    fetches = 2 if modern else 1
    first = {tool.name for tool in client.list_tools()}
    assert {tool.name for tool in client.list_tools()} == first
    assert sent.count("tools/list") == fetches
    uris = [r.uri for r in client.list_resources()]
    assert uris and [r.uri for r in client.list_resources()] == uris
    assert sent.count("resources/list") == fetches  # kept like the tools: fetched again only when stale
    [template] = client.list_resource_templates()  # cached apart from the resources
    assert template.uri_template == "test://items/{item_id}"
    try:
        assert _toggle(client, changes) == "added"
        assert {tool.name for tool in client.list_tools()} == first | {"extra"}
        assert sent.count("tools/list") == fetches + 1
    finally:
        _toggle(client, changes)
    assert "extra" not in {tool.name for tool in client.list_tools()}


def spy_methods(client: Client) -> list[str]:
    """The methods of every message ``client`` sends from now on (appended as they go)."""
    sent: list[str] = []
    transport = client.transport
    send = transport.send

    def recording(message: dict[str, Any], **options: Any) -> None:
        sent.append(message.get("method") or "reply")
        return send(message, **options)

    transport.send = recording  # type: ignore[method-assign]  # every message goes through send
    return sent


class _Collector:
    """What a callback was given, in order, with a wait for the n-th item."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._cond = threading.Condition()

    def add(self, item: Any) -> None:
        with self._cond:
            self.items.append(item)
            self._cond.notify_all()

    def wait_for(self, count: int) -> list[Any]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.items) >= count, WAIT), f"got only {self.items}"
            return list(self.items)


def _toggle(client: Client, changes: _Collector) -> str:
    """Call ``toggle_tool`` and wait for the list_changed it causes."""
    seen = len(changes.items)
    outcome = client.call_tool("toggle_tool").text
    changes.wait_for(seen + 1)
    return outcome


def _wait_listening(client: Client, peer: Peer, accepts: Callable[[dict[str, Any]], bool]) -> None:
    """Modern era: wait until the server acknowledged a listen stream whose filter ``accepts``
    (only then does it deliver what the filter names). Legacy servers need no stream."""
    if client.protocol_version < "2026":
        return
    peer.wait_for(
        "notifications/subscriptions/acknowledged",
        lambda p: isinstance(p.get("notifications"), dict) and accepts(p["notifications"]),
    )


# -- mcpclient.ai ------------------------------------------------------------------------------


def check_ai_tools(client: Client) -> None:
    tools = {tool.name: tool for tool in mcpclient.tools(client)}
    definitions = {d.name: d for d in client.list_tools()}
    assert set(tools) == set(definitions)
    for name, tool in tools.items():
        assert tool.description == definitions[name].description
        assert tool.schema == definitions[name].input_schema
    assert tools["echo"].execute({"text": "from a dict"}) == "from a dict"
    assert tools["echo"].execute(json.dumps({"text": "from JSON"})) == "from JSON"
    assert tools["add"].execute('{"a": 1, "b": 2}') == "3"
    with pytest.raises(ToolError) as caught:
        tools["fail"].execute()
    assert caught.value.tool == "fail"
    assert caught.value.result.is_error


# -- helpers ----------------------------------------------------------------------------------


def _uri(root: Root | str) -> str:
    return root.uri if isinstance(root, Root) else root
