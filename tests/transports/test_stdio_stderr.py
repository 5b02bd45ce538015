"""The stderr lines held while the era probe is out: what is left out, and what never is.

The real SDK 1.x servers are in tests/eras/test_probe_noise.py; these are the edges no real
server shows on demand."""

from __future__ import annotations

from mcpclient.transports import _stdio_stderr
from mcpclient.transports._stdio_stderr import StderrLines, complaint

COMPLAINT = [
    "Failed to validate request: 2 validation errors for ClientRequest",
    "PingRequest.method",
    "  Input should be 'ping' [type=literal_error, input_value='server/discover', input_type=str]",
]


def lines_of(*texts: str) -> tuple[StderrLines, list[str]]:
    seen: list[str] = []
    lines = StderrLines(seen.append, 20)
    for text in texts:
        lines.add(text.encode())
    return lines, seen


def test_lines_before_the_complaint_go_on_in_order_and_the_complaint_does_not():
    lines, seen = lines_of("before")
    lines.hold()
    for text in ["starting", "ready", *COMPLAINT]:
        lines.add(text.encode())
    assert seen == ["before"]
    assert lines.release(refused="server/discover") == len(COMPLAINT)
    lines.add(b"after")
    assert seen == ["before", "starting", "ready", "after"]
    assert lines.tail() == seen


def test_a_complaint_about_another_request_is_kept():
    other = [line.replace("server/discover", "tools/call") for line in COMPLAINT]
    lines, seen = lines_of()
    lines.hold()
    for text in other:
        lines.add(text.encode())
    assert lines.release(refused="server/discover") == 0
    assert seen == other


def test_without_a_refusal_every_held_line_goes_on():
    lines, seen = lines_of()
    lines.hold()
    for text in COMPLAINT:
        lines.add(text.encode())
    lines.release()
    assert seen == COMPLAINT


def test_held_lines_are_in_the_tail_at_once():
    lines, seen = lines_of("one")
    lines.hold()
    lines.add(b"Traceback (most recent call last):")
    assert seen == ["one"]
    assert lines.tail() == ["one", "Traceback (most recent call last):"]
    assert lines.tail(1) == ["Traceback (most recent call last):"]


def test_a_server_that_writes_too_much_while_held_is_let_go(monkeypatch):
    monkeypatch.setattr(_stdio_stderr, "MAX_HELD_LINES", 3)
    lines, seen = lines_of()
    lines.hold()
    for number in range(5):
        lines.add(str(number).encode())
    assert seen == ["0", "1", "2", "3", "4"]
    assert lines.release(refused="server/discover") == 0


def test_release_without_hold_does_nothing():
    lines, seen = lines_of("x")
    assert lines.release(refused="server/discover") == 0
    assert seen == ["x"]


def test_the_complaint_is_the_last_one_to_the_end():
    held = ["Failed to validate request: about tools/call", "x", *COMPLAINT]
    assert complaint(held, "server/discover") == 2
    assert complaint(["nothing"], "server/discover") is None
