"""SharedClient and SharedGroup with real stdio servers: one per process, reopened as needed."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import threading
import typing
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import mcpclient
from mcpclient import Client, ConnectionClosed, RequestTimeout, SharedClient, SharedGroup
from mcpclient._build.delegates import delegating, public_members
from mcpclient._build.shared import CHANGE_NOTHING_CALLS, COMPOSED, HAND_WRITTEN, SEEN, TOOL_CALLS
from mcpclient._core.timeouts import DEFAULT
from mcpclient.transports.stdio import StdioTransport
from tests.conftest import DEMO_SERVER, SDK_SERVER, child_pids
from tests.faults.forking import in_child
from tests.helpers import require_mcp_sdk, wait_for

WEB_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "web_server.py")]


@pytest.fixture
def shared():
    mcp = SharedClient(WEB_SERVER, timeout=10)
    yield mcp
    mcp.close()


def test_shared_client_has_every_public_client_member_with_its_signature_and_docstring():
    """Read from Client itself: a member added to Client is checked here with nothing added by hand."""
    assert not issubclass(SharedClient, Client)  # a Client only for type checkers: nothing is inherited
    members = public_members(Client)
    assert {"call_tool", "list_tools", "set_roots", "server_info", "map_tool"} <= set(members)
    for name, member in members.items():
        ours = inspect.getattr_static(SharedClient, name)
        if isinstance(member, property):
            assert isinstance(ours, property), name
            assert name in HAND_WRITTEN or ours.__doc__ == member.__doc__, name
            continue
        assert inspect.signature(ours) == inspect.signature(member), name
        if name in HAND_WRITTEN:
            assert ours is not member and ours.__doc__, f"{name}: hand-written, with a docstring of its own"
        else:
            assert (ours.__doc__, ours.__name__) == (member.__doc__, name), name
            assert typing.get_type_hints(ours) == typing.get_type_hints(member), name


def test_a_generated_delegate_reopens_after_the_server_died_and_retries_only_what_changes_nothing():
    require_mcp_sdk()
    failing, safe = SharedClient(SDK_SERVER, timeout=20), SharedClient(SDK_SERVER, timeout=20, retry="safe")
    try:
        for shared in (failing, safe):
            os.kill(shared.get().transport.pid, signal.SIGKILL)
            wait_for(lambda shared=shared: shared.get().transport.returncode is not None)
        with pytest.raises(ConnectionClosed):  # retry="fail": that call fails, the next one reopens
            failing.read_resource("test://text")
        assert failing.read_resource("test://text")[0].text and failing.opened == 2
        assert safe.read_resource("test://text")[0].text and safe.opened == 2  # sent again, to a new server
        os.kill(safe.get().transport.pid, signal.SIGKILL)
        wait_for(lambda: safe.get().transport.returncode is not None)
        with pytest.raises(ConnectionClosed):  # a vendor request may change something: never sent twice
            safe.request("ping")
        assert safe.get_prompt("greet", {"name": "Ada"})[1] and safe.opened == 3
    finally:
        failing.close()
        safe.close()


def test_a_setting_made_by_a_generated_delegate_is_applied_to_the_next_client():
    require_mcp_sdk()
    shared = SharedClient(SDK_SERVER, timeout=20)
    try:
        first = shared.get()
        shared.set_roots(["file:///srv/one"])
        assert "file:///srv/one" in shared.call_tool("roots").text
        shared.close()
        assert shared.get() is not first and "file:///srv/one" in shared.call_tool("roots").text
    finally:
        shared.close()


def test_opens_lazily_once_for_many_threads_and_reopens_after_close(shared):
    assert child_pids() == set() and shared.opened == 0 and "not open" in repr(shared)
    start = threading.Barrier(16)

    def call(i: int) -> str:
        start.wait(5)
        return shared.call_tool("add", {"a": i, "b": 1}).text

    with ThreadPoolExecutor(16) as pool:
        assert list(pool.map(call, range(64))) == [str(i + 1) for i in range(64)]
    assert shared.opened == 1 and len(child_pids()) == 1
    server = shared.call_tool("whoami").text
    assert f"server pid {server}" in repr(shared)
    shared.close()
    wait_for(lambda: child_pids() == set())
    assert shared.call_tool("whoami").text != server and shared.opened == 2


def test_a_dead_server_fails_that_call_and_the_next_call_opens_a_new_one(shared):
    first = shared.call_tool("whoami").text
    os.kill(int(first), signal.SIGKILL)
    with pytest.raises(ConnectionClosed):
        wait_for(lambda: shared.call_tool("whoami") and False, timeout=3)
    assert shared.call_tool("whoami").text != first
    assert shared.opened == 2 and "ConnectionClosed" in shared.last_error
    assert "ConnectionClosed" in repr(shared)


def test_retry_safe_retries_reads_and_read_only_tools_but_never_other_tools(tmp_path):
    mcp = SharedClient(WEB_SERVER, timeout=10, retry="safe")
    try:
        os.kill(int(mcp.call_tool("whoami").text), signal.SIGKILL)
        wait_for(lambda: mcp.get().transport.returncode is not None)
        assert [t.name for t in mcp.list_tools()][:2] == ["add", "shout"]  # retried on a new server
        assert mcp.opened == 2
        # Annotations unknown to this process yet: learned from the new server before deciding.
        fresh = SharedClient(WEB_SERVER, timeout=10, retry="safe")
        try:
            # (the tool named by keyword: the delegate finds it there too)
            assert fresh.call_tool(name="lookup", arguments={"marker": str(tmp_path / "a")}).text.startswith("ok ")
            assert fresh.opened == 2
            with pytest.raises(ConnectionClosed):
                fresh.call_tool("write", {"marker": str(tmp_path / "b")})
            assert fresh.opened == 3
        finally:
            fresh.close()
    finally:
        mcp.close()


def test_retry_fail_fails_even_a_read_only_tool(shared, tmp_path):
    with pytest.raises(ConnectionClosed):
        shared.call_tool("lookup", {"marker": str(tmp_path / "m")})
    assert shared.call_tool("lookup", {"marker": str(tmp_path / "m")}).text.startswith("ok ")


def test_a_hung_open_blocks_other_threads_only_for_lock_timeout():
    release, entered = threading.Event(), threading.Event()

    def slow_open() -> Client:
        entered.set()
        release.wait(5)
        return mcpclient.connect(DEMO_SERVER, timeout=10)

    mcp = SharedClient(slow_open, lock_timeout=0.2)
    opener = threading.Thread(target=mcp.initialize)
    opener.start()
    try:
        assert entered.wait(5)
        with pytest.raises(RequestTimeout, match="another thread opening"):
            mcp.ping()
    finally:
        release.set()
        opener.join(10)
    assert mcp.call_tool("add", {"a": 1, "b": 1}).text == "2" and mcp.opened == 1
    mcp.close()


def test_fork_after_use_both_directions_each_process_has_its_own_server(shared):
    parent_server = int(shared.call_tool("whoami").text)

    def child() -> str:
        answer = shared.call_tool("add", {"a": 2, "b": 3}).text
        server = int(shared.call_tool("whoami").text)
        mine = child_pids()
        # a grandchild: the child's client used before the fork, the grandchild reopens
        grand = in_child(lambda: shared.call_tool("whoami").text)
        again = int(shared.call_tool("whoami").text)
        shared.close()
        return json.dumps({"answer": answer, "server": server, "mine": sorted(mine), "grand": grand,
                           "again": again, "opened": shared.opened})

    result = json.loads(in_child(child, timeout=20))
    assert result["answer"] == "5" and result["server"] != parent_server
    assert result["mine"] == [result["server"]] and result["again"] == result["server"]
    assert int(result["grand"]) not in (result["server"], parent_server)
    # The parent's client kept its server, and neither side closed the other's.
    assert int(shared.call_tool("whoami").text) == parent_server
    assert child_pids() == {parent_server} and shared.opened == 1


def test_fork_before_use_the_parent_opens_its_own_later(shared):
    result = in_child(lambda: shared.call_tool("whoami").text)
    assert result.isdigit()
    assert shared.opened == 0
    assert shared.call_tool("whoami").text != result


def test_a_lock_held_at_fork_time_does_not_hang_the_child():
    release, entered = threading.Event(), threading.Event()
    parent = os.getpid()

    def slow_open() -> Client:
        if os.getpid() == parent:  # only the parent's open hangs
            entered.set()
            release.wait(5)
        return mcpclient.connect(DEMO_SERVER, timeout=10)

    mcp = SharedClient(slow_open, lock_timeout=3)
    opener = threading.Thread(target=mcp.initialize)
    opener.start()
    try:
        assert entered.wait(5)
        # The child inherits the lock held by the opener thread (which does not exist there).
        assert in_child(lambda: mcp.call_tool("add", {"a": 1, "b": 2}).text, timeout=15) == "3"
    finally:
        release.set()
        opener.join(10)
        mcp.close()


def test_health_reports_the_server_and_a_failure_without_raising(tmp_path):
    mcp = SharedClient(WEB_SERVER, timeout=10)
    try:
        health = mcp.health()
        assert health["ok"] is True and health["opened"] == 1 and health["pid"] == os.getpid()
        assert health["server"] == f"pid {mcp.get().transport.pid}"
    finally:
        mcp.close()
    broken = SharedClient([str(tmp_path / "no-such-server")], timeout=2)
    health = broken.health()
    assert health["ok"] is False and health["server"] is None and health["last_error"].startswith("TransportError")
    json.dumps(health)


def test_tools_accepts_a_shared_client_and_a_shared_group(shared, tmp_path):
    tools = {tool.name: tool for tool in mcpclient.tools(shared)}
    assert tools["add"].execute({"a": 2, "b": 40}) == "42" and tools["add"].client is shared
    group = SharedGroup({"math": DEMO_SERVER, "web": WEB_SERVER}, timeout=10)
    try:
        names = [tool.name for tool in mcpclient.tools(group)]
        assert "math__add" in names and "web__whoami" in names
        assert group.call_tool("math__add", {"a": 1, "b": 2}).text == "3"
        assert group.health()["ok"] is True and group.opened == 1
        web = int(group.call_tool("web__whoami").text)
        os.kill(web, signal.SIGKILL)
        with pytest.raises(ConnectionClosed):
            wait_for(lambda: group.call_tool("web__whoami") and False, timeout=3)
        assert int(group.call_tool("web__whoami").text) != web and group.opened == 2
        child = in_child(lambda: group.call_tool("web__whoami").text)
        assert child.isdigit() and int(child) != web
    finally:
        group.close()


def test_shared_group_from_config_picks_names(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "math": {"command": DEMO_SERVER[0], "args": DEMO_SERVER[1:]},
        "other": {"command": "/nonexistent"},
    }}))
    group = SharedGroup.from_config(config, names=["math"], timeout=10)
    try:
        assert [tool.name for tool in group.list_tools()] == ["math__add", "math__shout"]
        assert "1 open, 0 failed" in repr(group)
    finally:
        group.close()


def test_the_interpreter_closes_the_shared_client_at_exit():
    # An atexit handler registered before mcpclient's runs after it: the server must be gone
    # by then (closed by SharedClient, not by the watchdog after this process ended).
    code = (
        "import atexit, os, sys\n"
        "pids = []\n"
        "def check():\n"
        "    pid = pids[0]\n"
        "    print('alive' if os.path.exists(f'/proc/{pid}') and open(f'/proc/{pid}/stat').read().split(')')[1].split()[0] != 'Z' else 'gone')\n"
        "atexit.register(check)\n"
        "import mcpclient\n"
        f"mcp = mcpclient.SharedClient({DEMO_SERVER!r}, timeout=10)\n"
        "mcp.call_tool('add', {'a': 1, 'b': 2})\n"
        "pids.append(mcp.get().transport.pid)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=env)
    assert out.stdout.strip() == "gone", out.stderr


class Wider(Client):
    """A Client with a method and a setting SharedClient has never heard of."""

    suffix = ""

    def shout(self, text: str, *, timeout: float | None = DEFAULT) -> str:
        """The server's echo of ``text``, in capitals."""
        return self.call_tool("echo", {"text": text}, timeout=timeout).text.upper() + self.suffix

    def set_suffix(self, suffix: str) -> None:
        """What ``shout`` adds to each answer."""
        self.suffix = suffix


