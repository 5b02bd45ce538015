"""Helpers shared by the test suite."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

__all__ = [
    "RELEASED_WITHIN", "BackgroundCall", "InBackground", "approve_examples", "end_process", "free_port", "pid_alive",
    "proc_children",
    "require_mcp_sdk", "wait_for", "wait_for_port",
]


def wait_for(predicate: Callable[[], Any], timeout: float = 5.0, interval: float = 0.01,
             what: str | Callable[[], object] = "condition") -> Any:
    """Poll ``predicate`` until it is truthy and return its value; fail after ``timeout`` s,
    saying ``what`` was awaited (a callable: what it returns then, such as the lines seen)."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= end:
            raise AssertionError(f"not within {timeout}s: {what() if callable(what) else what}")
        time.sleep(interval)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the OS's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 30.0, process: subprocess.Popen[Any] | None = None,
                  log: Path | None = None) -> None:
    """Poll until something accepts connections on 127.0.0.1:``port``; fail after ``timeout``
    s, or at once when ``process`` (the one meant to listen) has exited, with ``log``'s text."""
    end = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            pass
        if process is not None and process.poll() is not None:
            told = log.read_text(errors="replace")[-4000:] if log is not None and log.exists() else ""
            raise AssertionError(f"the process meant to listen on {port} exited ({process.returncode}): {told}")
        if time.monotonic() >= end:
            raise AssertionError(f"nothing listened on 127.0.0.1:{port} within {timeout}s")
        time.sleep(0.05)


def end_process(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """SIGTERM, ``grace`` seconds to exit, then SIGKILL; reaped either way."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(grace)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie has ended), from /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def proc_children(pid: int) -> set[int]:
    """The live children of ``pid``, from /proc (``tests.conftest.child_pids`` leaves out
    the helpers a process keeps for its whole life)."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def approve_examples(config_home: Path) -> dict[str, str]:
    """An environment whose approvals live in ``config_home``, with the servers of this
    checkout's examples/mcp.json approved there, as docs/cli.md tells a reader to do.

    Run from the repository root, examples/mcp.json is a project file: mcpclient starts its
    servers only once they are approved (``mcpclient trust``).
    """
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home), "PYTHONPATH": str(root)}
    subprocess.run([sys.executable, "-m", "mcpclient", "trust", "--yes", "-c", "examples/mcp.json"], cwd=root,
                   env=env, check=True, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    return env


def require_mcp_sdk() -> None:
    """Skip the calling test module (or test) unless the official ``mcp`` SDK is installed.

    The SDK-based test servers (tests/servers/sdk_*.py) run with this interpreter, so a
    missing SDK would otherwise show up as a server that never starts.
    """
    pytest.importorskip("mcp", reason="needs the official mcp SDK (pip install mcp)")


#: How long a test allows a blocked call to return after what ends it (its timeout, a cancel,
#: close(), the server's death). The promise is "about a second"; the tests hold every stall
#: for 30 s or more (a hang, a server stopped with SIGSTOP, a 30 s provider or grace), so 10 s
#: tells a release from a stall however loaded the machine is, and load cannot decide it.
RELEASED_WITHIN = 10.0


class InBackground:
    """``fn()`` on a thread of its own: what it returned or raised, and when it returned."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.error: BaseException | None = None
        self.result: Any = None
        self.ended_at: float | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        try:
            self.result = fn()
        except BaseException as exc:  # recorded for the test
            self.error = exc
        self.ended_at = time.monotonic()

    def released_within(self, start: float, seconds: float = RELEASED_WITHIN) -> BaseException | None:
        """Fail unless ``fn`` returned within ``seconds`` of ``start``; what it raised."""
        self._thread.join(max(0.0, start + seconds + 1 - time.monotonic()))
        assert self.ended_at is not None, "the caller is still blocked"
        assert self.ended_at - start < seconds, f"released after {self.ended_at - start:.2f}s"
        return self.error


class BackgroundCall(InBackground):
    """One ``client.call_tool(tool, arguments, **kwargs)`` on its own thread: what it
    returned or raised, and when it returned."""

    def __init__(self, client: Any, tool: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(lambda: client.call_tool(tool, arguments, **kwargs))


@contextlib.contextmanager
def front_end_kernel(path: Path) -> Iterator[Any]:
    """A real IPython kernel started in ``path``, and a blocking client on it that plays the
    notebook front end (it reads the kernel's iopub and answers its stdin and comms)."""
    import nbclient
    import nbformat

    notebook = nbformat.v4.new_notebook()
    client = nbclient.NotebookClient(notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(path)}})
    with client.setup_kernel():
        kc = client.km.blocking_client()  # the front end's own connection to the same kernel
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=30)
            yield kc
        finally:
            kc.stop_channels()
