"""mcpclient.testing.InProcessTransport: the sync Client against real server objects in-process.

The official-SDK server is the suite's own ``tests/servers/sdk_server.py`` (``build_server``),
loaded into this process instead of run as a child, and checked with the same
``tests/interop/suite.py`` checks as over stdio and HTTP, in both eras. The FastMCP server is
written here. No subprocess and no socket is involved anywhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import sys
import threading
import time
import warnings
from typing import Any

import attrs
import pytest

from mcpclient import (
    CancelToken,
    Client,
    ClientClosedError,
    ConnectionClosed,
    CreateMessageResult,
    ElicitationResult,
    Handlers,
    RequestCancelled,
    RequestTimeout,
    RPCError,
    ToolError,
)
from mcpclient.testing import InProcessTransport, connect_in_process
from tests.conftest import SERVERS, child_pids
from tests.interop import suite
from tests.helpers import RELEASED_WITHIN, wait_for
from tests.interop.peer import Peer

pytest_plugins = ["pytester"]
#: The test server uses logging, sampling and roots on purpose (its stdio process silences this).
pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated as of 2026-07-28")

pytest.importorskip("mcp", reason="needs the official mcp SDK (pip install 'mcpclient[inprocess]')")

#: What the client asks for: the handshake era, and the 2026-07-28 era (the SDK's servers
#: serve both on one connection; the first request decides).
ERAS = {"legacy": ("legacy", "2025-11-25"), "modern": ("2026-07-28", "2026-07-28")}


def _load_sdk_server() -> Any:
    spec = importlib.util.spec_from_file_location("inprocess_sdk_server", SERVERS / "sdk_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its annotations are resolved through the module
    with warnings.catch_warnings():  # its module-level filters stay its own
        spec.loader.exec_module(module)
    return module


sdk_server = _load_sdk_server()

try:
    import fastmcp
    from fastmcp import Context as FastContext  # resolved from this module's globals
except ImportError:  # the FastMCP tests skip
    fastmcp = None


@pytest.fixture(params=sorted(ERAS))
def era(request: pytest.FixtureRequest) -> tuple[str, str]:
    return ERAS[request.param]


@pytest.fixture
def sdk(era):
    """A client with every handler (a ``Peer``) on a fresh official-SDK ``MCPServer`` object."""
    protocol, _ = era
    peer = Peer()
    client = Client(InProcessTransport(sdk_server.build_server(False)), timeout=10, protocol=protocol)
    peer.install(client)
    client.initialize()
    yield client, peer
    client.close()


@dataclasses.dataclass
class Stop:
    city: str
    nights: int
    note: str | None = None


@dataclasses.dataclass
class Trip:
    stops: list[Stop]
    total: float


def build_fastmcp() -> Any:
    if fastmcp is None:
        pytest.skip("needs fastmcp (the test extra)")
    from fastmcp.exceptions import ToolError as FastToolError

    server = fastmcp.FastMCP("fast-inproc", instructions="in-process FastMCP")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def trip() -> Trip:
        """A made-up trip; nested structured output."""
        return Trip(stops=[Stop("Oslo", 2, "fjords"), Stop("Bergen", 1)], total=310.5)

    @server.tool
    def fail() -> str:
        raise FastToolError("this tool always fails")

    @server.tool
    def explode() -> str:
        raise RuntimeError("boom inside the tool")

    @server.tool
    async def slow(ctx: FastContext, steps: int = 3, seconds: float = 0.3) -> str:
        import anyio

        for i in range(steps):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        return f"done after {steps} steps"

    @server.tool
    async def hang() -> str:
        import anyio

        await anyio.sleep_forever()
        return "never"

    @server.tool
    async def sample(ctx: FastContext, prompt: str) -> str:
        # Server-initiated sampling is not in FastMCP's authoring API: through the SDK session.
        import mcp.types as types

        message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = await ctx.session.create_message(messages=[message], max_tokens=50,
                                                      related_request_id=ctx.request_id)
        return str(result.content.text)

    @server.tool
    async def ask_name(ctx: FastContext) -> str:
        answer = await ctx.elicit("What is your name?", response_type=str)
        return f"{answer.action} {getattr(answer, 'data', None)}"

    @server.resource("data://greeting")
    def greeting() -> str:
        return "hello from fastmcp"

    @server.prompt
    def review(code: str) -> str:
        """Review some code."""
        return f"Please review: {code}"

    return server


@pytest.fixture
def fast():
    server = build_fastmcp()
    peer = Peer()
    client = Client(InProcessTransport(server), timeout=10, protocol="legacy")
    peer.install(client)
    client.initialize()
    yield client, peer
    client.close()


def _mcpclient_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("mcpclient-in-process")]


# -- the official SDK's MCPServer, through the interop suite, in both eras ---------------------


def test_the_handshake_and_era_match_what_the_client_asked_for(sdk, era):
    client, _ = sdk
    suite.check_handshake(client)
    assert client.protocol_version == era[1]


@pytest.mark.parametrize("check", [
    suite.check_ping, suite.check_list_tools, suite.check_text_tool, suite.check_structured_tool,
    suite.check_image_tool, suite.check_error_tool, suite.check_tool_errors_are_results,
    suite.check_progress_reports, suite.check_mixed_content, suite.check_resources,
    suite.check_resource_templates, suite.check_read_missing_resource, suite.check_prompts,
    suite.check_get_prompt, suite.check_completions, suite.check_typed_results,
])
def test_sdk_server_calls(sdk, check):
    check(sdk[0])


@pytest.mark.parametrize("check", [
    suite.check_sampling, suite.check_elicitation_accepted, suite.check_elicitation_declined,
    suite.check_roots, suite.check_log_notification, suite.check_resource_subscription,
    suite.check_tools_list_changed,
])
def test_sdk_server_requests_reach_the_clients_handlers(sdk, check):
    check(*sdk)


def test_a_legacy_server_request_travels_as_a_request_to_the_handler(sdk, era):
    """In the handshake era the server sends ``sampling/createMessage`` itself (in the 2026
    era it is an ``input_required`` result retried by the client): both reach the handler."""
    client, peer = sdk
    assert client.call_tool("sample", {"prompt": "hi"}).text == peer.reply
    assert len(peer.sampling_requests) == 1


def test_a_timed_out_call_is_cancelled_on_the_server_and_the_client_stays_usable(sdk):
    client, _ = sdk
    started = time.monotonic()
    with pytest.raises(RequestTimeout):
        client.call_tool("slow", {"seconds": 30, "steps": 30}, timeout=0.3)
    assert time.monotonic() - started < 0.3 + RELEASED_WITHIN
    assert client.call_tool("echo", {"text": "still here"}).text == "still here"


def test_the_server_records_the_cancel_of_a_timed_out_call(sdk, tmp_path, monkeypatch):
    """The same check as over stdio: the server's own ``slow`` tool sees the cancellation."""
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv("SDK_SERVER_EVENTS", str(events))  # read by the server at each event

    def read_events() -> list[dict[str, Any]]:
        return [json.loads(line) for line in events.read_text().splitlines()] if events.exists() else []

    suite.check_timeout_cancels(sdk[0], read_events)


