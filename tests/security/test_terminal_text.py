"""Server text reaches a terminal or a log line only as inert, visible text (``mcpclient._core.text``).

The cleaning function is fuzzed (whatever goes in, no control, format character, surrogate
or line break comes out, and the original can be read back from what is shown); then a real
SDK server whose every text is hostile (``sdk_hostile_text_server.py``) is listed, described
and called through the real ``mcpclient`` command, and its errors and log notifications go
through Python logging: nothing it sent may reach the output as a control character, and its
newlines may not start a line of their own.
"""

from __future__ import annotations

import ast
import io
import json
import logging
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpclient
from mcpclient import RPCError
from mcpclient._core.text import CleanFormatter, clean, clean_lines, inert_json
from mcpclient.auth import AuthorizationError, LoopbackRedirectHandler, PasteRedirectHandler
from mcpclient.cli._progress import Progress
from tests.helpers import wait_for
from tests.security import sdk_hostile_text_server as hostile

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "tests" / "security" / "sdk_hostile_text_server.py")]
SURROGATES = [sys.executable, str(ROOT / "tests" / "security" / "surrogate_stdio.py")]
#: What may not come out: controls, format characters (bidi, zero-width, tags), surrogates,
#: line and paragraph separators.
FORBIDDEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}
ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=300)  # surrogates included


def forbidden(text: str, allow: str = "") -> list[str]:
    return [c for c in text if unicodedata.category(c) in FORBIDDEN and c not in allow]


# -- the function --------------------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(ANY_TEXT, st.one_of(st.none(), st.integers(0, 400)))
def test_whatever_goes_in_no_control_comes_out(text, limit):
    shown = clean(text, limit)
    assert forbidden(shown) == []
    assert len(shown.splitlines()) <= 1
    assert clean(shown, None) == shown  # idempotent: nothing left to escape
    if limit is not None:
        assert len(shown) <= limit + len("...")


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT.filter(lambda t: "\\" not in t and '"' not in t))
def test_nothing_is_hidden_the_original_reads_back_from_what_is_shown(text):
    # The escapes are Python's own notation: read as a string literal, the shown text is the
    # original, character for character (only backslashes of the server's are ambiguous).
    assert ast.literal_eval('"' + clean(text, None) + '"') == text


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_lines_are_cleaned_one_by_one(text):
    lines = clean_lines(text, None)
    assert len(lines) == len(text.splitlines())
    for line in lines:
        assert forbidden(line) == [] and len(line.splitlines()) <= 1


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | ANY_TEXT,
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
                           max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 2]))
def test_json_made_inert_is_the_same_json_value(value, indent):
    shown = inert_json(json.dumps(value, ensure_ascii=False, indent=indent))
    assert forbidden(shown, allow="\n") == []
    assert json.loads(shown) == value


@pytest.mark.parametrize(("text", "shown"), [
    ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),  # OSC 52: write the clipboard
    ("\x1b[2J", "\\x1b[2J"),  # CSI: clear the screen
    ("\x9b31m", "\\x9b31m"),  # the 8-bit CSI
    ("\x90q\x9c", "\\x90q\\x9c"),  # DCS ... ST
    ("a\nb\r\n\tc", "a\\nb\\r\\n\\tc"),
    ("pay\u202egnp.exe", "pay\\u202egnp.exe"),  # right-to-left override
    ("\u2066x\u2069\u200e\u200f\u061c", "\\u2066x\\u2069\\u200e\\u200f\\u061c"),
    ("zero\u200bwidth\ufeff\u00ad", "zero\\u200bwidth\\ufeff\\xad"),
    ("tag\U000e0041", "tag\\U000e0041"),  # invisible tag characters
    ("line\u2028sep\u2029", "line\\u2028sep\\u2029"),
    ("lone \ud800", "lone \\ud800"),
    ("\x7f\x00", "\\x7f\\x00"),
    ("naïve 日本語 😀 C:\\path", "naïve 日本語 😀 C:\\path"),  # kept as it is
])
def test_what_each_class_of_character_becomes(text, shown):
    assert clean(text) == shown


def test_a_log_formatter_cleans_every_message():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(CleanFormatter("%(name)s: %(message)s"))
    logger = logging.getLogger("tests.security.clean_formatter")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("from the server: %s", "x\x1b]0;t\x07" + hostile.FORGED)
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue() == "tests.security.clean_formatter: from the server: x\\x1b]0;t\\x07\\nmcpclient: error: FORGED LINE\n"


# -- the command line against a hostile real server ---------------------------------------------


def cli(*words: str, server: list[str] = SERVER) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "mcpclient", *words, "--protocol", "legacy", "-t", "30", "--", *server],
                          env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def assert_inert(output: str) -> None:
    assert forbidden(output, allow="\n") == [], output
    assert not any(line.startswith("mcpclient: error: FORGED") for line in output.splitlines()), output


@pytest.mark.parametrize("words", [("tools",), ("tools", "-l"), ("info",), ("resources",), ("prompts",)])
def test_listings_show_the_servers_text_inert(words):
    run = cli(*words)
    assert run.returncode == 0, run.stderr
    assert_inert(run.stdout)
    assert "\\x1b" in run.stdout  # shown, not dropped


@pytest.mark.parametrize("words", [("tools", "--json"), ("info", "--json"), ("resources", "--json"),
                                   ("prompts", "--json"), ("read", "hostile://text", "--json")])
