"""The policy gate's argument rules fail closed (issue 44, item 2), against a real official-SDK
file server (tests/servers/sdk_file_server.py) that reads paths as lenient servers do.

A value a rule cannot judge (``~``, ``$HOME``, a NUL, blanks around it, a non-string, a
relative path where the server's directory is not known) matches a ``deny`` or ``ask`` rule
and never an ``allow`` one; a list triggers a ``deny`` when any item is under the root; a
relative path is judged against the directory the stdio server was started in. What the
server opened is checked in its own record, not only in what the client got back.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

import mcpclient
from mcpclient import ToolCallDenied
from mcpclient.policy import OneOf, Policy, Rule, Under

from ..conftest import SERVERS
from ..http.conftest import ServerProcess, start_sdk_server

pytestmark = pytest.mark.timeout(120)

FILE_SERVER = SERVERS / "sdk_file_server.py"
SECRET = "TOP-SECRET-KEY"


class Tree:
    """``home/``, ``data/harmless.txt``, ``secret/key.txt``, and the server's record of reads."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.data = root / "data"
        self.secret = root / "secret"
        for folder in (self.home, self.data, self.secret):
            folder.mkdir()
        self.harmless = self.data / "harmless.txt"
        self.harmless.write_text("harmless\n")
        self.key = self.secret / "key.txt"
        self.key.write_text(SECRET + "\n")
        self.record = root / "reads.log"

    def reads(self) -> list[str]:
        """The files the server opened, resolved (its own record)."""
        return self.record.read_text().splitlines() if self.record.exists() else []

    def connect(self, policy: Policy, *options: str, cwd: Path | None = None) -> mcpclient.Client:
        return mcpclient.connect([sys.executable, str(FILE_SERVER), "--record", str(self.record), *options],
                                 plugins=mcpclient.Plugins(policy=policy),
                                 stdio=mcpclient.Stdio(env={"HOME": str(self.home)}, cwd=cwd), timeout=30)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path.resolve())


def no_secrets(tree: Tree) -> Policy:
    """Reads are allowed, except of anything under ``secret/`` (``path`` or ``paths``)."""
    return Policy([Rule("deny", arguments=[Under("path", tree.secret)], name="no secrets"),
                   Rule("deny", arguments=[Under("paths", tree.secret)], name="no secrets (lists)"),
                   Rule("allow", annotations={"readOnlyHint": True}, name="reads")], default="deny")


def refused(client: mcpclient.Client, tool: str, arguments: dict[str, Any]) -> ToolCallDenied:
    with pytest.raises(ToolCallDenied) as caught:
        result = client.call_tool(tool, arguments)
        assert SECRET not in result.text, f"{arguments!r} read the secret"
    return caught.value


def test_what_a_deny_rule_cannot_judge_is_denied_and_never_read(tree: Tree) -> None:
    key = str(tree.key)
    tricks: list[tuple[str, dict[str, Any]]] = [
        ("read_text", {"path": "~/../secret/key.txt"}),  # the server's HOME is home/
        ("read_text", {"path": "$HOME/../secret/key.txt"}),
        ("read_text", {"path": " " + key}),  # blanks the server strips
        ("read_text", {"path": key + "\x00.txt"}),  # a server in C stops at the NUL
        ("read_text", {"path": {"dir": str(tree.secret), "name": "key.txt"}}),  # not a string
        ("read_text", {"path": [str(tree.secret), "key.txt"]}),  # parts: one of them is under the root
        ("read_text", {"path": None}),
        ("read_many", {"paths": [str(tree.harmless), key]}),  # one item is under the root
        ("read_many", {"paths": []}),
    ]
    with tree.connect(no_secrets(tree)) as client:
        assert client.call_tool("read_text", {"path": str(tree.harmless)}).text == "harmless\n"
        for tool, arguments in tricks:
            denial = refused(client, tool, arguments)
            assert denial.rule.startswith("no secrets"), (arguments, denial)
        assert client.call_tool("read_many", {"paths": [str(tree.harmless)]}).text == "harmless\n"
    assert tree.reads() == [str(tree.harmless)] * 2  # the server opened the harmless file, nothing else