def test_a_cancelled_call_raises_request_cancelled_at_once(sdk):
    client, _ = sdk
    token = CancelToken()
    threading.Timer(0.2, token.cancel).start()
    started = time.monotonic()
    with pytest.raises(RequestCancelled):
        client.call_tool("slow", {"seconds": 30, "steps": 30}, cancel=token)
    assert time.monotonic() - started < 0.2 + RELEASED_WITHIN
    assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_connect_in_process_returns_an_initialized_client_with_handlers():
    server = sdk_server.build_server(False)
    with connect_in_process(server, timeout=10, protocol="legacy",
                            handlers=Handlers(sampling=lambda request: CreateMessageResult(
                                role="assistant", content={"type": "text", "text": "four"}, model="m"))) as client:
        assert client.server_info.name == "sdk-test-server"
        assert client.call_tool("sample", {"prompt": "2+2?"}).text == "four"


def test_the_lowlevel_server_object_is_accepted():
    server = sdk_server.build_server(False)
    with connect_in_process(server._lowlevel_server, timeout=10) as client:
        assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"result": 5}


# -- FastMCP -----------------------------------------------------------------------------------


def test_fastmcp_tools_structured_output_and_errors(fast):
    client, _ = fast
    assert client.server_info.name == "fast-inproc"
    assert {tool.name for tool in client.list_tools()} >= {"add", "fail", "explode", "slow"}
    result = client.call_tool("add", {"a": 2, "b": 40})
    assert result.structured_content == {"result": 42} and result.text == "42"
    failed = client.call_tool("fail")
    assert failed.is_error and "this tool always fails" in failed.text
    with pytest.raises(ToolError):
        client.call_tool("fail").raise_for_error()


