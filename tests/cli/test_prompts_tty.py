"""The CLI's prompts through a real pseudo-terminal: a person answers a real SDK server.

Each test runs ``python -m mcpclient call`` under pexpect against
tests/servers/sdk_elicit_server.py, types as a person would, and checks what the server
received (its tools return the answer as text).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_elicit_server.py")]
LINK_URL = "https://consent.example.com/approve?session=42"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")


def _argv(*words: str, server_args: tuple[str, ...] = ()) -> list[str]:
    return ["-m", "mcpclient", "call", *words, "--protocol", "legacy", "--no-progress", "-t", "30", "--", *SERVER,
            *server_args]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **extra}


class Session:
    """One CLI run on a pseudo-terminal."""

    def __init__(self, *words: str, server_args: tuple[str, ...] = (), **env: str) -> None:
        self.child = pexpect.spawn(sys.executable, _argv(*words, server_args=server_args), env=_env(**env),
                                   encoding="utf-8",
                                   timeout=15, dimensions=(50, 200), cwd=str(ROOT))

    def answer(self, prompt: str, text: str) -> None:
        self.child.expect_exact(prompt)
        self.child.sendline(text)

    def said(self, text: str) -> None:
        self.child.expect_exact(text)

    def result(self) -> tuple[int, str]:
        """The exit status and the last line (the tool's result)."""
        self.child.expect(pexpect.EOF)
        self.child.close()
        lines = [line for line in self.child.before.replace("\r", "").splitlines() if line.strip()]
        return self.child.exitstatus, lines[-1] if lines else ""


def _form_result(session: Session) -> dict:
    status, last = session.result()
    assert status == 0, last
    return json.loads(last)


def test_strings_and_their_formats_are_re_asked_until_valid():
    s = Session("form", "kind=text")
    s.said('The server "sdk-elicit" asks: Please fill in the text form')
    s.said("Your name - as on your badge")
    s.answer("name> ", "A")
    s.said("invalid: must have at least 2 characters")
    s.answer("name> ", "Ada")
    s.answer("email> ", "")
    s.said("this field is required")
    s.answer("email> ", "not-an-email")
    s.said("invalid: must be a valid email")
    s.answer("email> ", "ada@example.com")
    s.answer("homepage> ", "no scheme")
    s.said("invalid: must be a valid uri")
    s.answer("homepage> ", "https://ada.example")
    s.answer("birthday> ", "1815-13-10")
    s.said("invalid: must be a valid date")
    s.answer("birthday> ", "1815-12-10")
    s.said("optional, Enter skips")
    s.answer("meeting> ", "")  # optional: skipped
    s.answer("Send it? [Y/n] ", "y")
    assert _form_result(s) == {"action": "accept", "content": {
        "name": "Ada", "email": "ada@example.com", "homepage": "https://ada.example", "birthday": "1815-12-10"}}


def test_the_server_that_asks_is_named_and_its_name_shown_inert():
    # A name that tries to clear the screen, forge a line and close its own quotes.
    s = Session("form", "kind=flags", server_args=("--name", 'Bank" asks: \x1b[2J\nreal'))
    s.child.logfile_read = seen = io.StringIO()  # everything the terminal gets
    s.said('The server "Bank\\" asks: \\u001b[2J\\nreal" asks: Please fill in the flags form')
    s.answer("agree> ", "!decline")
    assert _form_result(s) == {"action": "decline", "content": None}
    assert "\x1b" not in seen.getvalue() and "\nreal" not in seen.getvalue()


def test_numbers_keep_their_bounds_and_enter_takes_the_default():
    s = Session("form", "kind=numbers")
    s.said("an integer from 0 to 150")
    s.answer("age> ", "forty")
    s.said("invalid: must be an integer")
    s.answer("age> ", "151")
    s.said("invalid: must be at most 150")
    s.answer("age> ", "42")
    s.said("Enter takes the default: 0.5")
    s.answer("ratio> ", "1.5")
    s.said("invalid: must be at most 1")
    s.answer("ratio> ", "")
    s.answer("Send it? [Y/n] ", "")
    assert _form_result(s) == {"action": "accept", "content": {"age": 42, "ratio": 0.5}}


def test_a_datetime_and_a_typed_number_reach_the_server():
    s = Session("form", "kind=text")
    s.answer("name> ", "Bo")
    s.answer("email> ", "bo@example.org")
    s.answer("homepage> ", "")
    s.answer("birthday> ", "")
    s.answer("meeting> ", "tomorrow")
    s.said("invalid: must be a valid date-time")
    s.answer("meeting> ", "2030-01-02T10:00:00Z")
    s.answer("Send it? [Y/n] ", "")
    assert _form_result(s)["content"] == {"name": "Bo", "email": "bo@example.org", "meeting": "2030-01-02T10:00:00Z"}


def test_booleans():
    s = Session("form", "kind=flags")
    s.answer("agree> ", "maybe")
    s.said("invalid: answer y or n")
    s.answer("agree> ", "yes")
    s.said("Enter takes the default: no")
    s.answer("newsletter> ", "")
    s.answer("Send it? [Y/n] ", "")
    assert _form_result(s) == {"action": "accept", "content": {"agree": True, "newsletter": False}}


def test_enums_titled_enums_and_legacy_enum_names():
    s = Session("form", "kind=choices")
    s.said("3) blue")
    s.answer("color> ", "purple")
    s.said("is not one of the choices")
    s.answer("color> ", "4")
    s.said("is not one of the choices")
    s.answer("color> ", "2")
    s.said("Enter takes the default: Medium")
    s.said("3) Large")
    s.answer("size> ", "large")  # a title, any case
    s.said("1) Free tier")
    s.answer("plan> ", "2")
    s.said("Plan: Pro tier")
    s.answer("Send it? [Y/n] ", "y")
    assert _form_result(s) == {"action": "accept", "content": {"color": "green", "size": "l", "plan": "pro"}}


def test_multi_select_of_enum_and_titled_items():
    s = Session("form", "kind=multi")
    s.said("several numbers or values, separated by commas")
    s.answer("toppings> ", "")
    s.said("this field is required")
    s.answer("toppings> ", "1, anchovies")
    s.said("'anchovies' is not one of the choices")
    s.answer("toppings> ", "1, olives, 1")
    s.said("2) Cutlery")
    s.answer("extras> ", "Cutlery")
    s.said("Extras: Cutlery")
    s.answer("Send it? [Y/n] ", "")
    assert _form_result(s) == {"action": "accept", "content": {"toppings": ["cheese", "olives"], "extras": ["cutlery"]}}


def test_decline_and_cancel_by_command():
    s = Session("form", "kind=numbers")
    s.answer("age> ", "!decline")
    assert _form_result(s) == {"action": "decline", "content": None}
    s = Session("form", "kind=numbers")
    s.answer("age> ", "3")
    s.answer("ratio> ", "!cancel")
    assert _form_result(s) == {"action": "cancel", "content": None}


def test_saying_no_to_the_summary_declines():
    s = Session("form", "kind=flags")
    s.answer("agree> ", "n")
    s.answer("newsletter> ", "y")
    s.said("Agree to the terms: no")
    s.answer("Send it? [Y/n] ", "n")
    assert _form_result(s) == {"action": "decline", "content": None}


def test_ctrl_d_declines_and_ctrl_c_cancels_without_ending_the_command():
    s = Session("form", "kind=numbers")
    s.said("age> ")
    s.child.sendeof()
    assert _form_result(s) == {"action": "decline", "content": None}
    s = Session("form", "kind=numbers")
    s.said("age> ")
    s.child.sendintr()
    assert _form_result(s) == {"action": "cancel", "content": None}  # the call went on, exit 0


def test_url_consent_opens_only_when_asked(tmp_path):
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.py"
    browser.write_text(f"import sys\nopen({str(opened)!r}, 'a').write(sys.argv[1] + '\\n')\n")
    fake_browser = {"BROWSER": f"{sys.executable} {browser} %s"}
    s = Session("link", **fake_browser)
    s.said('The server "sdk-elicit" asks you to open a link: Approve the data export')
    s.said(LINK_URL)
    s.said("(it goes to consent.example.com)")
    s.answer("Open the link? [o/y/n] ", "maybe")
    s.answer("Open the link? [o/y/n] ", "y")  # the person opens it: accept, nothing opened here
    assert s.result() == (0, "accept")
    assert not opened.exists()
    s = Session("link", **fake_browser)
    s.answer("Open the link? [o/y/n] ", "n")
    assert s.result() == (0, "decline")
    s = Session("link", **fake_browser)
    s.answer("Open the link? [o/y/n] ", "o")
    assert s.result() == (0, "accept")
    assert opened.read_text() == LINK_URL + "\n"


def test_sampling_is_shown_and_answered_or_declined_by_the_person():
    s = Session("sample", "prompt=What is six times seven?")
    s.said('The server "sdk-elicit" asks for an LLM reply (sampling).')
    s.said("system: Answer briefly.")
    s.said("user: What is six times seven?")
    s.said("(at most 50 tokens)")
    s.answer("reply> ", "")
    s.answer("reply> ", "forty-two")
    assert s.result() == (0, "reply forty-two (person)")
    s = Session("sample", "prompt=hi")
    s.answer("reply> ", "!decline")
    status, last = s.result()
    assert (status, last) == (0, "error -1 the user declined the sampling request")


def test_no_input_declines_without_asking():
    s = Session("form", "kind=numbers", "--no-input")
    status, last = s.result()
    assert (status, json.loads(last)) == (0, {"action": "decline", "content": None})
    assert "age>" not in s.child.before
    s = Session("sample", "prompt=hi", "--no-input")
    status, last = s.result()
    assert status == 0 and last.startswith("error -32601 ")  # no sampling offered, as before


def test_without_a_terminal_elicitation_is_declined():
    run = subprocess.run([sys.executable, *_argv("form", "kind=numbers")], env=_env(), cwd=str(ROOT),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"action": "decline", "content": None}
    assert "age>" not in run.stderr
