"""MCP test server built with the official MCP Python SDK (``mcp`` 2.3.0, ``MCPServer``).

The mcpclient test suite runs this as a subprocess and talks to it over every
transport the SDK offers.

Usage::

    python tests/servers/sdk_server.py [--transport stdio|streamable-http|sse]
                                       [--port N] [--stateless] [--json-response]
                                       [--legacy-only]

* ``stdio`` (default): newline-delimited JSON-RPC on stdin/stdout.  Nothing but
  protocol messages is ever written to stdout; logs go to stderr.
* ``streamable-http``: serves ``http://127.0.0.1:PORT/mcp``.
* ``sse`` (the deprecated 2024-11-05 HTTP+SSE transport): ``GET /sse`` opens
  the event stream, whose first ``endpoint`` event names the POST URL
  (``/messages/?session_id=...``).

HTTP transports listen on 127.0.0.1 only.  With ``--port 0`` (the default) a
free port is chosen.  Once the socket accepts connections, exactly one line is
printed to stdout and flushed::

    LISTENING http://127.0.0.1:PORT/mcp      (streamable-http)
    LISTENING http://127.0.0.1:PORT/sse      (sse)

Everything else (uvicorn and SDK logs) goes to stderr.

What the SDK (2.3.0) supports, as found by reading its source
-------------------------------------------------------------
* **Both protocol eras at once ("dual era") by default.**  The handshake era
  (``initialize`` + ``notifications/initialized``; versions 2024-11-05,
  2025-03-26, 2025-06-18, 2025-11-25, see ``mcp.types.version``) and the
  stateless 2026-07-28 era (no handshake; every request carries
  ``_meta["io.modelcontextprotocol/protocolVersion"]`` plus client info /
  capabilities, ``server/discover`` advertises ``supportedVersions``).
  ``initialize`` with an unknown version is answered with 2025-11-25.

  - stdio / SSE (``Server.run`` -> ``serve_dual_era_loop``): the *first
    request* decides the connection's era for good.  A first request carrying
    the 2026 ``_meta`` envelope (e.g. ``server/discover``) locks the connection
    to 2026-07-28; a later ``initialize`` then fails with -32022
    (UNSUPPORTED_PROTOCOL_VERSION, ``data.supported == ["2026-07-28"]``).
    Anything else (normally ``initialize``) locks it to the handshake era, and
    enveloped requests afterwards get -32600.
  - streamable HTTP: routed per request on the ``MCP-Protocol-Version``
    header.  A header value outside the handshake versions goes to the
    single-exchange 2026 entry (one POST in, one response out, no session);
    no header or a handshake version goes to the classic session-based
    transport (``Mcp-Session-Id``), or a per-request one with ``--stateless``.
  - In the 2026 era the server cannot send requests to the client.  Sampling,
    elicitation and roots become "multi round-trip" results: ``tools/call``
    returns ``{"resultType": "input_required", "inputRequests": {...},
    "requestState": ...}`` and the client retries the same call with
    ``inputResponses`` (and the echoed ``requestState``).  The ``sample``,
    ``elicit`` and ``roots`` tools below implement both styles.
  - Logging, sampling and roots are marked deprecated as of 2026-07-28 in the
    SDK (runtime ``MCPDeprecationWarning``s are silenced here).
* **Legacy-only mode**: the SDK has no switch for it.  ``--legacy-only`` builds
  it from public pieces: stdio/SSE run the handshake-only ``serve_loop``
  (``mcp.server.runner``) instead of the dual-era loop, a server middleware
  answers ``server/discover`` with -32601 (Method not found), and on
  streamable HTTP an ASGI wrapper answers any POST whose
  ``MCP-Protocol-Version`` header is not a handshake version with HTTP 400 and
  a JSON-RPC error body (code -32600, ``id: null``), as the SDK's own legacy
  transport shapes its errors.  Net effect: ``server/discover`` always fails
  and the client must fall back to ``initialize``.
* ``--stateless`` (streamable HTTP only): no ``Mcp-Session-Id``; each POST gets
  a fresh connection that is "born ready" (no ``initialize`` needed).  The
  server cannot send requests to the client there: in the handshake era
  ``sample``/``elicit``/``roots`` then fail with a JSON-RPC error -32600
  ("... has no back-channel for server-initiated requests").
* ``--event-store`` (streamable HTTP only): every SSE event gets an id and is kept in
  memory, so that a client whose stream broke resumes it with ``Last-Event-ID`` (a GET)
  and the SDK replays the events of that stream it missed, then goes on on the new one.
* ``--json-response`` (streamable HTTP only): POST responses are a single
  ``application/json`` body instead of an SSE stream; notifications raised
  during a call (progress, log) are then not delivered on that POST, and in
  the handshake era ``sample``/``elicit``/``roots`` fail with the same -32600
  no-back-channel error as with ``--stateless``.
* SSE transport: supported (``MCPServer.sse_app``), handshake era only in
  practice.
* Resource subscriptions: ``MCPServer`` does not register
  ``resources/subscribe``; this server adds handlers through the low-level
  ``Server.add_request_handler`` so ``capabilities.resources.subscribe`` is
  true.  2026-era clients use ``subscriptions/listen`` (served by
  ``MCPServer``'s default in-memory bus).
* ``listChanged`` is advertised for tools, resources and prompts (the SDK only
  does so when ``NotificationOptions`` is passed; this server binds them).

Features
--------
Tools:
  ``echo(text)`` -> the same text (no outputSchema).
  ``add(a: int, b: int)`` -> structured ``{"result": a+b}`` with outputSchema,
      plus a text block ``"a+b"``.
  ``forecast(city)`` -> structured ``Forecast`` (nested objects through ``$defs``, an array of
      objects, an optional field, an enum and a ``date-time`` format) with outputSchema.
  ``image()`` -> one 1x1 PNG image block.
  ``fail()`` -> ``isError: true`` with text
      ``"Error executing tool fail: this tool always fails"`` (SDK's prefix).
  ``slow(seconds=1.0, steps=5)`` -> sleeps ``seconds`` in ``steps`` steps, sending
      ``notifications/progress`` (progress=i, total=steps) after each step if
      the request carried a progressToken; returns ``"done after N steps"``.
      Cancellation (``notifications/cancelled``) interrupts it.
  ``sample(prompt)`` -> asks the client ``sampling/createMessage`` (one user
      message with the prompt, maxTokens 100) and returns the model's text.
  ``elicit(message)`` -> asks the client ``elicitation/create`` (form: ``name``
      string, required; ``age`` integer, default 30) and returns
      ``"<action> <json content>"``, e.g. ``accept {"age": 30, "name": "Ann"}``
      (keys sorted; ``null`` content for decline/cancel).
  ``roots()`` -> asks the client ``roots/list`` and returns the root URIs
      joined with ``"\\n"`` (empty string when there are none).
  ``log(message, level="info")`` -> sends ``notifications/message`` with
      ``data=message`` at ``level`` (logger ``"sdk_server"``) unless
      filtered by ``logging/setLevel``; returns ``"logged"``.
  ``mixed()`` -> text + image + embedded resource (``test://text``) blocks.
  ``counter()`` -> increments a process-wide counter, returns it as text.
  ``touch(uri="test://text")`` -> sends ``notifications/resources/updated`` for
      ``uri`` if some client subscribed to it (on the calling request's
      stream) and publishes it to 2026 ``subscriptions/listen`` streams;
      returns ``"notified"`` or ``"not subscribed"``.
  ``toggle_tool()`` -> adds (or removes) an extra tool ``extra`` and sends
      ``notifications/tools/list_changed`` (handshake era: unrelated to the call,
      so over streamable HTTP on the GET stream; 2026 era: to
      ``subscriptions/listen`` streams); returns ``"added"``/``"removed"``.

Resources:
  ``test://text`` ("hello world", text/plain),
  ``test://blob`` (bytes 0..255, application/octet-stream),
  template ``test://items/{item_id}`` -> text ``item <id>`` (text/plain).

Prompts: ``greet(name)``, ``with_resource()``, ``with_image()``.

Completions: prompt ``greet`` argument ``name`` from ["alice", "albert", "bob"]
and template ``test://items/{item_id}`` argument ``item_id`` from
["1", "2", "3"], filtered by prefix.

Events file
-----------
If ``SDK_SERVER_EVENTS`` names a file, the server appends one JSON object per
line to it: ``{"event": "slow_started"|"slow_cancelled"|"slow_finished",
"request_id": ..., "pid": ...}`` and ``{"event": "counter", "value": N}``.
The same events are always logged to stderr as ``EVENT {json}`` lines.

Requests file
-------------
If ``SDK_SERVER_REQUESTS`` names a file, the server appends one JSON object per request it
receives: ``{"method", "name" (a tool call's), "inputResponses", "requestState"}``.

Spans file
----------
If ``SDK_SERVER_SPANS`` names a file, the server installs an OpenTelemetry SDK tracer
provider (the SDK's own ``OpenTelemetryMiddleware`` then emits a SERVER span per request,
parented to the trace context it extracts from ``params._meta``) and appends one JSON object
per finished span: ``{"name", "kind", "trace_id", "span_id", "parent_span_id",
"attributes"}`` (ids in hex).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import struct
import sys
import warnings
import zlib
from functools import partial
from typing import Annotated, Any, Literal

import anyio
import mcp.types as types
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.runner import serve_loop
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

# Sampling, roots and logging are deprecated at 2026-07-28; this test server uses them on purpose.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*deprecated as of 2026-07-28.*")

log = logging.getLogger("sdk_server")

LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
GREET_NAMES = ["alice", "albert", "bob"]
ITEM_IDS = ["1", "2", "3"]


def _tiny_png() -> bytes:
    """Build a valid 1x1 red RGB PNG by hand (no Pillow needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


PNG = _tiny_png()


def record_event(event: str, **fields: Any) -> None:
    """Log an event to stderr and, if SDK_SERVER_EVENTS is set, append it to that file."""
    entry = {"event": event, "pid": os.getpid(), **fields}
    line = json.dumps(entry, sort_keys=True)
    print(f"EVENT {line}", file=sys.stderr, flush=True)
    path = os.environ.get("SDK_SERVER_EVENTS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


class State:
    """Process-wide mutable state (one server process per test, normally)."""

    counter = 0
    subscriptions: set[str] = set()
    min_log_level = "debug"
    extra_tool = False


def _is_modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


async def _ask_client(ctx: Context, key: str, request: Any, result_type: type) -> Any:
    """Ask the client something, in whichever style the connection's era uses.

    Handshake era: a server-to-client JSON-RPC request, sent on the calling
    request's stream (``related_request_id``), so it also works over streamable
    HTTP without a standalone GET stream.

    2026 era: return ``None`` after stashing nothing; the caller turns the
    missing answer into an ``InputRequiredResult``.  On the client's retry the
    answer is taken from ``ctx.input_responses[key]``.
    """
    if _is_modern(ctx):
        responses = ctx.input_responses or {}
        if key not in responses:
            return None
        answer = responses[key]
        data = answer.model_dump(by_alias=True, mode="json") if hasattr(answer, "model_dump") else answer
        return result_type.model_validate(data, by_name=False)
    return await ctx.session.send_request(
        request, result_type, metadata=ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
    )


def _input_required(key: str, request: Any) -> types.InputRequiredResult:
    return types.InputRequiredResult(input_requests={key: request}, request_state=f"waiting-for-{key}")


class Place(BaseModel):
    name: str
    lat: float
    lon: float


class Day(BaseModel):
    date: str = Field(json_schema_extra={"format": "date"})
    high: int
    sky: Literal["sun", "cloud", "rain"]
    note: str | None = None


class Forecast(BaseModel):
    place: Place
    days: list[Day]
    issued: str = Field(json_schema_extra={"format": "date-time"})


def build_server(legacy_only: bool) -> MCPServer:
    mcp = MCPServer(
        "sdk-test-server",
        version="1.0.0",
        instructions="Test server for the mcpclient test suite.",
    )
    lowlevel = mcp._lowlevel_server  # no public accessor; needed for subscribe/setLevel handlers

    # ---------------------------------------------------------------- tools
    @mcp.tool(structured_output=False)
    def echo(text: Annotated[str, Field(description="Text to echo back")]) -> str:
        """Echo the given text."""
        return text

    @mcp.tool(structured_output=True)
    def add(a: int, b: int) -> int:
        """Add two integers; structured output {"result": a + b}."""
        return a + b

    @mcp.tool()
    def forecast(city: str) -> Forecast:
        """Two days of made-up weather for a city; nested structured output."""
        return Forecast(
            place=Place(name=city, lat=48.5, lon=2),
            days=[Day(date="2026-01-01", high=7, sky="rain", note="windy"), Day(date="2026-01-02", high=9, sky="sun")],
            issued="2026-01-01T06:00:00Z",
        )

    @mcp.tool()
    def image() -> Image:
        """Return a tiny 1x1 PNG image."""
        return Image(data=PNG, format="png")

    @mcp.tool(structured_output=False)
    def fail() -> str:
        """Always fails with an isError result."""
        raise ToolError("this tool always fails")

    @mcp.tool(structured_output=False)
    async def slow(ctx: Context, seconds: float = 1.0, steps: int = 5) -> str:
        """Sleep `seconds` in `steps` steps, reporting progress after each step."""
        request_id = ctx.request_context.request_id
        record_event("slow_started", request_id=request_id)
        steps = max(1, steps)
        try:
            for i in range(steps):
                await anyio.sleep(seconds / steps)
                await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                record_event("slow_cancelled", request_id=request_id)
            raise
        record_event("slow_finished", request_id=request_id)
        return f"done after {steps} steps"

    @mcp.tool(structured_output=False)
    async def sample(ctx: Context, prompt: str) -> str | types.InputRequiredResult:
        """Ask the client's LLM (sampling/createMessage) and return its text."""
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
                max_tokens=100,
            )
        )
        result = await _ask_client(ctx, "sample", request, types.CreateMessageResult)
        if result is None:
            return _input_required("sample", request)
        content = result.content
        blocks = content if isinstance(content, list) else [content]
        return "".join(getattr(b, "text", "") for b in blocks)

    @mcp.tool(structured_output=False)
    async def elicit(ctx: Context, message: str) -> str | types.InputRequiredResult:
        """Ask the user (elicitation/create form: name, age) and report the answer."""
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "description": "Your name"},
                "age": {"type": "integer", "title": "Age", "description": "Your age", "default": 30},
            },
            "required": ["name"],
        }
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
        )
        result = await _ask_client(ctx, "elicit", request, types.ElicitResult)
        if result is None:
            return _input_required("elicit", request)
        return f"{result.action} {json.dumps(result.content, sort_keys=True)}"

    @mcp.tool(structured_output=False)
    async def roots(ctx: Context) -> str | types.InputRequiredResult:
        """Ask the client for its roots and return their URIs, one per line."""
        request = types.ListRootsRequest()
        result = await _ask_client(ctx, "roots", request, types.ListRootsResult)
        if result is None:
            return _input_required("roots", request)
        return "\n".join(str(root.uri) for root in result.roots)

    @mcp.tool(name="log", structured_output=False)
    async def log_tool(ctx: Context, message: str, level: str = "info") -> str:
        """Send a log notification (notifications/message) with `message` at `level`."""
        if level not in LOG_LEVELS:
            raise ToolError(f"unknown log level {level!r}")
        if LOG_LEVELS.index(level) >= LOG_LEVELS.index(State.min_log_level):
            await ctx.log(level, message, logger_name="sdk_server")  # type: ignore[arg-type]
        return "logged"

    @mcp.tool(structured_output=False)
    def mixed() -> types.CallToolResult:
        """Return text, image and embedded-resource content blocks."""
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="some text"),
                types.ImageContent(type="image", data=Image(data=PNG).to_image_content().data, mime_type="image/png"),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(uri="test://text", mime_type="text/plain", text="hello world"),
                ),
            ]
        )

    @mcp.tool(structured_output=False)
    def counter() -> str:
        """Increment a process-wide counter and return its new value."""
        State.counter += 1
        record_event("counter", value=State.counter)
        return str(State.counter)

    @mcp.tool(structured_output=False)
    async def touch(ctx: Context, uri: str = "test://text") -> str:
        """Notify subscribers that `uri` changed (notifications/resources/updated)."""
        await ctx.notify_resource_updated(uri)  # 2026-era subscriptions/listen streams
        if uri not in State.subscriptions:
            return "not subscribed"
        await ctx.session.send_notification(
            types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(uri=uri)),
            related_request_id=ctx.request_context.request_id,
        )
        return "notified"

    def extra() -> str:
        """A tool that comes and goes (see toggle_tool)."""
        return "extra"

    @mcp.tool(structured_output=False)
    async def toggle_tool(ctx: Context) -> str:
        """Add or remove the tool `extra` and send notifications/tools/list_changed."""
        if State.extra_tool:
            mcp.remove_tool("extra")
            outcome = "removed"
        else:
            mcp.add_tool(extra, name="extra", structured_output=False)
            outcome = "added"
        State.extra_tool = not State.extra_tool
        await ctx.notify_tools_changed()
        if not _is_modern(ctx):
            # Not tied to this request: over streamable HTTP it travels on the GET stream.
            await ctx.session.send_notification(types.ToolListChangedNotification())
        return outcome

    # ------------------------------------------------------------ resources
    @mcp.resource("test://text", name="text", description="A text resource", mime_type="text/plain")
    def text_resource() -> str:
        return "hello world"

    @mcp.resource("test://blob", name="blob", description="Bytes 0..255", mime_type="application/octet-stream")
    def blob_resource() -> bytes:
        return bytes(range(256))

    @mcp.resource("test://items/{item_id}", name="item", description="An item by id", mime_type="text/plain")
    def item_resource(item_id: str) -> str:
        return f"item {item_id}"

    async def on_subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        State.subscriptions.add(str(params.uri))
        return types.EmptyResult()

    async def on_unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        State.subscriptions.discard(str(params.uri))
        return types.EmptyResult()

    lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, on_subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, on_unsubscribe)

    async def on_set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        State.min_log_level = params.level
        return types.EmptyResult()

    lowlevel.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)

    # -------------------------------------------------------------- prompts
    @mcp.prompt(description="Greet someone by name")
    def greet(name: Annotated[str, Field(description="Name of the person to greet")]) -> str:
        return f"Hello, {name}! Please greet me back."

    @mcp.prompt(description="A message with an embedded resource")
    def with_resource() -> list[dict[str, Any]]:
        return [
            {
                "role": "user",
                "content": {
                    "type": "resource",
                    "resource": {"uri": "test://text", "mimeType": "text/plain", "text": "hello world"},
                },
            }
        ]

    @mcp.prompt(description="A message with an image")
    def with_image() -> list[dict[str, Any]]:
        return [{"role": "user", "content": Image(data=PNG).to_image_content().model_dump(by_alias=True)}]

    # ---------------------------------------------------------- completions
    @mcp.completion()
    async def complete(
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: types.CompletionArgument,
        context: types.CompletionContext | None,
    ) -> types.Completion | None:
        if isinstance(ref, types.PromptReference) and ref.name == "greet" and argument.name == "name":
            choices = GREET_NAMES
        elif (
            isinstance(ref, types.ResourceTemplateReference)
            and ref.uri == "test://items/{item_id}"
            and argument.name == "item_id"
        ):
            choices = ITEM_IDS
        else:
            return None
        values = [c for c in choices if c.startswith(argument.value)]
        return types.Completion(values=values, total=len(values), has_more=False)

    # ------------------------------------------------ capabilities / legacy
    lowlevel.create_initialization_options = partial(  # type: ignore[method-assign]
        lowlevel.create_initialization_options,
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True),
    )

    if os.environ.get("SDK_SERVER_REQUESTS"):

        async def record_request(ctx: Any, call_next: Any) -> Any:
            params = ctx.params if isinstance(getattr(ctx, "params", None), dict) else {}
            with open(os.environ["SDK_SERVER_REQUESTS"], "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": ctx.method, "name": params.get("name"),
                                    "inputResponses": params.get("inputResponses"),
                                    "requestState": params.get("requestState")}, sort_keys=True, default=str) + "\n")
            return await call_next(ctx)

        mcp.middleware.insert(0, record_request)

    if legacy_only:

        async def refuse_discover(ctx: Any, call_next: Any) -> Any:
            if ctx.method == "server/discover":
                raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data="server/discover")
            return await call_next(ctx)

        mcp.middleware.append(refuse_discover)

    return mcp