def test_fastmcp_structured_output_has_typed_views_as_fastmcps_own_data_does(fast):
    client, _ = fast
    tools = {tool.name: tool for tool in client.list_tools()}
    added = client.call_tool("add", {"a": 2, "b": 40})
    assert added.output_schema == tools["add"].output_schema and added.data == 42  # {"result": 42} unwrapped
    trip = client.call_tool("trip").data
    assert attrs.has(type(trip)) and attrs.has(type(trip.stops[0]))  # FastMCP drops titles: the names are made up
    assert [(stop.city, stop.nights, stop.note) for stop in trip.stops] == [("Oslo", 2, "fjords"), ("Bergen", 1, None)]
    assert trip.total == 310.5
    assert client.call_tool("trip").structured(Trip) == Trip([Stop("Oslo", 2, "fjords"), Stop("Bergen", 1)], 310.5)


def test_fastmcp_a_tool_that_raises_is_an_error_result_and_the_server_lives_on(fast):
    client, _ = fast
    result = client.call_tool("explode")
    assert result.is_error
    assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2}


def test_fastmcp_resources_and_prompts(fast):
    client, _ = fast
    assert [r.uri for r in client.list_resources()] == ["data://greeting"]
    [contents] = client.read_resource("data://greeting")
    assert contents.text == "hello from fastmcp"
    (prompt,) = client.list_prompts()
    assert prompt.name == "review"
    _, messages = client.get_prompt("review", {"code": "x = 1"})
    assert "Please review: x = 1" in messages[0].content[0].text


def test_fastmcp_sampling_and_elicitation_reach_the_clients_handlers(fast):
    client, peer = fast
    assert client.call_tool("sample", {"prompt": "2+2?"}).text == peer.reply
    assert len(peer.sampling_requests) == 1
    peer.elicitation = ElicitationResult(action="accept", content={"value": "Ann"})
    assert client.call_tool("ask_name").text == "accept Ann"


def test_fastmcp_progress_notifications_reach_on_progress(fast):
    client, _ = fast
    reports: list[tuple[float, Any, Any]] = []
    done = threading.Event()

    def on_progress(progress: float, total: Any, message: Any) -> None:
        reports.append((progress, total, message))
        if len(reports) == 3:
            done.set()

    assert client.call_tool("slow", {"steps": 3}, on_progress=on_progress).text == "done after 3 steps"
    assert done.wait(5), reports
    assert sorted(reports) == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]


def test_fastmcp_a_hanging_tool_ends_at_the_calls_timeout(fast):
    client, _ = fast
    started = time.monotonic()
    with pytest.raises(RequestTimeout):
        client.call_tool("hang", timeout=0.3)
    assert time.monotonic() - started < 0.3 + RELEASED_WITHIN
    assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}


