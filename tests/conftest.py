from __future__ import annotations

import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mcpclient import Client

from tests.doubles import QueueTransport, ScriptedServer

#: One JupyterLab and one Chromium per test process, for the browser tests (``lab``, ``browser``).
pytest_plugins = ["tests.lab_browser"]

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
FAST_SERVER = [sys.executable, str(SERVERS / "fast_server.py")]
SDK_SERVER = [sys.executable, str(SERVERS / "sdk_server.py")]
DEMO_SERVER = [sys.executable, str(ROOT / "examples" / "servers" / "demo_server.py")]


#: The modules run over both kinds of stdio pipes (``MCPCLIENT_STDIO``): the stdio transport's
#: tests and the stdio fault matrix. The portable pipes (Windows' way) run here through the
#: same code as on Windows; a test of what only the POSIX pipes do is marked ``posix_pipes``,
#: and one whose subject is above the pipes (framing, the engine, HTTP, an in-memory server)
#: is marked ``above_pipes`` and runs once, over the platform's pipes.
STDIO_MODULES = re.compile(
    r"tests\.(transports\.test_stdio|faults\.test_(stdio_\w+|lifecycle|fork_and_parent_death"
    r"|connect_deadline|failed_initialize|load_and_cycles))$"
)


def pytest_generate_tests(metafunc):
    if STDIO_MODULES.match(metafunc.module.__name__) and metafunc.definition.get_closest_marker("above_pipes") is None:
        metafunc.parametrize("stdio_pipes", ["posix", "portable"], indirect=True)


@pytest.fixture(autouse=True)
def stdio_pipes(request, monkeypatch):
    """The kind of stdio pipes a test runs with (None: the platform's, or what the environment
    says): set through ``MCPCLIENT_STDIO``, which child processes inherit too."""
    kind = getattr(request, "param", None)
    if kind is not None:
        from mcpclient.transports._stdio_pipes import ENV_VAR

        monkeypatch.setenv(ENV_VAR, kind)
        marker = request.node.get_closest_marker("posix_pipes")
        if kind == "portable" and marker is not None:
            pytest.skip(f"the POSIX pipes only: {marker.args[0]}")
    return kind


@pytest.fixture(autouse=True)
def fresh_era_cache():
    """Every test starts with no remembered protocol eras: the cache is keyed by the server's
    URL, and a test server on a port a legacy server of an earlier test used would otherwise
    be taken for legacy without being asked."""
    from mcpclient._client.conversation import _era_cache, _era_cache_lock

    with _era_cache_lock:
        _era_cache.clear()
    yield


@pytest.fixture
def ending_servers():
    """A factory: ``ending_servers(**settings)`` -> a started ``EndingServer``, stopped after."""
    from tests.faults.ending_http import EndingServer

    started: list[EndingServer] = []

    def start(**kwargs: Any) -> EndingServer:
        server = EndingServer(**kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def stoppable_sdk_server():
    """A factory: a started official-SDK HTTP server (``start_sdk_server``'s arguments), which a
    test may stop with SIGSTOP; each is continued and ended after the test."""
    from tests.helpers import require_mcp_sdk
    from tests.http.conftest import start_sdk_server

    require_mcp_sdk()
    started: list[Any] = []

    def start(*args: str) -> Any:
        server = start_sdk_server(*args)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.proc.poll() is None:
            os.kill(server.proc.pid, signal.SIGCONT)
        server.stop()


@pytest.fixture(scope="module")
def shared_sdk_server():
    """A factory like ``stoppable_sdk_server`` for tests that only open their own clients and
    sessions on the server: one official-SDK HTTP server per set of arguments for the whole
    module (each costs about a second to start), ended after the module's last test."""
    from tests.helpers import require_mcp_sdk
    from tests.http.conftest import start_sdk_server

    require_mcp_sdk()
    started: dict[tuple[str, ...], Any] = {}

    def start(*args: str) -> Any:
        server = started.get(args)
        if server is None or server.proc.poll() is not None:
            server = started[args] = start_sdk_server(*args)
        return server

    yield start
    for server in started.values():
        server.stop()


@pytest.fixture
def long_delete(monkeypatch):
    """The DELETE that ends an HTTP session gives up after 60 s, not 5: a close() that waited for
    a stalled server's answer (it waits 1 s, then leaves it to the background) would take 60 s,
    far from the 10 s a test allows."""
    from mcpclient.transports import http

    monkeypatch.setattr(http, "DELETE_TIMEOUT", 60.0)


@pytest.fixture
def transport() -> QueueTransport:
    return QueueTransport()


@pytest.fixture
def scripted(transport):
    """A scripted server and a client on the other end; both stopped after the test."""
    server = ScriptedServer(transport)
    client = Client(transport, timeout=5)
    yield server, client
    client.close()
    server.stop()


@pytest.fixture(autouse=True)
def no_thread_leak():
    """Every test must leave no mcpclient thread running behind it."""
    before = {t for t in threading.enumerate()}
    yield
    deadline = 5.0
    import time

    end = time.monotonic() + deadline
    while time.monotonic() < end:
        leaked = [t for t in threading.enumerate() if t not in before and t.name.startswith("mcpclient-")
                  and t.is_alive()]
        if not leaked:
            return
        time.sleep(0.05)
    pytest.fail(f"threads left running: {[t.name for t in leaked]}")


def child_pids(pid: int | None = None) -> set[int]:
    """The live children of ``pid`` (default: this process), from /proc.

    The stdio watchdog (one per process, for its whole life) is not counted, nor are the
    helpers multiprocessing starts once per process with ``spawn`` and ``forkserver`` (its
    resource tracker and fork server), nor joblib's loky resource tracker (the same, for loky).
    """
    from mcpclient.transports import _watchdog
    from tests.helpers import proc_children

    children: set[int] = set()
    for child in proc_children(os.getpid() if pid is None else pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"from multiprocessing." not in command and b"loky.backend.resource_tracker" not in command:
            children.add(child)
    return children - {_watchdog.pid()}
