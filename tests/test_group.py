"""ClientGroup: many servers, prefixed tools, routed calls, failures kept apart."""

from __future__ import annotations

import json
import time

import pytest

from mcpclient import ClientGroup, ConnectionClosed, RequestTimeout, ToolError, TransportError
from mcpclient.group import UnknownToolError
from mcpclient.testing import FakeServer

from tests.conftest import DEMO_SERVER
from tests.helpers import RELEASED_WITHIN


def calc_server(name: str = "calc") -> FakeServer:
    fake = FakeServer(name=name)
    fake.add_tool("add", lambda a, b: a + b, description="Add.")
    return fake


def test_tools_of_every_server_are_listed_under_a_prefix():
    weather = FakeServer(name="weather")
    weather.add_tool("forecast", result="sunny")
    with ClientGroup({"calc": calc_server(), "weather": weather}, timeout=5) as group:
        assert [t.name for t in group.list_tools()] == ["calc__add", "weather__forecast"]
        assert group.list_tools()[0].description == "Add."
        assert group.errors == {}


def test_calls_are_routed_to_the_right_server_with_the_original_name():
    one, two = calc_server(), calc_server()
    with ClientGroup({"one": one, "two": two}, timeout=5) as group:
        assert group.call_tool("two__add", {"a": 1, "b": 2}).text == "3"
    assert one.tool_calls == [] and two.tool_calls == [("add", {"a": 1, "b": 2})]


def test_a_call_routes_without_listing_first():
    with ClientGroup({"calc": calc_server()}, timeout=5) as group:
        assert group.call_tool("calc__add", {"a": 2, "b": 2}).text == "4"


def test_the_separator_is_configurable_and_names_are_sanitized():
    fake = FakeServer()
    fake.add_tool("files.read/v2", result="ok")
    with ClientGroup({"my server": fake}, separator="-", timeout=5) as group:
        (tool,) = group.list_tools()
        assert tool.name == "my_server-files_read_v2"
        assert group.call_tool(tool.name).text == "ok"
    assert fake.tool_calls == [("files.read/v2", {})]


def test_long_and_colliding_names_stay_unique_and_within_64_characters():
    fake = FakeServer()
    fake.add_tool("a.b", result="1")
    fake.add_tool("a_b", result="2")
    fake.add_tool("x" * 80, result="3")
    with ClientGroup({"s": fake}, timeout=5) as group:
        names = [t.name for t in group.list_tools()]
        assert names[:2] == ["s__a_b", "s__a_b_2"]
        assert len(names[2]) == 64
        assert [group.call_tool(n).text for n in names] == ["1", "2", "3"]


def test_sanitizing_can_be_turned_off():
    fake = FakeServer()
    fake.add_tool("a.b", result="1")
    with ClientGroup({"s": fake}, sanitize=False, separator=".", timeout=5) as group:
        assert [t.name for t in group.list_tools()] == ["s.a.b"]
        assert group.call_tool("s.a.b").text == "1"


def test_a_failing_server_is_reported_without_taking_down_the_others():
    with ClientGroup({"broken": ["/nonexistent/server-binary"], "calc": calc_server()}, timeout=5) as group:
        assert set(group.errors) == {"broken"}
        assert isinstance(group.errors["broken"], TransportError)
        assert [t.name for t in group.list_tools()] == ["calc__add"]
        assert "broken" not in group and "calc" in group
        with pytest.raises(KeyError, match="server 'broken' is not open: cannot start"):
            group["broken"]
        with pytest.raises(UnknownToolError, match="server 'broken' is not available"):
            group.call_tool("broken__anything")


def test_a_server_that_does_not_open_in_time_is_a_timeout_error_and_others_are_open():
    slow = FakeServer(latency=30.0)  # even initialize is slow: an open that waited, 30 s
    start = time.monotonic()
    group = ClientGroup({"slow": slow, "calc": calc_server()}, open_timeout=0.3, timeout=5).open()
    try:
        assert time.monotonic() - start < 0.3 + RELEASED_WITHIN
        assert isinstance(group.errors["slow"], RequestTimeout)
        assert isinstance(group.errors["slow"], TimeoutError)
        assert list(group) == ["calc"]
    finally:
        group.close()


def test_an_unknown_tool_raises_unknown_tool_error_listing_the_known_ones():
    with ClientGroup({"calc": calc_server()}, timeout=5) as group:
        with pytest.raises(UnknownToolError, match=r"no server in this group offers a tool 'calc__mul' \(known: calc__add\)"):
            group.call_tool("calc__mul")
        with pytest.raises(LookupError):
            group.route("nope")


def test_a_server_dying_later_is_recorded_while_listing():
    dying, calc = calc_server(), calc_server()
    with ClientGroup({"dying": dying, "calc": calc}, timeout=5) as group:
        dying.hang_up()
        time.sleep(0.1)
        assert [t.name for t in group.list_tools()] == ["calc__add"]
        assert isinstance(group.errors["dying"], ConnectionClosed)


def test_group_tools_run_through_the_group():
    with ClientGroup({"calc": calc_server()}, timeout=5) as group:
        (tool,) = group.tools()
        assert tool.name == "calc__add" and tool.client is group
        assert tool.execute('{"a": 5, "b": 6}') == "11"


def test_tool_errors_keep_their_meaning_through_the_group():
    fake = FakeServer()
    fake.add_tool("fail", result="no", is_error=True)
    with ClientGroup({"f": fake}, timeout=5) as group:
        with pytest.raises(ToolError):
            group.tools()[0].execute({})


def test_closing_the_group_closes_every_client():
    one, two = calc_server(), calc_server()
    group = ClientGroup({"one": one, "two": two}, timeout=5).open()
    group.close()
    assert one.closed and two.closed and len(group) == 0
    group.close()  # idempotent


def test_from_config_opens_real_servers_and_picks_names(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "demo": {"command": DEMO_SERVER[0], "args": DEMO_SERVER[1:]},
        "unset": {"url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer ${NOPE_NOT_SET}"}},
        "other": {"command": "unused"}}}))
    with ClientGroup.from_config(path, names=["demo", "unset"], timeout=10) as group:
        assert "NOPE_NOT_SET" in str(group.errors["unset"])
        assert group.call_tool("demo__add", {"a": 2, "b": 5}).text == "7"
        assert "demo__shout" in [t.name for t in group.list_tools()]


def test_from_config_rejects_unknown_names(tmp_path):
    from mcpclient.config import ConfigError

    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    with pytest.raises(ConfigError, match="no server named 'b'"):
        ClientGroup.from_config(path, names=["b"])


def test_the_call_timeout_is_the_groups_or_the_default_not_the_open_timeout():
    from mcpclient import DEFAULT_TIMEOUT

    with ClientGroup({"a": calc_server()}, open_timeout=3) as group:
        assert group["a"].timeout == DEFAULT_TIMEOUT
    with ClientGroup({"a": calc_server()}, open_timeout=3, timeout=7) as group:
        assert group["a"].timeout == 7
