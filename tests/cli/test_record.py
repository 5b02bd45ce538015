"""``mcpclient record``: a session with the official SDK server recorded to a file, then
turned into a pytest file that replays it offline and asserts the same answers; the generated
file is run by pytest, with starting a process and opening a socket made to fail."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpclient.cli import main
from tests.conftest import SDK_SERVER
from tests.helpers import require_mcp_sdk
from tests.http.conftest import start_sdk_server

require_mcp_sdk()

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "tok-RECORDED-9c1e22ab77"
#: Put beside the generated file: the replay must need neither a process nor a socket.
OFFLINE = '''
import socket
import subprocess


def _refuse(*args, **kwargs):
    raise AssertionError("the replay tried to reach a server")


subprocess.Popen = _refuse
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
'''
SESSION = ["--call", 'add {"a": 2, "b": 3}', "--call", "fail", "--read", "test://text",
           "--read", "test://missing", "--prompt", 'greet {"name": "Ann"}']


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def run_pytest(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           str(folder)], cwd=folder, env=env, capture_output=True, text=True, timeout=150)


def generate(recording: Path, folder: Path) -> Path:
    code, source, err = run("record", "--pytest", str(recording))
    assert code == 0, err
    folder.mkdir()
    (folder / "conftest.py").write_text(OFFLINE)
    test = folder / f"test_{recording.stem}.py"
    test.write_text(source)
    return test


def test_record_a_stdio_session_then_its_generated_test_passes_offline_and_fails_on_other_answers(tmp_path):
    recording = tmp_path / "sdk.jsonl"
    code, _, err = run("record", "--file", str(recording), *SESSION, "--", *SDK_SERVER)
    assert code == 0, err
    assert "read test://missing failed (recorded): server error -32602" in err
    assert f"mcpclient record --pytest {recording} > test_sdk.py" in err
    test = generate(recording, tmp_path / "suite")
    source = test.read_text()
    assert "client.request('tools/call', {'arguments': {'a': 2, 'b': 3}, 'name': 'add'})" in source
    assert "(-32602, 'Unknown resource: test://missing')" in source
    result = run_pytest(test.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout

    # The server now answers 6: the generated test says so.
    test.write_text(source.replace('{"result": 5}', '{"result": 6}'))
    result = run_pytest(test.parent)
    assert result.returncode == 1 and "1 failed" in result.stdout
    assert "assert answer ==" in result.stdout and "'result': 6" in result.stdout


def test_record_a_streamable_http_session_with_its_token_redacted(tmp_path):
    server = start_sdk_server("--transport", "streamable-http", "--legacy-only")
    try:
        recording = tmp_path / "http.jsonl"
        code, _, err = run("record", server.url, "--file", str(recording), "-H", f"Authorization: Bearer {TOKEN}",
                           "--call", 'add {"a": 2, "b": 3}')
        assert code == 0, err
    finally:
        server.stop()
    text = recording.read_text()
    assert TOKEN not in text and '"kind": "http"' in text.splitlines()[0]
    assert '"method": "initialize"' in text  # a legacy session
    test = generate(recording, tmp_path / "suite")
    result = run_pytest(test.parent)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pytest_of_a_file_that_is_no_recording_is_a_usage_error(tmp_path):
    other = tmp_path / "notes.jsonl"
    other.write_text('{"hello": 1}\n')
    code, out, err = run("record", "--pytest", str(other))
    assert code == 2 and out == ""
    assert "cannot make a test of" in err and "is not an mcpclient recording" in err


def test_a_call_argument_that_is_not_a_json_object_is_a_usage_error(tmp_path):
    code, _, err = run("record", "--file", str(tmp_path / "x.jsonl"), "--call", "add [1, 2]", "--", *SDK_SERVER)
    assert code == 2 and "error:" in err
    assert not (tmp_path / "x.jsonl").exists()  # refused before the server was started


def test_the_session_in_docs_testing_md_runs_as_written(tmp_path):
    """The ``$ `` lines of docs/testing.md's record example, run by bash in a scratch folder
    beside the examples; what they print on stderr (but the pytest timing) is what the page shows."""
    text = (ROOT / "docs" / "testing.md").read_text()
    block = text.split("### From the command line", 1)[1].split("```\n", 2)[1]
    lines = block.replace("\\\n    ", "").splitlines()
    commands = [line[2:] for line in lines if line.startswith("$ ")]
    assert [c.split()[:2] for c in commands] == [["mcpclient", "record"], ["mcpclient", "record"], ["python", "-m"]]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mcpclient").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mcpclient "$@"\n')
    (bin_dir / "mcpclient").chmod(0o755)
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a link loses the venv
    (bin_dir / "python").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(ROOT)}
    shown: list[str] = []
    for command in commands:
        result = subprocess.run(["bash", "-c", command + " -p no:randomly" * command.startswith("python")],
                                cwd=work, env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
        shown += result.stderr.splitlines() + [line for line in result.stdout.splitlines() if "passed" in line]
    printed = [line for line in lines if not line.startswith(("$ ", "    --")) and line.strip()]
    assert [line for line in printed if "passed" not in line and "[100%]" not in line] == \
        [line for line in shown if "passed" not in line]
    assert any(line.startswith("1 passed") for line in shown)