def test_json_output_carries_the_servers_text_as_json_escapes(words):
    # JSON escapes C0 controls itself; the 8-bit CSI, bidi controls and format characters
    # would pass raw with ensure_ascii=False. They are written as \\uXXXX: the same JSON value.
    run = cli(*words)
    assert run.returncode == 0, run.stderr
    assert forbidden(run.stdout, allow="\n") == [], run.stdout
    assert "\\u009b" in run.stdout or "\\u202e" in run.stdout or "\\u001b" in run.stdout
    json.loads(run.stdout)


def test_json_output_is_the_same_value_as_sent():
    run = cli("tools", "--json")
    tool = next(tool for tool in json.loads(run.stdout) if tool["name"].startswith("evil"))
    assert tool["name"] == hostile.TOOL_NAME and tool["description"] == hostile.DESCRIPTION


def test_tools_shows_names_and_descriptions_one_line_each():
    run = cli("tools", "-l")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "evil\\x9b31m()"
    # the description's own lines stay under the tool, indented: none poses as a tool or a message
    assert lines[1].startswith("    first line\\x1b[2J\\x1b[H\\x1b]8;;https://evil.example/")
    assert all(line.startswith("    ") for line in lines[1:4])


def test_info_shows_the_server_name_and_instructions_inert():
    run = cli("info")
    assert run.returncode == 0, run.stderr
    assert_inert(run.stdout)
    assert run.stdout.splitlines()[0] == (
        "server:       hostile\\x1b[2J\\x1b[H\\nmcpclient: error: FORGED LINE 1.0\\x1b]52;c;ZXZpbA==\\x07")
    assert "  OVERWRITTEN" in run.stdout.splitlines()  # a carriage return starts a line, never overwrites one
    assert "second line\\u202eevil\\u202c" in run.stdout


@pytest.mark.parametrize(("tool", "status"), [("fail", 1), ("explode", 4)])
def test_error_messages_from_the_server_are_one_inert_line(tool, status):
    run = cli("call", tool)
    assert run.returncode == status
    assert_inert(run.stderr)
    (line,) = run.stderr.splitlines()
    assert "it failed\\x1b]52;c;ZXZpbA==\\x07\\nmcpclient: error: FORGED LINE" in line


def test_verbose_logs_of_the_server_cannot_forge_lines():
    run = cli("call", "shout", "-v")
    assert run.returncode == 0, run.stderr
    ours = [line for line in run.stderr.splitlines() if line.startswith("mcpclient.")]
    assert any("logged\\x1b]52;c;ZXZpbA==\\x07\\nmcpclient: error: FORGED LINE" in line for line in ours), run.stderr
    assert_inert("\n".join(ours))


def test_a_lone_surrogate_in_a_tool_name_is_shown_not_a_traceback():
    run = cli("tools", server=SURROGATES)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "bad\\ud800name(p\\udfff: string?)\n    half \\udc00 a pair\n"
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("words", [("tools", "--json"), ("info", "--json"), ("call", "bad"), ("call", "bad", "--json")])
def test_lone_surrogates_in_json_and_piped_results_are_written_as_escapes(words):
    run = cli(*words, server=SURROGATES)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert "\\ud800" in run.stdout or "\\ud83d" in run.stdout


# -- the library: exceptions, log records, progress, the OAuth prompts ---------------------------


@pytest.fixture
def client():
    with mcpclient.connect(SERVER, protocol="legacy", timeout=30) as c:
        yield c


def test_an_error_message_is_inert_and_the_attribute_keeps_what_was_sent(client):
    with pytest.raises(RPCError) as caught:
        client.call_tool("explode")
    assert forbidden(str(caught.value)) == []
    assert caught.value.message == hostile.ERROR_TEXT  # the data, as sent


def test_server_log_records_hold_no_control_and_no_newline(client, caplog):
    with caplog.at_level(logging.DEBUG, logger="mcpclient"):
        client.call_tool("shout")
        assert wait_for(lambda: any("logged" in r.getMessage() for r in caplog.records))
    record = next(r for r in caplog.records if "logged" in r.getMessage())
    message = record.getMessage()
    assert forbidden(message) == [], message
    assert message.startswith("[hostile\\x1b[2J\\x1b[H\\nmcpclient: error: FORGED LINE/db\\x1b[2J")
    assert record.mcp_logger == clean(hostile.LOG_NAME, 64)


def test_progress_messages_cannot_reach_the_terminal_as_escapes():
    stream = io.StringIO()
    with Progress("tool\x1b[2J", stream) as bar:
        bar.callback(1, 2, hostile.PROGRESS)
    shown = stream.getvalue()
    assert "\x1b]52" not in shown and "\x07" not in shown and "tool\x1b[2J" not in shown
    assert "step\\x1b]52;c;ZXZpbA==\\x07" in shown


AUTHORIZE = "https://as.example/authorize" + hostile.OSC52 + "?state=s&code_challenge=x"


def test_the_paste_handler_refuses_an_authorization_url_with_escapes():
    out = io.StringIO()
    handler = PasteRedirectHandler(output=out, read_line=lambda prompt: pytest.fail("asked"))
    with pytest.raises(AuthorizationError, match="control, invisible or space"):
        handler.authorize(AUTHORIZE)
    assert out.getvalue() == ""


def test_the_browser_fallback_warning_never_logs_escapes(caplog):
    handler = LoopbackRedirectHandler(open_browser=lambda url: pytest.fail("opened"))
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        with pytest.raises(AuthorizationError, match="control, invisible or space"):
            handler.authorize(AUTHORIZE, timeout=1)
    assert all(forbidden(r.getMessage()) == [] for r in caplog.records)