# -- endings -----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [lambda: sdk_server.build_server(False), build_fastmcp], ids=["sdk", "fastmcp"])
def test_close_with_calls_pending_ends_them_and_the_thread_within_two_seconds(make):
    client = connect_in_process(make(), timeout=30, protocol="legacy")
    errors: list[BaseException] = []

    def call() -> None:
        try:
            client.call_tool("slow" if "slow" in {t.name for t in client.list_tools()} else "hang",
                             {"seconds": 30, "steps": 30})
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    callers = [threading.Thread(target=call) for _ in range(3)]
    for caller in callers:
        caller.start()
    wait_for(lambda: len(client._engine._pending) == 3, what="the three calls pending")
    started = time.monotonic()
    client.close()
    for caller in callers:
        caller.join(max(0.0, started + RELEASED_WITHIN - time.monotonic()))
    assert time.monotonic() - started < RELEASED_WITHIN  # (the calls run 30 s)
    assert len(errors) == 3 and not any(caller.is_alive() for caller in callers)
    assert _mcpclient_threads() == []


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_close_does_not_wait_for_a_handler_that_blocks(kind, caplog):
    """A synchronous tool that sleeps (on a worker thread the loop waits for) or an async one
    that blocks the loop: close() still returns within about a second, the caller is released,
    and the left-behind thread ends when the handler does."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("blocking")
    blocking, released = threading.Event(), threading.Event()
    if kind == "sync":
        @server.tool()
        def block(seconds: float) -> str:
            blocking.set()
            released.wait(seconds)
            return "done"
    else:
        @server.tool()
        async def block(seconds: float) -> str:
            blocking.set()
            released.wait(seconds)  # the mistake this test is about: it blocks the loop
            return "done"

    client = connect_in_process(server, timeout=60)
    errors: list[BaseException] = []
    caller = threading.Thread(target=lambda: _collect(errors, client.call_tool, "block", {"seconds": 30}))
    caller.start()
    try:
        assert blocking.wait(RELEASED_WITHIN)
        started = time.monotonic()
        client.close()
        assert time.monotonic() - started < RELEASED_WITHIN  # (the handler holds out 30 s)
        caller.join(RELEASED_WITHIN)
        assert not caller.is_alive() and isinstance(errors[0], ClientClosedError)
        assert "did not stop" in caplog.text
    finally:
        released.set()  # the left-behind thread ends with its handler


def _collect(errors: list[BaseException], fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 - kept for the test's assertion
        errors.append(exc)


def test_close_cancels_a_server_whose_shutdown_hangs():
    import anyio
    from mcp.server.lowlevel import Server

    @contextlib.asynccontextmanager
    async def lifespan(_server: Any) -> Any:
        yield {}
        await anyio.sleep_forever()  # a teardown that never finishes

    client = connect_in_process(Server("stuck", lifespan=lifespan), timeout=60)
    client.ping()
    started = time.monotonic()
    client.close()
    assert time.monotonic() - started < RELEASED_WITHIN
    assert _mcpclient_threads() == []


def test_no_thread_is_left_after_close():
    before = set(threading.enumerate())
    with connect_in_process(sdk_server.build_server(False), timeout=10) as client:
        client.call_tool("slow", {"seconds": 0.1, "steps": 1})
        assert _mcpclient_threads()
    wait_for(lambda: not set(threading.enumerate()) - before, timeout=RELEASED_WITHIN,
             what=lambda: f"no thread left ({[t.name for t in set(threading.enumerate()) - before]})")


def _crashing_server() -> Any:
    """A low-level SDK server whose ``crash`` tool makes the server itself fail (its lifespan's
    task group raises), as a bug outside any handler would: the connection ends."""
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import Server

    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_server: Any) -> Any:
        state["crash"] = anyio.Event()

        async def crash_when_asked() -> None:
            await state["crash"].wait()
            raise RuntimeError("the server crashed")

        async with anyio.create_task_group() as tg:
            tg.start_soon(crash_when_asked)
            yield {}

    async def call_tool(ctx: Any, params: Any) -> Any:
        if params.name == "crash":
            state["crash"].set()
            await anyio.sleep_forever()
        raise RuntimeError(f"the tool {params.name} failed")

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool(name=name, input_schema={"type": "object"})
                                            for name in ("crash", "fails")])

    return Server("crasher", lifespan=lifespan, on_call_tool=call_tool, on_list_tools=list_tools)


def test_a_tool_that_raises_is_an_error_reply_and_the_server_lives_on():
    with connect_in_process(_crashing_server(), timeout=10, protocol="legacy") as client:
        with pytest.raises(RPCError, match="the tool fails failed"):
            client.call_tool("fails")
        client.ping()


def test_a_server_that_fails_ends_the_pending_call_with_connection_closed_at_once():
    client = connect_in_process(_crashing_server(), timeout=30, protocol="legacy")
    try:
        started = time.monotonic()
        # The SDK's dispatcher answers what it still holds with -32000 "Connection closed" as
        # it goes down; what comes after is the connection's end, with the reason.
        with pytest.raises((RPCError, ConnectionClosed)):
            client.call_tool("crash")
        assert time.monotonic() - started < RELEASED_WITHIN  # (not the 30 s timeout)
        with pytest.raises((ConnectionClosed, ClientClosedError), match="the server crashed"):
            client.call_tool("fails")
    finally:
        client.close()
    assert _mcpclient_threads() == []


def test_a_server_that_fails_at_start_up_is_reported_at_connect():
    import mcp.server.lowlevel

    @contextlib.asynccontextmanager
    async def lifespan(_server: Any) -> Any:
        raise RuntimeError("no database")
        yield {}

    started = time.monotonic()
    with pytest.raises(ConnectionClosed, match="no database"):
        connect_in_process(mcp.server.lowlevel.Server("broken", lifespan=lifespan), timeout=60)
    assert time.monotonic() - started < RELEASED_WITHIN  # (not the 60 s timeout)
    assert _mcpclient_threads() == []


def test_a_transport_nobody_closed_stops_its_server_when_collected():
    import gc

    transport = InProcessTransport(sdk_server.build_server(False))
    thread = transport._loop.thread
    assert thread.is_alive()
    del transport
    gc.collect()
    thread.join(2)
    assert not thread.is_alive()


def test_a_script_that_never_closes_its_client_still_exits():
    """Nobody calls close(): the interpreter's exit stops the server (the transport's
    finalizer), so the process ends instead of hanging on the server's thread."""
    import subprocess

    code = (
        "from mcp.server.mcpserver import MCPServer\n"
        "from mcpclient.testing import connect_in_process\n"
        "server = MCPServer('forgotten')\n"
        "server.tool(name='hello')(lambda: 'hi')\n"
        "client = connect_in_process(server, timeout=10)\n"
        "print(client.call_tool('hello').text)\n"
    )
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hi"
    assert time.monotonic() - started < 20


