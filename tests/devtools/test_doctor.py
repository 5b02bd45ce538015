"""``mcpclient doctor``: real servers pass, a deliberately broken one fails on each rule it
breaks, and the report is inert on a terminal."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from mcpclient import HTTP
from mcpclient.cli import main
from mcpclient.cli._main import EXIT_CODES
from mcpclient.devtools.doctor import diagnose
from tests.node_tools import NODE_DIR, everything_server_cmd

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
SDK_SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_server.py")]
BROKEN = [sys.executable, str(ROOT / "tests" / "servers" / "broken_server.py")]


def levels(report) -> dict[str, str]:
    return {finding.check: finding.level for finding in report.findings}


def test_server_everything_has_no_error():
    try:
        argv = everything_server_cmd("stdio")
    except FileNotFoundError as exc:  # CI installs them; locally: `npm ci` in tests/node
        pytest.skip(f"server-everything needs Node 22 and {NODE_DIR}/node_modules: {exc}")
    report = diagnose(argv, timeout=30, cancel_call=("trigger-long-running-operation", {"duration": 5, "steps": 5}))
    found = levels(report)
    assert report.errors == [], report.text()
    assert report.server == {"name": "mcp-servers/everything", "version": "2.0.0"}
    era = next(f for f in report.findings if f.check == "era")
    assert era.message == "legacy (initialize), protocol version 2025-11-25"
    assert found["unknown method"] == "ok" and found["stdout"] == "ok" and found["tool names"] == "ok"
    assert found["cancel"] == "ok", report.text()  # cancelled in flight, and the server answered ping after


def test_an_official_sdk_server_is_modern_and_gives_cache_hints():
    report = diagnose(SDK_SERVER, timeout=30, cancel_call=("slow", {"seconds": 5, "steps": 5}),
                      output_call=("forecast", {"city": "Oslo"}))
    found = levels(report)
    assert report.errors == [], report.text()
    era = next(f for f in report.findings if f.check == "era")
    assert era.message == "modern (server/discover), protocol version 2026-07-28"
    hints = next(f for f in report.findings if f.check == "cache hints")
    assert hints.level == "ok" and "ttlMs=" in hints.message
    assert found["input schemas"] == found["output schemas"] == found["listing order"] == "ok"
    assert found["cancel"] == "ok", report.text()
    assert found["output"] == "ok", report.text()  # the forecast matches its outputSchema


def test_a_broken_server_fails_each_rule_it_breaks():
    report = diagnose(BROKEN, timeout=30)
    found = levels(report)
    for check in ("tool names", "input schemas", "output schemas", "x-mcp-header", "unknown method", "stdout"):
        assert found[check] == "error", (check, report.text())
    assert found["listing order"] == "warning" and found["stderr"] == "warning"
    details = {f.check: f.details for f in report.findings}
    assert '"dup"' in details["tool names"]
    assert any("stringly" in line and '"string"' in line for line in details["input schemas"])
    assert any("invalid" in line and "not valid JSON Schema" in line for line in details["input schemas"])
    assert any("headless" in line for line in details["input schemas"])
    assert any("listy" in line for line in details["output schemas"])
    assert any("'Where'" in line for line in details["x-mcp-header"])
    assert found["output"] == "info"  # no tool named: none called


def test_a_result_that_breaks_its_output_schema_is_an_error():
    report = diagnose(BROKEN, timeout=30, output_call=("liar", {}))
    finding = next(f for f in report.findings if f.check == "output")
    assert finding.level == "error" and finding.message == 'the result of "liar" breaks its outputSchema'
    assert any("'five' is not of type 'integer'" in line for line in finding.details), finding.details


def test_the_command_exits_7_on_errors_and_its_report_is_inert():
    out, err = io.StringIO(), io.StringIO()
    assert main(["doctor", "--", *BROKEN], stdout=out, stderr=err) == 7
    assert EXIT_CODES[7].startswith("mcpclient doctor")
    text = out.getvalue()
    assert "\x1b" not in text and "\u202e" not in text
    assert '"bad name!\\u001b[2J\\u202e"' in text  # the name as JSON: its escapes shown as text
    out = io.StringIO()
    assert main(["doctor", "--json", "--", *BROKEN], stdout=out, stderr=err) == 7
    raw = out.getvalue()
    assert "\x1b" not in raw and "\u202e" not in raw
    report = json.loads(raw)
    assert report["errors"] >= 6 and report["server"] == {"name": "broken-server", "version": "0.1"}


def test_a_server_that_cannot_start_is_one_error():
    report = diagnose([sys.executable, "-c", "import sys; sys.exit(3)"], timeout=10)
    assert [f.check for f in report.errors] == ["start"]
    assert "could not be opened" in report.errors[0].message


def test_a_url_server_is_checked_without_the_stdio_checks():
    from tests.http.conftest import start_sdk_server

    server = start_sdk_server("--transport", "streamable-http")
    try:
        report = diagnose(server.url, timeout=30, cancel_call=("slow", {"seconds": 5, "steps": 5}))
    finally:
        server.stop()
    found = levels(report)
    assert report.errors == [], report.text()
    assert "stdout" not in found and "stderr" not in found
    assert found["cancel"] == "ok" and found["unknown method"] == "ok"
    assert found["session"] == "info"  # 2026-07-28: no sessions
    assert report.target == server.url


def finding(report, check):
    return next(f for f in report.findings if f.check == check)


def test_a_legacy_sdk_http_server_answers_a_lost_session_with_404_and_the_client_starts_a_new_one():
    from tests.http.conftest import start_sdk_server

    server = start_sdk_server("--transport", "streamable-http", "--legacy-only")
    try:
        report = diagnose(server.url, timeout=30, cancel_call=("slow", {"seconds": 5, "steps": 5}),
                          http=HTTP(headers={"Authorization": "Bearer doctor-token-0123456789"}))
    finally:
        server.stop()
    assert report.errors == [] and report.warnings == [], report.text()
    session = finding(report, "session")
    assert session.level == "ok" and "got HTTP 404" in session.message
    assert session.details == ("the client then: started a new session (initialize again) and was answered",)
    assert finding(report, "cancel").level == "ok"
    assert "doctor-token" not in report.text()
    # The client's warning about the lost session was the check's own doing, not a finding.
    assert finding(report, "client warnings").level == "ok"


def test_a_stateless_sdk_http_server_has_no_session_to_lose():
    from tests.http.conftest import start_sdk_server

    server = start_sdk_server("--transport", "streamable-http", "--legacy-only", "--stateless")
    try:
        report = diagnose(server.url, timeout=30)
    finally:
        server.stop()
    assert finding(report, "session").message == "the server keeps no session (no Mcp-Session-Id): nothing to lose"


@pytest.mark.parametrize(("status", "level", "said"), [
    (404, "ok", "got HTTP 404"),
    (400, "warning", "with a session error, not 404"),
    (200, "error", "was served (HTTP 200"),
    (500, "error", "got HTTP 500 in"),
])
def test_a_broken_http_server_is_told_how_it_answers_a_lost_session(status, level, said):
    from tests.faults.hostile_http import HostileHTTP

    server = HostileHTTP()
    server.lost_session = status
    server.start()
    try:
        report = diagnose(server.url, timeout=10)
    finally:
        server.stop()
    session = finding(report, "session")
    assert session.level == level and said in session.message, report.text()
    then = session.details[0]
    if status in (404, 400):
        assert then.endswith("started a new session (initialize again) and was answered")
        assert server.sessions == set()  # the session the client left behind was ended too
    elif status == 200:
        assert then.endswith("was answered on the made-up session (no new session was started)")
    else:
        assert "failed:" in then and "HTTP 500" in then


def test_a_stdio_server_gets_no_session_check():
    report = diagnose(SDK_SERVER + ["--legacy-only"], timeout=30)
    assert "session" not in levels(report)


def test_a_url_is_shown_without_what_may_hold_a_token():
    report = diagnose("http://user:secret@127.0.0.1:9/mcp?token=secret#x", timeout=5)
    assert report.target == "http://127.0.0.1:9/mcp"
    assert "secret" not in report.text() and "secret" not in json.dumps(report.to_json())
    assert [f.check for f in report.errors] == ["start"]
