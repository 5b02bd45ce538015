"""The stdio transport, with real child processes."""

from __future__ import annotations

import io
import logging
import os
import sys
import threading
import time

import pytest

from mcpclient import Client, ConnectionClosed, StdioTransport, TransportError
from mcpclient.transports.base import reads_inline, writes_batched
from tests.conftest import FAST_SERVER, child_pids
from tests.helpers import RELEASED_WITHIN, pid_alive, wait_for

PY = sys.executable


def test_32_threads_x_200_calls_get_their_own_replies():
    with Client(StdioTransport(FAST_SERVER), timeout=30) as client:
        mismatches = []

        def worker(n):
            for i in range(200):
                text = f"t{n}-c{i}"
                if client.call_tool("echo", {"text": text}).text != text:
                    mismatches.append(text)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not any(thread.is_alive() for thread in threads)
    assert mismatches == []


def test_a_ten_megabyte_result_arrives_whole():
    with Client(StdioTransport(FAST_SERVER), timeout=30) as client:
        result = client.call_tool("big", {"size": 10_000_000})
    assert len(result.text) == 10_000_000


def test_a_dying_server_fails_all_pending_calls_with_its_exit_code():
    client = Client(StdioTransport(FAST_SERVER + ["--die-after", "50"], stderr=None), timeout=30)
    client.initialize()
    errors = []
    started = threading.Barrier(50)

    def call():
        started.wait()
        try:
            client.call_tool("echo", {"text": "x"})
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(50)]
    for thread in threads:
        thread.start()
    t0 = time.monotonic()
    for thread in threads:
        thread.join(max(0.0, t0 + RELEASED_WITHIN - time.monotonic()))
    assert time.monotonic() - t0 < RELEASED_WITHIN
    dead = [e for e in errors if isinstance(e, ConnectionClosed)]
    assert dead and len(dead) == len(errors)
    assert dead[0].exit_code == 3
    assert "exited with code 3" in str(dead[0])
    with pytest.raises(ConnectionClosed):
        client.ping()
    client.close()


@pytest.mark.above_pipes("the error's text")
def test_the_exit_error_carries_the_last_stderr_lines():
    script = "import sys; sys.stdin.readline(); print('fatal: bad config', file=sys.stderr); sys.exit(7)"
    client = Client(StdioTransport([PY, "-c", script], stderr=None), timeout=5, protocol="legacy")
    with pytest.raises(ConnectionClosed) as info:
        client.initialize()
    assert info.value.exit_code == 7
    assert "fatal: bad config" in info.value.stderr_tail
    assert "fatal: bad config" in str(info.value)
    client.close()


@pytest.mark.above_pipes("starting the process")
def test_a_command_that_cannot_start_raises_at_once():
    t0 = time.monotonic()
    with pytest.raises(TransportError, match="no-such-mcp-server"):
        StdioTransport(["no-such-mcp-server-binary"])
    assert time.monotonic() - t0 < RELEASED_WITHIN


@pytest.mark.above_pipes("the command's checks")
def test_a_shell_string_is_refused():
    with pytest.raises(ValueError, match="list"):
        StdioTransport("python server.py")  # type: ignore[arg-type]


@pytest.mark.above_pipes("the child's environment")
def test_env_entries_are_added_to_the_environment(tmp_path):
    out = tmp_path / "env.txt"
    script = f"import os; open({str(out)!r}, 'w').write(os.environ['MCP_TEST_VAR'] + '|' + os.environ.get('PATH', ''))"
    transport = StdioTransport([PY, "-c", script], env={"MCP_TEST_VAR": "hello"})
    transport._proc.wait(10)
    transport.close()
    value, path = out.read_text().split("|", 1)
    assert value == "hello"
    assert path == os.environ.get("PATH", "")


@pytest.mark.above_pipes("the child's environment")
def test_env_accepts_go_style_entries(tmp_path):
    out = tmp_path / "env.txt"
    script = f"import os; open({str(out)!r}, 'w').write(os.environ['A'] + os.environ['B'])"
    transport = StdioTransport([PY, "-c", script], env=["A=1", "B=x=y"])
    transport._proc.wait(10)
    transport.close()
    assert out.read_text() == "1x=y"