def open_wider() -> Wider:
    client = Wider(StdioTransport(SDK_SERVER), timeout=20)
    client.initialize()
    return client


def test_a_method_added_to_client_is_delegated_with_nothing_written_for_it():
    require_mcp_sdk()

    @delegating(Wider, hand_written=HAND_WRITTEN, retried=CHANGE_NOTHING_CALLS | {"shout"}, composed=COMPOSED,
                tool_calls=TOOL_CALLS, seen=SEEN)
    class SharedWider(SharedClient):
        pass

    for name in ("shout", "set_suffix"):
        ours, theirs = getattr(SharedWider, name), getattr(Wider, name)
        assert (inspect.signature(ours), ours.__doc__) == (inspect.signature(theirs), theirs.__doc__)
    shared = SharedWider(open_wider, retry="safe")
    try:
        shared.set_suffix("!")  # a setting: kept for every client opened later
        assert shared.shout("hi") == "HI!"
        os.kill(shared.get().transport.pid, signal.SIGKILL)
        wait_for(lambda: shared.get().transport.returncode is not None)
        assert shared.shout("again") == "AGAIN!" and shared.opened == 2  # declared a read: sent again
        assert shared.call_tool("add", {"a": 1, "b": 2}).structured_content["result"] == 3  # hand-written, inherited
    finally:
        shared.close()


