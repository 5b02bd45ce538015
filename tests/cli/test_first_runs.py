"""What a new user trips on at the command line, against real official-SDK servers.

* a server that declares no resources (or prompts, or tools) has none to list: an empty
  listing with a note on stderr, exit 0, not "the server answered with an error";
* mcpclient's own options written after ``-- CMD`` go to the server: when it dies of them
  during the opening, the error says which ones.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mcpclient.cli import main

from tests.conftest import DEMO_SERVER
from tests.node_tools import EVERYTHING_JS, NODE22

ROOT = Path(__file__).resolve().parents[2]
TOOLS_ONLY = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_tools_only_server.py")]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(("command", "capability", "text", "as_json"), [
    ("resources", "resources", "(no resources)\n", {"resources": [], "resourceTemplates": []}),
    ("prompts", "prompts", "(no prompts)\n", []),
])
def test_a_listing_the_server_does_not_declare_is_empty_with_a_note(command, capability, text, as_json, protocol):
    code, out, err = run(command, "--protocol", protocol, "-t", "30", "--", *TOOLS_ONLY)
    assert (code, out) == (0, text), err
    assert err == f"mcpclient: note: the server does not declare the {capability!r} capability: " \
                  f"it has no {capability} to list\n"
    code, out, _ = run(command, "--json", "--protocol", protocol, "-t", "30", "--", *TOOLS_ONLY)
    assert (code, json.loads(out)) == (0, as_json)


def test_a_server_without_tools_lists_none_with_a_note():
    code, out, err = run("tools", "--protocol", "legacy", "-t", "30", "--", *TOOLS_ONLY, "--bare")
    assert (code, out) == (0, "(no tools)\n"), err
    assert "does not declare the 'tools' capability" in err


def test_reading_what_the_server_does_not_declare_is_still_an_error():
    code, out, err = run("read", "--protocol", "legacy", "-t", "30", "demo://x", "--", *TOOLS_ONLY)
    assert (code, out) == (4, "")
    assert "'resources/read' needs the server capability 'resources'" in err


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_options_after_the_double_dash_that_kill_the_server_are_named(protocol):
    code, out, err = run("tools", "--protocol", protocol, "-t", "30", "--", *TOOLS_ONLY, "--json", "-t5")
    lines = err.splitlines()
    assert (code, out) == (3, ""), err
    assert "unrecognized arguments: --json -t5" in lines[-2]  # the server's own complaint
    assert lines[-1] == (
        "mcpclient: note: the server exited at once; '--json', '-t5' came after '--', so they went to "
        "the server, not to mcpclient: if you meant mcpclient's options, put them before '--'"
    )


def test_a_server_that_dies_of_its_own_options_gets_no_note():
    code, _, err = run("tools", "--protocol", "legacy", "-t", "30", "--", *TOOLS_ONLY, "--bogus")
    assert code == 3 and "unrecognized arguments: --bogus" in err
    assert "note:" not in err


def test_a_server_that_ignores_our_option_runs_and_gets_no_note():
    # The demo server ignores its arguments: '--json' reached it (the output is text, not
    # JSON), but nothing failed, so there is nothing to explain.
    code, out, err = run("tools", "--protocol", "legacy", "-t", "30", "--", *DEMO_SERVER, "--json")
    assert (code, err) == (0, "") and out.startswith("add(a: number, b: number)\n")


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m mcpclient ARGV`` as a user runs it, from the repository root."""
    return subprocess.run([sys.executable, "-m", "mcpclient", *argv], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL, timeout=120)


def test_a_server_that_takes_our_option_for_its_own_and_ends_gets_no_note():
    # Python's own -c: it ran 'pass' and exited 0, naming nothing; -c was never mcpclient's.
    done = run_cli("tools", "-t", "30", "--", sys.executable, "-c", "pass")
    assert done.returncode == 3, done.stderr
    assert "exited with code 0" in done.stderr
    assert "note:" not in done.stderr and "came after '--'" not in done.stderr


def test_a_program_that_names_our_option_as_it_fails_gets_the_note():
    # Node (not argparse) refusing '--json' in its own words: "node: bad option: --json".
    if not NODE22.exists():
        pytest.skip("the Node tools are not installed (npm ci --prefix tests/node)")
    done = run_cli("tools", "-t", "30", "--", str(NODE22), "--json")
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "mcpclient: note: the server exited at once; '--json' came after '--', so it went to the server, "
        "not to mcpclient: if you meant mcpclient's option, put it before '--'")


def test_an_unknown_tool_is_named_with_how_to_list_the_tools():
    done = run_cli("call", "nosuch", "-t", "30", "--", *DEMO_SERVER)
    assert (done.returncode, done.stdout) == (4, ""), done.stderr
    assert done.stderr == (
        f"mcpclient: error: the server has no tool 'nosuch' (2 tools; list them with: mcpclient tools -- "
        f"{shlex.join(DEMO_SERVER)})\n")
    listed = run_cli(*shlex.split(done.stderr.split("list them with: ")[1].rstrip(")\n"))[1:])
    assert listed.returncode == 0 and listed.stdout.startswith("add(a: number, b: number)"), listed.stderr


def test_a_near_miss_is_suggested_and_an_sdk_server_that_answers_with_an_error_result_too():
    # The official SDK answers an unknown tool with an isError result, not a JSON-RPC error.
    done = run_cli("call", "ech", "text=hi", "-t", "30", "--", sys.executable, str(ROOT / "tests" / "servers" /
                                                                                     "sdk_server.py"))
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("mcpclient: error: the server has no tool 'ech'; did you mean 'echo'? ("), \
        done.stderr


def test_an_everything_server_without_the_tool_gets_the_same_words():
    if not EVERYTHING_JS.exists():
        pytest.skip("the Node tools are not installed (npm ci --prefix tests/node)")
    done = run_cli("call", "nosuch", "-t", "30", "--", str(NODE22), str(EVERYTHING_JS))
    assert done.returncode in (1, 4), done.stderr
    assert "mcpclient: error: the server has no tool 'nosuch'" in done.stderr
    assert "server error: server error" not in done.stderr


def test_a_server_error_is_said_once():
    # A known tool with arguments the demo server refuses: its -32602, with one prefix.
    done = run_cli("call", "add", "--args-json", '{"a": 1}', "-t", "30", "--", *DEMO_SERVER)
    assert done.returncode == 4, done.stderr
    assert done.stderr.startswith("mcpclient: server error -32602: "), done.stderr
    assert done.stderr.count("server error") == 1