@pytest.mark.above_pipes("the stderr pump, the same for both")
def test_stderr_goes_through_sys_stderr_even_without_a_file_descriptor(monkeypatch):
    fake = io.StringIO()  # like a Jupyter kernel's stream: no fileno()
    monkeypatch.setattr(sys, "stderr", fake)
    transport = StdioTransport([PY, "-c", "import sys; print('to stderr', file=sys.stderr)"])
    transport._proc.wait(10)
    transport._stderr_thread.join(5)
    transport.close()
    assert "to stderr" in fake.getvalue()


@pytest.mark.above_pipes("the stderr pump, the same for both")
def test_stderr_can_go_to_a_logger(caplog):
    logger = logging.getLogger("test.server.stderr")
    with caplog.at_level(logging.INFO, logger="test.server.stderr"):
        transport = StdioTransport([PY, "-c", "import sys; print('logged line', file=sys.stderr)"], stderr=logger)
        transport._proc.wait(10)
        transport._stderr_thread.join(5)
        transport.close()
    assert any(r.getMessage() == "logged line" for r in caplog.records)


def test_a_flood_on_stderr_does_not_deadlock():
    lines = []
    with Client(StdioTransport(FAST_SERVER + ["--stderr-flood"], stderr=lines.append), timeout=20) as client:
        assert client.call_tool("echo", {"text": "still here"}).text == "still here"
    assert lines


@pytest.mark.above_pipes("the line framing")
def test_garbage_lines_are_skipped(caplog):
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        with Client(StdioTransport(FAST_SERVER + ["--garbage"]), timeout=10) as client:
            for i in range(5):
                assert client.call_tool("echo", {"text": str(i)}).text == str(i)
    assert any("invalid JSON" in r.getMessage() for r in caplog.records)


@pytest.mark.above_pipes("the line framing")
def test_invalid_utf8_is_skipped():
    script = (
        "import sys, json\n"
        "line = sys.stdin.readline(); rid = json.loads(line)['id']\n"
        "sys.stdout.buffer.write(b'\\xff\\xfe not utf8\\n')\n"
        "sys.stdout.buffer.write(json.dumps({'jsonrpc': '2.0', 'id': rid, 'result': {\n"
        "  'protocolVersion': '2025-11-25', 'capabilities': {}, 'serverInfo': {'name': 'x'}}}).encode() + b'\\n')\n"
        "sys.stdout.flush(); sys.stdin.read()\n"
    )
    with Client(StdioTransport([PY, "-c", script]), timeout=10, protocol="legacy") as client:
        assert client.server_info.name == "x"


@pytest.mark.above_pipes("the line framing")
def test_replies_ending_in_crlf_are_read_as_lines():
    # What a server on Windows writes through a stdout in text mode: every newline a CRLF.
    script = (
        "import sys, json\n"
        "line = sys.stdin.readline(); rid = json.loads(line)['id']\n"
        "sys.stdout.buffer.write(b'\\r\\n' + json.dumps({'jsonrpc': '2.0', 'id': rid, 'result': {\n"
        "  'protocolVersion': '2025-11-25', 'capabilities': {}, 'serverInfo': {'name': 'crlf'}}}).encode() + b'\\r\\n')\n"
        "sys.stdout.flush(); sys.stdin.read()\n"
    )
    with Client(StdioTransport([PY, "-c", script]), timeout=10, protocol="legacy") as client:
        assert client.server_info.name == "crlf"


def test_close_leaves_no_process_behind():
    before = child_pids()
    client = Client(StdioTransport(FAST_SERVER), timeout=10)
    client.initialize()
    pid = client.transport.pid
    client.close()
    assert not pid_alive(pid)
    assert child_pids() == before