def test_send_after_close_raises_connection_closed_and_close_is_idempotent():
    transport = InProcessTransport(sdk_server.build_server(False))
    transport.close()
    transport.close()
    with pytest.raises(ConnectionClosed):
        transport.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    with pytest.raises(ConnectionClosed):
        transport.receive()


def test_an_object_that_is_no_server_is_refused():
    with pytest.raises(TypeError, match="MCPServer"):
        InProcessTransport(object())


def test_a_server_whose_low_level_server_has_moved_is_refused_clearly():
    server = sdk_server.build_server(False)
    del server._lowlevel_server  # what a future SDK that renames the attribute looks like
    with pytest.raises(TypeError, match="mcp 2.3"):
        InProcessTransport(server)


def test_telemetry_sees_an_in_process_peer():
    transport = InProcessTransport(sdk_server.build_server(False))
    try:
        assert transport.about.peer.network == "inproc" and transport.about.peer.address is None
    finally:
        transport.close()


def test_no_subprocess_is_started():
    before = child_pids()
    with connect_in_process(sdk_server.build_server(False), timeout=10) as client:
        client.call_tool("echo", {"text": "x"})
        assert child_pids() - before == set()


def test_importing_mcpclient_imports_neither_sdk():
    import subprocess

    code = "import mcpclient, mcpclient.testing, sys; print(sorted(m for m in ('mcp', 'fastmcp', 'anyio') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_the_mcp_in_process_fixture_connects_and_closes_after_the_test(mcp_in_process):
    client = mcp_in_process(sdk_server.build_server(False), timeout=10, protocol="legacy")
    assert client.call_tool("echo", {"text": "fixture"}).text == "fixture"
    assert _mcpclient_threads()


def test_the_fixture_closes_what_a_test_left_open(pytester):
    pytester.makepyfile(test_inner="""
        import threading
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("inner")

        @server.tool()
        def hello() -> str:
            return "hi"

        kept = []  # so that only the fixture, not the collector, can stop the server

        def test_leaves_the_client_open(mcp_in_process):
            kept.append(mcp_in_process(server, timeout=10))
            assert kept[0].call_tool("hello").text == "hi"

        def test_no_server_thread_is_left():
            threads = [t.name for t in threading.enumerate() if t.name.startswith("mcpclient-in-process")]
            assert threads == []
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
