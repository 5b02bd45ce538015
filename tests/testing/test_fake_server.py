"""mcpclient.testing.FakeServer: a real Client against an in-process server."""

from __future__ import annotations

import inspect
import threading

import pytest

from mcpclient import (
    Client,
    CompletionRef,
    ConnectionClosed,
    CreateMessageResult,
    ElicitationResult,
    RequestTimeout,
    RPCError,
    ToolContent,
    ToolResult,
)
from mcpclient.testing import FakeServer

pytest_plugins = ["pytester"]


def open_client(fake: FakeServer, **kwargs) -> Client:
    client = Client(fake, timeout=5, **kwargs)
    client.initialize()
    return client


def test_a_client_runs_against_a_fake_server_without_a_subprocess():
    fake = FakeServer(name="calc")

    @fake.tool
    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    with fake, Client(fake, timeout=5) as client:
        assert client.server_info.name == "calc"
        (tool,) = client.list_tools()
        assert tool.description == "Add two numbers."
        assert tool.input_schema == {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a"],
        }
        assert client.call_tool("add", {"a": 2, "b": 3}).text == "5"
    assert fake.tool_calls == [("add", {"a": 2, "b": 3})]


def test_fixed_results_error_results_and_rpc_errors_are_simulated():
    fake = FakeServer()
    fake.add_tool("fixed", result="hello")
    fake.add_tool("fails", result="disk full", is_error=True)
    fake.add_tool("broken", error=RPCError(-32000, "backend down", {"retry": True}))
    fake.add_tool("rich", result=ToolResult(content=[ToolContent(type="image", data="aGk=", mime_type="image/png")]))
    with fake, Client(fake, timeout=5) as client:
        assert client.call_tool("fixed").text == "hello"
        failed = client.call_tool("fails")
        assert failed.is_error and failed.text == "disk full"
        with pytest.raises(RPCError) as info:
            client.call_tool("broken")
        assert (info.value.code, info.value.data) == (-32000, {"retry": True})
        assert client.call_tool("rich").content[0].decoded() == b"hi"


def test_an_exception_in_a_tool_function_becomes_an_is_error_result():
    fake = FakeServer()

    @fake.tool
    def divide(a: float, b: float) -> float:
        return a / b

    with fake, Client(fake, timeout=5) as client:
        result = client.call_tool("divide", {"a": 1, "b": 0})
    assert result.is_error and "ZeroDivisionError" in result.text


def test_a_dict_result_is_sent_as_json_text_and_structured_content():
    fake = FakeServer()
    fake.add_tool("weather", lambda city: {"city": city, "temp": 21})
    with fake, Client(fake, timeout=5) as client:
        result = client.call_tool("weather", {"city": "Oslo"})
    assert result.structured_content == {"city": "Oslo", "temp": 21}
    assert '"temp": 21' in result.text


def test_latency_makes_a_call_time_out():
    fake = FakeServer()
    fake.add_tool("slow", result="late", latency=2.0)
    fake.add_tool("fast", result="ok")
    with fake, Client(fake, timeout=5) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", timeout=0.1)
        assert client.call_tool("fast").text == "ok"
    assert ("notifications/cancelled" in [m for m, _ in fake.notifications])


def test_an_unmet_expectation_fails_verify_listing_expected_and_called():
    fake = FakeServer(name="calc")
    fake.add_tool("add", lambda a, b: a + b)
    fake.expect_call("add", {"a": 1, "b": 2})
    with Client(fake, timeout=5) as client:
        client.call_tool("add", {"a": 1, "b": 3})
    with pytest.raises(AssertionError) as info:
        fake.verify()
    message = str(info.value)
    assert 'expected tools/call add({"a": 1, "b": 2}) 1 time, got 0' in message
    assert 'tools/call add({"a": 1, "b": 3})' in message


def test_strict_mode_reports_calls_to_unregistered_tools():
    fake = FakeServer()
    with Client(fake, timeout=5) as client:
        with pytest.raises(RPCError):
            client.call_tool("nope", {"x": 1})
    with pytest.raises(AssertionError, match="not registered: tools/call nope"):
        fake.verify()