def test_close_kills_a_server_that_ignores_eof_and_sigterm_and_its_children():
    script = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'])\n"
        "print(child.pid, file=sys.stderr, flush=True)\n"
        "while True: time.sleep(1)\n"
    )
    lines = []
    transport = StdioTransport([PY, "-c", script], stderr=lines.append)
    wait_for(lambda: lines, timeout=30, what="the grandchild's pid")
    grandchild = int(lines[0])
    t0 = time.monotonic()
    transport.close()  # the EOF grace and SIGTERM's (4 s), then SIGKILL for the group
    assert time.monotonic() - t0 < 4 + RELEASED_WITHIN
    assert not pid_alive(transport.pid)
    wait_for(lambda: not pid_alive(grandchild), timeout=RELEASED_WITHIN, what="the grandchild gone")


@pytest.mark.above_pipes("starting the process")
def test_the_server_runs_in_its_own_process_group():
    transport = StdioTransport([PY, "-c", "import time; time.sleep(30)"])
    try:
        assert os.getpgid(transport.pid) == transport.pid != os.getpgid(0)
    finally:
        transport.close()


def test_a_server_that_stops_reading_stdin_cannot_block_a_send():
    transport = StdioTransport([PY, "-c", "import time; time.sleep(30)"])
    try:
        t0 = time.monotonic()
        with pytest.raises((TimeoutError, ConnectionClosed)):
            transport.send({"jsonrpc": "2.0", "method": "x", "params": {"pad": "x" * 5_000_000}}, timeout=0.3)
        assert time.monotonic() - t0 < 0.3 + RELEASED_WITHIN  # (its server never reads: a blocked send never ends)
    finally:
        transport.close()


def test_send_after_close_raises_connection_closed():
    transport = StdioTransport(FAST_SERVER)
    transport.close()
    with pytest.raises(ConnectionClosed):
        transport.send({"jsonrpc": "2.0", "method": "ping", "id": 1})


@pytest.mark.above_pipes("the line framing")
def test_a_message_over_the_size_limit_is_skipped_with_an_error(caplog):
    script = (
        "import sys, json\n"
        "line = sys.stdin.readline(); rid = json.loads(line)['id']\n"
        "sys.stdout.write('{\"a\": \"' + 'x' * 300000 + '\\n')\n"  # (it may be JSON until its end)
        "sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': rid, 'result': {\n"
        "  'protocolVersion': '2025-11-25', 'capabilities': {}, 'serverInfo': {'name': 'ok'}}}) + '\\n')\n"
        "sys.stdout.flush(); sys.stdin.read()\n"
    )
    transport = StdioTransport([PY, "-c", script], max_message_bytes=100_000)
    with caplog.at_level(logging.ERROR, logger="mcpclient"):
        with Client(transport, timeout=10, protocol="legacy") as client:
            assert client.server_info.name == "ok"  # the message after the oversized one is read
    assert any("over 100000 bytes" in r.getMessage() for r in caplog.records)


# -- batched writes (write_frames) ----------------------------------------------------------

# Echoes its stdin line by line once it starts reading, half a second after it starts.
LATE_ECHO = "import sys, time\ntime.sleep(0.5)\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line); sys.stdout.flush()\n"


@pytest.mark.posix_pipes("whole frames at once need non-blocking writes; the portable pipes frame nothing")
def test_write_frames_writes_whole_frames_in_order_until_the_pipe_is_full():
    transport = StdioTransport([PY, "-c", LATE_ECHO])
    try:
        messages = [{"jsonrpc": "2.0", "method": "n", "params": {"i": i, "pad": "x" * 950}} for i in range(200)]
        frames = [transport.frame(message) for message in messages]
        assert all(frame is not None and len(frame) < 1024 for frame in frames)
        written = transport.write_frames(frames)  # the child is not reading yet: the pipe fills
        assert 0 < written < len(frames)
        assert transport.write_frames(frames[written:]) == 0  # full: nothing more, and no waiting
        got: list[int] = []
        reader = threading.Thread(target=lambda: got.extend(transport.receive()["params"]["i"] for _ in messages))
        reader.start()  # the echo comes back while the rest goes out
        for message in messages[written:]:  # what did not go out is sent the usual way
            transport.send(message, timeout=10)
        reader.join(10)
        assert got == list(range(200))  # every frame whole, in order, once
    finally:
        transport.close()