# ------------------------------------------------------------------ runners


async def run_stdio(mcp: MCPServer, legacy_only: bool) -> None:
    if not legacy_only:
        await mcp.run_stdio_async()
        return
    from mcp.server.stdio import stdio_server

    lowlevel = mcp._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        async with lowlevel.lifespan(lowlevel) as state:
            await serve_loop(
                lowlevel,
                read_stream,
                write_stream,
                lifespan_state=state,
                init_options=lowlevel.create_initialization_options(),
            )


def legacy_only_http(app: Any) -> Any:
    """ASGI wrapper: refuse 2026-era POSTs (non-handshake MCP-Protocol-Version) like a 2025 server."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            version = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"mcp-protocol-version"), None)
            if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
                while True:  # drain the body
                    message = await receive()
                    if not message.get("more_body"):
                        break
                body = json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": types.INVALID_REQUEST,
                            "message": f"Bad Request: Unsupported protocol version: {version}. "
                            f"Supported versions: {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}",
                        },
                    }
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return wrapped


def _free_socket(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class MemoryEventStore:
    """The SDK's ``EventStore`` in memory: each stream's events, in order, by id."""

    def __init__(self) -> None:
        from mcp.server.streamable_http import EventMessage

        self._message = EventMessage
        self._streams: dict[str, list[tuple[str, Any]]] = {}
        self._stream_of: dict[str, str] = {}
        self._next = 0

    async def store_event(self, stream_id: str, message: Any) -> str:
        self._next += 1
        event_id = f"{stream_id}-{self._next}"
        self._streams.setdefault(stream_id, []).append((event_id, message))
        self._stream_of[event_id] = stream_id
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: Any) -> str | None:
        stream_id = self._stream_of.get(last_event_id)
        if stream_id is None:
            return None
        events = self._streams[stream_id]
        after = [i for i, (event_id, _) in enumerate(events) if event_id == last_event_id][0] + 1
        for event_id, message in events[after:]:
            if message is not None:  # (a priming event)
                await send_callback(self._message(message, event_id))
        return stream_id


async def run_http(mcp: MCPServer, args: argparse.Namespace) -> None:
    import uvicorn

    if args.transport == "sse":
        if args.legacy_only:
            app: Any = _legacy_sse_app(mcp)
        else:
            app = mcp.sse_app()
        path = "/sse"
    else:
        app = mcp.streamable_http_app(json_response=args.json_response, stateless_http=args.stateless,
                                      event_store=MemoryEventStore() if args.event_store else None)
        if args.legacy_only:
            app = legacy_only_http(app)
        path = "/mcp"

    sock = _free_socket(args.port)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.01)
        sys.stdout.write(f"LISTENING http://127.0.0.1:{port}{path}\n")
        sys.stdout.flush()

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def _legacy_sse_app(mcp: MCPServer) -> Any:
    """The SDK's SSE app, but driving the handshake-only loop (no 2026 era)."""
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    from mcp.server.transport_security import TransportSecuritySettings

    lowlevel = mcp._lowlevel_server
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    sse = SseServerTransport("/messages/", security_settings=security)

    async def handle_sse(request: Request) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as (read_stream, write_stream):
            async with lowlevel.lifespan(lowlevel) as state:
                await serve_loop(
                    lowlevel,
                    read_stream,
                    write_stream,
                    lifespan_state=state,
                    init_options=lowlevel.create_initialization_options(),
                )
        return Response()

    return Starlette(
        routes=[Route("/sse", endpoint=handle_sse, methods=["GET"]), Mount("/messages/", app=sse.handle_post_message)]
    )