USER_PROGRAM = '''
from mcpclient import Page, SharedClient
from mcpclient.types import ToolDef, ToolResult

shared = SharedClient(["python", "server.py"])
everything: list[ToolDef] = shared.list_tools()
one_page: Page[ToolDef] = shared.list_tools(cursor=None)
result: ToolResult = shared.call_tool("add", {"a": 1})
results = list(shared.map_tool("add", [{"a": 1}]))
version: str = shared.protocol_version
shared.set_roots(["file:///srv"])
'''
USER_MISTAKES = '''
from mcpclient import SharedClient

shared = SharedClient(["python", "server.py"])
shared.ping(timeout="soon")
wrong: str = shared.list_tools()
shared.read_resource()
'''


@pytest.mark.timeout(300)
def test_mypy_strict_sees_every_generated_method_with_clients_signature(tmp_path):
    (tmp_path / "program.py").write_text(USER_PROGRAM, encoding="utf-8")
    (tmp_path / "mistakes.py").write_text(USER_MISTAKES, encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "MYPYPATH": str(root)}  # the editable install is not found by mypy alone
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--cache-dir", str(tmp_path / "cache"), "program.py", "mistakes.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=280,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[:2] for line in errors] == [["mistakes.py", "5"], ["mistakes.py", "6"], ["mistakes.py", "7"]], \
        done.stdout
    assert 'Argument "timeout" to "ping"' in errors[0] and '"list[ToolDef]"' in errors[1]
    assert 'Missing positional argument "uri"' in errors[2]


def test_a_setting_with_wrong_arguments_is_refused_at_once_and_kept_for_no_client():
    shared = SharedClient(DEMO_SERVER, timeout=10)
    try:
        with pytest.raises(TypeError, match="roots"):
            shared.set_roots()
        with pytest.raises(TypeError):
            shared.set_sampling_handler(None, tools=True, modes=("form",))
        assert shared.call_tool("add", {"a": 1, "b": 1}).text == "2" and shared.opened == 1
    finally:
        shared.close()
