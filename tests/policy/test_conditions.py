"""The three outcomes of a rule's conditions (holds, does not hold, cannot tell), judged on
values as a call sends them; the gate's tests against real servers are in test_policy.py and
tests/security/test_policy_paths.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from mcpclient.policy import Decision, MaxSize, OneOf, Policy, Rule, ToolCall, Under


def under(value: Any, root: Path, directory: str | None = None) -> bool | None:
    return Under("p", root).check({"p": value}, directory=directory)


def test_a_path_holds_does_not_or_cannot_tell(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    assert under(str(data / "a"), data) is True
    assert under(str(tmp_path / "b"), data) is False
    assert under(data.as_uri() + "/a%20b", data) is True  # decoded or not, inside
    assert under(data.as_uri() + "/%2e%2e/x", data) is None  # outside decoded, inside as sent
    for unjudged in ("~/a", "$HOME/a", f"{data}/$X", " " + str(data), str(data) + "\x00", f"{data}\\..\\x",
                     "file://host" + str(data), data.as_uri() + "?x", data.as_uri() + "#x", "", 1, None, {}):
        assert under(unjudged, data) is None, unjudged
    assert under("a", data) is None  # relative, and the server's directory is not known
    assert under("a", data, directory=str(data)) is True
    assert under("../x", data, directory=str(data)) is False


def test_a_list_holds_when_every_item_does_and_fails_only_when_none_does(tmp_path: Path) -> None:
    inside, outside = str(tmp_path / "a"), "/elsewhere"
    assert under([inside, inside], tmp_path) is True
    assert under([outside, outside], tmp_path) is False
    assert under([inside, outside], tmp_path) is None
    assert under([outside, "~"], tmp_path) is None
    assert under([], tmp_path) is None
    assert under([[inside], [inside]], tmp_path) is True
    deep: Any = inside
    for _ in range(40):
        deep = [deep]
    assert under(deep, tmp_path) is None


def test_roots_are_made_absolute_and_home_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert Under("p", "~/data").roots == (str(tmp_path / "data"),)
    monkeypatch.chdir(tmp_path)
    assert Under("p", "rel").roots == (str(tmp_path / "rel"),)
    for bad in ("", "a\x00b"):
        with pytest.raises(ValueError):
            Under("p", bad)


@pytest.mark.parametrize(("value", "verdict"), [
    (0, True), ("0", None), (" 0", None), (0.0, None), (False, None), ("false", None), ("no", None),
    (None, None), ({"n": 0}, None), (1, False), ("one", False), ([0], True), ([0, 1], None), ([1, 2], False),
])
def test_one_of_tells_a_value_a_lenient_server_would_take_for_a_listed_one(value: Any, verdict: bool | None) -> None:
    assert OneOf("n", [0]).check({"n": value}) is verdict


def test_one_of_strings_and_whole_lists() -> None:
    assert OneOf("m", ["delete"]).check({"m": "delete"}) is True
    assert OneOf("m", ["delete"]).check({"m": "Delete "}) is None
    assert OneOf("m", ["delete"]).check({"m": "read"}) is False
    assert OneOf("m", [["a", "b"]]).check({"m": ["a", "b"]}) is True


def test_an_argument_left_out() -> None:
    assert OneOf("n", [0]).check({}) is False
    assert OneOf("n", [0]).check({}, defaults={"n": 0}) is True
    assert MaxSize("n", 1).check({}) is True
    assert MaxSize("n", 1).check({}, defaults={"n": "too long"}) is False
    assert MaxSize(None, 7).check({"a": 1}) is True  # {"a":1}


def call(tool: str = "t", annotations: dict[str, Any] | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(tool=tool, arguments=arguments, annotations=annotations)


def test_a_rule_that_cannot_tell_matches_deny_and_ask_never_allow() -> None:
    unjudged = call(annotations={}, path="~/x")
    for action, matches in (("deny", True), ("ask", True), ("allow", False)):
        assert Rule(action, arguments=[Under("path", "/srv")]).matches(unjudged) is matches  # type: ignore[arg-type]
    # A condition that fails decides, however another cannot tell.
    assert Rule("deny", tool="other", arguments=[Under("path", "/srv")]).verdict(unjudged) is False
    policy = Policy([Rule("deny", arguments=[Under("path", "/srv")], name="srv")], default="allow")
    assert policy.decide(unjudged) == Decision(action="deny", rule="srv", certain=False)
    assert policy.decide(call(annotations={}, path="/srv/a")) == Decision(action="deny", rule="srv", certain=True)


def test_hints_of_a_tool_the_server_does_not_list_cannot_be_told() -> None:
    reads = Rule("allow", annotations={"readOnlyHint": True})
    not_destructive = Rule("deny", annotations={"destructiveHint": False})
    assert reads.verdict(call(annotations={"readOnlyHint": True})) is True
    assert reads.verdict(call(annotations={})) is False  # listed with no hints: the spec's defaults
    assert reads.verdict(call(annotations=None)) is None  # not listed
    assert reads.verdict(call(annotations={"readOnlyHint": "yes"})) is None
    assert not_destructive.matches(call(annotations=None))
    assert not not_destructive.matches(call(annotations={}))


def test_a_tool_name_the_server_does_not_list_is_judged_leniently() -> None:
    rule = Rule("deny", tool="delete_*")
    assert rule.verdict(call("delete_all", annotations={})) is True
    assert rule.verdict(call("Delete-All", annotations={})) is False  # the server lists this name
    assert rule.verdict(call("Delete-All")) is None
    assert rule.verdict(call("ｄｅｌｅｔｅ_all")) is None  # full-width letters fold to ASCII
    assert rule.verdict(call("read_file")) is False


def test_the_server_directory_is_where_a_stdio_server_starts(tmp_path: Path) -> None:
    import sys

    from mcpclient.transports import StdioTransport

    transport = StdioTransport([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path)
    try:
        assert transport.about.directory == str(tmp_path)
    finally:
        transport.close()
    here = StdioTransport([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert here.about.directory == os.getcwd()
    finally:
        here.close()