def export_spans_to(path: str) -> None:
    """Send every span this process finishes to ``path``, one JSON line each (see the docstring)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class FileExporter(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            with open(path, "a", encoding="utf-8") as f:
                for span in spans:
                    parent = span.parent
                    f.write(json.dumps({
                        "name": span.name,
                        "kind": span.kind.name,
                        "trace_id": f"{span.context.trace_id:032x}",
                        "span_id": f"{span.context.span_id:016x}",
                        "parent_span_id": f"{parent.span_id:016x}" if parent is not None else None,
                        "attributes": {k: v for k, v in (span.attributes or {}).items() if isinstance(v, (str, int))},
                    }) + "\n")
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileExporter()))
    trace.set_tracer_provider(provider)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "streamable-http", "sse"], default="stdio")
    parser.add_argument("--port", type=int, default=0, help="HTTP port on 127.0.0.1 (0 = pick a free one)")
    parser.add_argument("--stateless", action="store_true", help="streamable-http: no sessions")
    parser.add_argument("--json-response", action="store_true", help="streamable-http: JSON instead of SSE bodies")
    parser.add_argument("--event-store", action="store_true", help="streamable-http: keep SSE events for resumption")
    parser.add_argument("--legacy-only", action="store_true", help="refuse the 2026-07-28 protocol (no server/discover)")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if os.environ.get("SDK_SERVER_SPANS"):
        export_spans_to(os.environ["SDK_SERVER_SPANS"])
    mcp = build_server(args.legacy_only)
    if args.transport == "stdio":
        anyio.run(run_stdio, mcp, args.legacy_only)
    else:
        anyio.run(run_http, mcp, args)


if __name__ == "__main__":
    main()
