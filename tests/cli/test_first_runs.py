"""What a new user trips on at the command line, against real official-SDK servers.

* a server that declares no resources (or prompts, or tools) has none to list: an empty
  listing with a note on stderr, exit 0, not "the server answered with an error";
* mcpclient's own options written after ``-- CMD`` go to the server: when it dies of them
  during the opening, the error says which ones.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from mcpclient.cli import main

from tests.conftest import DEMO_SERVER

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