@pytest.mark.posix_pipes("whole frames at once need non-blocking writes; the portable pipes frame nothing")
def test_a_message_too_big_for_one_atomic_write_has_no_frame():
    transport = StdioTransport(FAST_SERVER)
    try:
        assert transport.frame({"jsonrpc": "2.0", "method": "n", "params": {"pad": "x" * 5000}}) is None
        small = transport.frame({"jsonrpc": "2.0", "method": "n"})
        assert small == b'{"jsonrpc":"2.0","method":"n"}\n'
    finally:
        transport.close()


def test_write_frames_after_close_writes_nothing():
    transport = StdioTransport(FAST_SERVER)
    frame = transport.frame({"jsonrpc": "2.0", "method": "n"})
    transport.close()
    assert transport.write_frames([frame]) == 0


@pytest.mark.above_pipes("the transport's methods")
def test_a_subclass_that_wraps_send_or_receive_alone_sees_every_message():
    class WrapsSend(StdioTransport):
        def send(self, message, *, timeout=None):
            return super().send(message, timeout=timeout)

    class WrapsReceive(StdioTransport):
        def receive(self):
            return super().receive()

    class WrapsBoth(StdioTransport):
        def send(self, message, *, timeout=None):
            return super().send(message, timeout=timeout)

        def write_frames(self, frames):
            return super().write_frames(frames)

        def receive(self):
            return super().receive()

        def receive_within(self, timeout, spin=0.0):
            return super().receive_within(timeout, spin)

    def can(cls):
        return writes_batched(cls), reads_inline(cls)

    assert can(StdioTransport) == (True, True)
    assert can(WrapsSend) == (False, True)
    assert can(WrapsReceive) == (True, False)
    assert can(WrapsBoth) == (True, True)


def test_a_write_blocked_on_a_full_pipe_never_lands_in_a_file_that_reuses_its_descriptor(tmp_path):
    transport = StdioTransport([PY, "-c", "import time; time.sleep(30)"], stderr=None)  # never reads
    fd = transport._proc.stdin.fileno()
    outcome: list[BaseException] = []
    ended_at: list[float] = []

    def write() -> None:  # 64 KiB go in, then it waits for room that never comes
        try:
            transport.send({"jsonrpc": "2.0", "method": "n", "params": {"pad": "x" * 1_000_000}}, timeout=20)
        except BaseException as exc:  # noqa: BLE001 - looked at below
            outcome.append(exc)
            ended_at.append(time.monotonic())

    writer = threading.Thread(target=write)
    writer.start()
    time.sleep(0.3)
    closer = threading.Thread(target=transport.close)
    closing = time.monotonic()
    closer.start()  # the child ignores EOF: close() terminates it after its grace
    files = []
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and closer.is_alive():
        handle = open(tmp_path / f"f{len(files)}", "wb")  # takes the lowest free descriptor
        files.append(handle)
        if handle.fileno() == fd:
            break
        time.sleep(0.01)
    writer.join(10)
    closer.join(10)
    for handle in files:
        handle.close()
    sizes = {path.name: path.stat().st_size for path in tmp_path.iterdir()}
    assert not any(sizes.values()), sizes  # nothing of ours landed in them
    assert not writer.is_alive() and outcome and isinstance(outcome[0], ConnectionClosed)
    ended = ended_at[0] - closing
    assert ended < 1.0  # close() ends the wait for room within a slice, not when the child dies


@pytest.mark.posix_pipes("it fills the pipe with whole frames; the portable writer thread cannot take a message back once begun")
def test_a_send_to_a_full_pipe_times_out_as_a_timeout_when_nothing_of_it_went_out():
    transport = StdioTransport([PY, "-c", "import time; time.sleep(30)"], stderr=None)  # never reads
    try:
        for size in (3000, 100, 1):  # whole writes, smaller and smaller, until no byte more fits
            while transport.write_frames([b" " * (size - 1) + b"\n"]):
                pass
        start = time.monotonic()
        with pytest.raises(TimeoutError, match="not reading its stdin"):
            transport.send({"jsonrpc": "2.0", "method": "ping", "id": 1}, timeout=0.3)
        assert 0.3 <= time.monotonic() - start < 0.3 + RELEASED_WITHIN
    finally:
        transport.close()
