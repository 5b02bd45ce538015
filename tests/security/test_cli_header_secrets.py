"""A header's secret can reach the server without standing on the command line.

``-H 'Authorization: Bearer ...'`` puts the token in the process's argv, which every local
user reads in the process list (``ps``, ``/proc/<pid>/cmdline``). ``--header-env NAME=VAR``
and ``--header-file PATH`` take the value from the environment or a file. Each test runs
the real ``mcpclient`` command against a real SDK server (``sdk_header_server.py``) whose
tool waits, while the call is in flight, for the test to read the command's
``/proc/<pid>/cmdline``, then returns the Authorization header it received.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mcpclient.cli import main
from tests.helpers import wait_for

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "Bearer s3cret-token-4c1d"

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc/<pid>/cmdline")


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "security" / "sdk_header_server.py")],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    ready: list[str] = []
    reader = threading.Thread(target=lambda: ready.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(30)
    try:
        assert ready and ready[0].startswith("LISTENING "), "the SDK server did not start"
        yield ready[0].split()[1]
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def run_cli(url: str, flag: Path, *words: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    """Run ``mcpclient call URL authorization``; return its argv as the system shows it, and its output."""
    command = [sys.executable, "-m", "mcpclient", "call", url, "authorization", f"flag={flag}", "-t", "30", *words]
    proc = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, cwd=str(ROOT),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The call waits for the flag: the process is alive and its argv is what ps shows (read
        # until it is there: just after the exec, the kernel may show it empty).
        cmdline = wait_for(lambda: _cmdline(proc.pid) if "authorization" in _cmdline(proc.pid) else None, timeout=10)
        assert cmdline, "could not read the command's argv"
        flag.touch()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    assert proc.returncode == 0, err
    return cmdline, out.strip()


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def test_a_header_from_the_environment_reaches_the_server_and_not_the_process_list(server, tmp_path):
    cmdline, answer = run_cli(server, tmp_path / "go", "--header-env", "Authorization=MCP_TEST_AUTH",
                              env={"MCP_TEST_AUTH": TOKEN})
    assert answer == TOKEN
    assert "s3cret" not in cmdline and "MCP_TEST_AUTH" in cmdline


def test_a_header_from_a_file_reaches_the_server_and_not_the_process_list(server, tmp_path):
    headers = tmp_path / "headers"
    headers.write_text(f"# for the test server\n\nAuthorization: {TOKEN}\nX-Other: 1\n")
    cmdline, answer = run_cli(server, tmp_path / "go", "--header-file", str(headers))
    assert answer == TOKEN
    assert "s3cret" not in cmdline and str(headers) in cmdline


def test_with_dash_h_the_token_is_in_the_process_list(server, tmp_path):
    # What the options above avoid (and what docs/cli.md warns of).
    cmdline, answer = run_cli(server, tmp_path / "go", "-H", f"Authorization: {TOKEN}")
    assert answer == TOKEN and "s3cret" in cmdline


@pytest.mark.parametrize(("words", "env", "expected"), [
    (["--header-env", "Authorization=MCP_TEST_UNSET"], {}, "'MCP_TEST_UNSET' is not set or empty"),
    (["--header-env", "Authorization"], {}, "--header-env takes NAME=VARIABLE"),
    (["--header-env", "Authorization=MCP_TEST_AUTH"], {"MCP_TEST_AUTH": "Bearer a\r\nX-Evil: 1"}, "holds a line break"),
    (["--header-env", "Authorization=MCP_TEST_AUTH", "-H", "authorization: other"], {"MCP_TEST_AUTH": TOKEN},
     "the header 'Authorization' is given twice"),
    (["--header-file", "/nonexistent/headers"], {}, "cannot read it (FileNotFoundError)"),
])
def test_bad_header_options_are_usage_errors_that_never_show_the_value(words, env, expected, monkeypatch, tmp_path):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    err = io.StringIO()
    status = main(["tools", "http://127.0.0.1:9/mcp", *words], stdout=io.StringIO(), stderr=err)
    assert status == 2
    assert expected in err.getvalue()
    assert "s3cret" not in err.getvalue() and "X-Evil" not in err.getvalue()


def test_a_header_file_line_without_a_colon_is_a_usage_error_naming_the_line(tmp_path):
    headers = tmp_path / "headers"
    headers.write_text(f"Authorization: {TOKEN}\n{TOKEN}\n")
    err = io.StringIO()
    assert main(["tools", "http://127.0.0.1:9/mcp", "--header-file", str(headers)], stdout=io.StringIO(), stderr=err) == 2
    assert "line 2: expected NAME: VALUE" in err.getvalue() and "s3cret" not in err.getvalue()