def test_an_argument_left_out_is_judged_at_the_default_the_tool_lists(tree: Tree) -> None:
    with tree.connect(no_secrets(tree), "--default-path", str(tree.key)) as client:
        assert refused(client, "read_default", {}).rule == "no secrets"
        assert client.call_tool("read_default", {"path": str(tree.harmless)}).text == "harmless\n"
    with tree.connect(no_secrets(tree), "--default-path", str(tree.harmless)) as client:
        assert client.call_tool("read_default", {}).text == "harmless\n"
    assert tree.reads() == [str(tree.harmless)] * 2


def test_a_relative_path_is_judged_where_the_stdio_server_runs(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree.data)  # the client runs in data/, the server in secret/
    only_data = Policy([Rule("allow", tool="read_text", arguments=[Under("path", tree.data)], name="data")],
                       default="deny")
    with tree.connect(only_data, cwd=tree.secret) as client:
        assert refused(client, "read_text", {"path": "key.txt"}).rule == "default"
        assert client.call_tool("read_text", {"path": "../data/harmless.txt"}).text == "harmless\n"
    with tree.connect(no_secrets(tree), cwd=tree.secret) as client:
        assert refused(client, "read_text", {"path": "key.txt"}).rule == "no secrets"
        assert refused(client, "read_text", {"path": "./key.txt"}).rule == "no secrets"
    assert tree.reads() == [str(tree.harmless)]


@pytest.fixture
def http_server(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServerProcess]:
    monkeypatch.chdir(tree.secret)  # the server's directory, which an HTTP client cannot know
    server = start_sdk_server("--record", str(tree.record), script=FILE_SERVER, env={"HOME": str(tree.home)})
    monkeypatch.chdir(tree.data)
    try:
        yield server
    finally:
        server.stop()


def test_a_relative_path_to_an_http_server_cannot_be_judged(tree: Tree, http_server: ServerProcess) -> None:
    only_data = Policy([Rule("allow", tool="read_text", arguments=[Under("path", tree.data)], name="data")],
                       default="deny")
    with mcpclient.connect(http_server.url, plugins=mcpclient.Plugins(policy=only_data), timeout=30) as client:
        assert refused(client, "read_text", {"path": "key.txt"}).rule == "default"
        assert refused(client, "read_text", {"path": "harmless.txt"}).rule == "default"  # here too
        assert client.call_tool("read_text", {"path": str(tree.harmless)}).text == "harmless\n"
    with mcpclient.connect(http_server.url, plugins=mcpclient.Plugins(policy=no_secrets(tree)), timeout=30) as client:
        assert refused(client, "read_text", {"path": "key.txt"}).rule == "no secrets"
    assert tree.reads() == [str(tree.harmless)]


def test_a_number_the_server_would_coerce_matches_a_deny_rule(tree: Tree) -> None:
    whole = Policy([Rule("deny", tool="read_count", arguments=[OneOf("lines", [0])], name="no whole files"),
                    Rule("allow", annotations={"readOnlyHint": True})], default="deny")
    with tree.connect(whole) as client:
        assert client.call_tool("read_count", {"path": str(tree.harmless), "lines": 1}).text == "harmless"
        for lines in (0, "0", 0.0, False, " 0", None, [0]):
            assert refused(client, "read_count", {"path": str(tree.key), "lines": lines}).rule == "no whole files"
    assert tree.reads() == [str(tree.harmless)]


def test_a_tool_name_the_server_does_not_list_is_judged_loosely(tree: Tree) -> None:
    policy = Policy([Rule("deny", tool="read_many", name="no batches")], default="allow")
    with tree.connect(policy) as client:
        for name in ("READ_MANY", "read-many", " read_many", "Read.Many"):
            assert refused(client, name, {"paths": [str(tree.key)]}).rule == "no batches", name
        assert client.call_tool("read_text", {"path": str(tree.harmless)}).text == "harmless\n"  # listed: exact
    assert tree.reads() == [str(tree.harmless)]