def test_non_strict_mode_ignores_unregistered_calls():
    fake = FakeServer(strict=False)
    with fake, Client(fake, timeout=5) as client:
        with pytest.raises(RPCError):
            client.call_tool("nope")


def test_expectations_count_calls_and_accept_predicates():
    fake = FakeServer()
    fake.add_tool("echo", lambda text: text)
    fake.expect_call("echo", times=2)
    fake.expect_call("echo", lambda args: args["text"].startswith("b"), times=None)
    fake.expect("tools/list")
    with fake, Client(fake, timeout=5) as client:
        client.list_tools()
        client.call_tool("echo", {"text": "a"})
        client.call_tool("echo", {"text": "b"})


def test_leaving_the_with_block_verifies_but_not_when_the_body_raised():
    fake = FakeServer()
    fake.expect_call("never")
    with pytest.raises(AssertionError, match="expected tools/call never"):
        with fake:
            pass
    other = FakeServer()
    other.expect_call("never")
    with pytest.raises(KeyError):
        with other:
            raise KeyError("the test's own failure wins")


def test_an_assertion_inside_a_fake_tool_is_reported_by_verify():
    fake = FakeServer()

    @fake.tool
    def save(name: str) -> str:
        assert name == "expected", "wrong name"
        return "saved"

    with Client(fake, timeout=5) as client:
        assert client.call_tool("save", {"name": "other"}).is_error
    with pytest.raises(AssertionError, match="wrong name"):
        fake.verify()


def test_a_tool_can_ask_the_client_to_sample_and_elicit():
    fake = FakeServer()

    @fake.tool
    def summarize(text: str, ctx) -> str:
        answer = ctx.sample(f"Summarize: {text}", max_tokens=20)
        return answer["content"]["text"]

    @fake.tool
    def book(ctx) -> str:
        reply = ctx.elicit("Which day?", {"type": "object", "properties": {"day": {"type": "string"}}})
        return reply["content"]["day"] if reply["action"] == "accept" else "declined"

    client = Client(fake, timeout=5)
    seen = []
    client.set_sampling_handler(lambda request: seen.append(request) or CreateMessageResult.from_text("short", model="m"))
    client.set_elicitation_handler(lambda request: ElicitationResult(action="accept", content={"day": "Monday"}))
    with fake, client:
        assert client.call_tool("summarize", {"text": "long"}).text == "short"
        assert client.call_tool("book").text == "Monday"
    assert seen[0].messages[0].content == {"type": "text", "text": "Summarize: long"}
    assert fake.client_capabilities == {"sampling": {}, "elicitation": {}}


@pytest.mark.skipif("on_progress" not in inspect.signature(Client.call_tool).parameters,
                    reason="the client has no progress support yet")
def test_a_tool_reports_progress_to_on_progress():
    fake = FakeServer()

    @fake.tool
    def work(ctx) -> str:
        for step in (1, 2, 3):
            ctx.progress(step, 3, f"step {step}")
        return "done"

    reports = []
    done = threading.Event()

    def on_progress(progress, total, message):
        reports.append((progress, total, message))
        if progress == 3:
            done.set()

    with fake, Client(fake, timeout=5) as client:
        assert client.call_tool("work", on_progress=on_progress).text == "done"
        done.wait(2)
    assert reports == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


def test_resources_templates_prompts_and_completions():
    fake = FakeServer()
    fake.add_resource("demo://readme", "# Hello", mime_type="text/markdown")
    fake.add_resource("demo://logo", b"\x89PNG", mime_type="image/png")
    fake.add_resource_template("notes://{name}", lambda name: f"note {name}")

    @fake.prompt
    def review(code: str, style: str = "short") -> str:
        """Review code."""
        return f"Review ({style}): {code}"

    fake.add_completion("review", "code", ["def a()", "def b()", "print()"])
    with fake, Client(fake, timeout=5) as client:
        assert [r.uri for r in client.list_resources()] == ["demo://readme", "demo://logo"]
        assert client.read_resource("demo://readme")[0].text == "# Hello"
        assert client.read_resource("demo://logo")[0].blob == b"\x89PNG"
        assert client.read_resource("notes://x")[0].text == "note x"
        assert client.list_resource_templates()[0].uri_template == "notes://{name}"
        (prompt,) = client.list_prompts()
        assert [(a.name, a.required) for a in prompt.arguments] == [("code", True), ("style", False)]
        _, messages = client.get_prompt("review", {"code": "x=1"})
        assert messages[0].content[0].text == "Review (short): x=1"
        assert client.complete(CompletionRef.prompt("review"), "code", "def").values == ["def a()", "def b()"]


def test_an_unknown_resource_is_a_resource_not_found_error():
    fake = FakeServer(strict=False)
    with fake, Client(fake, timeout=5) as client:
        with pytest.raises(RPCError) as info:
            client.read_resource("demo://missing")
    assert info.value.code == RPCError.RESOURCE_NOT_FOUND


def test_lists_are_paginated_when_page_size_is_set():
    fake = FakeServer(page_size=2)
    for i in range(5):
        fake.add_tool(f"t{i}", result=str(i))
    with fake, Client(fake, timeout=5) as client:
        assert [t.name for t in client.list_tools()] == ["t0", "t1", "t2", "t3", "t4"]
    assert [c.params.get("cursor") for c in fake.calls if c.method == "tools/list"] == [None, "2", "4"]


def test_hang_up_fails_pending_calls_with_connection_closed():
    fake = FakeServer()
    fake.add_tool("slow", result="x", latency=5)
    with Client(fake, timeout=5) as client:
        threading.Timer(0.2, fake.hang_up).start()
        with pytest.raises(ConnectionClosed):
            client.call_tool("slow")


def test_the_server_can_notify_the_client():
    fake = FakeServer()
    got = threading.Event()
    client = Client(fake, timeout=5)
    client.set_notification_handler(lambda method, params: got.set() if method == "notifications/custom" else None)
    with fake, client:
        fake.notify("notifications/custom", {"x": 1})
        assert got.wait(2)


def test_custom_method_handlers_override_the_builtins():
    fake = FakeServer()
    fake.on("tools/list", lambda params: {"tools": [{"name": "odd", "inputSchema": {"type": "object"}}]})
    with fake, Client(fake, timeout=5) as client:
        assert [t.name for t in client.list_tools()] == ["odd"]


def test_the_fake_mcp_fixture_gives_a_fake_server(fake_mcp):
    fake_mcp.add_tool("ping_me", result="pong")
    fake_mcp.expect_call("ping_me")
    with Client(fake_mcp, timeout=5) as client:
        assert client.call_tool("ping_me").text == "pong"


@pytest.mark.fake_mcp(name="configured", strict=False)
def test_the_fixture_takes_constructor_arguments_from_a_marker(fake_mcp):
    assert fake_mcp.name == "configured" and not fake_mcp.strict


def test_the_fixture_fails_a_passing_test_whose_expectations_were_not_met(pytester):
    pytester.makepyfile(test_inner="""
        def test_forgets_to_call(fake_mcp):
            fake_mcp.expect_call("search", {"q": "mcp"})

        def test_fails_on_its_own(fake_mcp):
            fake_mcp.expect_call("search")
            assert False, "the test's own failure"
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(['*expected tools/call search({"q": "mcp"}) 1 time, got 0*'])
    assert "expected tools/call search(any arguments)" not in result.stdout.str()


def test_a_second_client_on_the_same_fake_fails_clearly():
    from mcpclient import MCPError

    fake = FakeServer()
    with Client(fake, timeout=5):
        second = Client(fake, timeout=2)
        with pytest.raises(MCPError, match="one FakeServer per Client"):
            second.initialize()
        second.close()


def test_capabilities_can_be_narrowed_to_test_capability_errors():
    from mcpclient import CapabilityError

    fake = FakeServer(capabilities={"tools": {}})
    with fake, Client(fake, timeout=5) as client:
        with pytest.raises(CapabilityError):
            client.list_prompts()
