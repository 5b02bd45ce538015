"""InProcessTransport: a Client talking to a real server object in the test's own process.

The server is an official-SDK ``MCPServer`` or low-level ``Server`` (the ``mcp`` package) or a
``FastMCP`` (the ``fastmcp`` package). It runs on its own asyncio loop in a daemon thread,
fed through anyio memory streams: no subprocess, no socket. Each message is encoded to JSON
and parsed by the SDK's own message model on the way in, and dumped to JSON and decoded on
the way out, exactly as a stdio server would see and write it, so a message that would not
survive the wire does not survive here either.

``mcp`` is imported here only when a transport is made; ``import mcpclient`` never imports
it, nor ``fastmcp`` (a ``FastMCP`` object is recognised through the already imported module).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import queue
import sys
import threading
import weakref
from typing import Any, AsyncContextManager, Callable

from .._build.open import open_client, opening
from .._client.client import Client
from .._core.credentials import Credentials
from .._core.exceptions import ConnectionClosed, ProtocolError
from ..transports.base import About, Peer, Transport, decode_message, encode_message

__all__ = ["CLOSE_WAIT", "SERVER_GRACE", "InProcessTransport", "connect_in_process"]

log = logging.getLogger(__name__)

#: Seconds the server gets, after the end of its input, to finish (its lifespan's exit
#: included) before its tasks are cancelled.
SERVER_GRACE = 0.25
#: Seconds ``close()`` waits for the server's thread to end. A handler that does not return
#: cannot be stopped (a synchronous tool runs on a worker thread that the loop waits for; a
#: blocking call in an ``async`` tool holds the loop): its daemon thread is left behind, with
#: a warning, and ends when the handler does (or with the process).
CLOSE_WAIT = 1.0
#: Seconds the constructor waits for the loop thread to come up.
START_WAIT = 5.0

_INSTALL_HINT = "an in-process connection needs the official MCP SDK 2.3 or later: pip install 'mcpclient[inprocess]'"


class _Closed:
    """The end of the server's output, queued after its last message; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _runner(server: Any) -> tuple[Any, Callable[[], AsyncContextManager[Any]], str]:
    """The low-level SDK server behind ``server``, the context it runs in, and its name.

    Raises ``TypeError`` for an object that is none of the supported servers.
    """
    try:
        from mcp.server.lowlevel import Server
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    if isinstance(server, Server):
        return server, contextlib.nullcontext, str(server.name)
    # Neither wrapper makes its low-level server public; the SDK's own in-memory transport
    # (mcp.client._memory) and fastmcp's FastMCPTransport reach it the same way.
    try:
        if isinstance(server, MCPServer):
            lowlevel = server._lowlevel_server
            return lowlevel, contextlib.nullcontext, str(lowlevel.name)
        fastmcp = sys.modules.get("fastmcp")  # a FastMCP object means its package is imported
        if fastmcp is not None and isinstance(server, fastmcp.FastMCP):
            return server._mcp_server, server._lifespan_manager, str(server.name)
    except AttributeError as exc:
        raise TypeError(
            f"this version of {type(server).__module__.split('.')[0]} keeps its low-level server elsewhere; "
            "InProcessTransport supports mcp 2.3+ and fastmcp 4.2+"
        ) from exc
    raise TypeError(
        "InProcessTransport takes an official MCP SDK server (mcp.server.mcpserver.MCPServer or "
        f"mcp.server.lowlevel.Server) or a fastmcp.FastMCP, got {type(server).__name__}"
    )


class _ServerLoop:
    """The server's asyncio loop on a daemon thread, and the two streams to and from it.

    Holds no reference to the transport, so a transport nobody closed can still be collected
    (its finalizer then stops this loop).
    """

    def __init__(self, lowlevel: Any, lifespan: Callable[[], AsyncContextManager[Any]], name: str,
                 raise_exceptions: bool) -> None:
        import anyio
        import mcp_types
        from mcp.shared.message import SessionMessage

        self._anyio = anyio
        self._adapter = mcp_types.jsonrpc_message_adapter
        self._session_message = SessionMessage
        self._lowlevel = lowlevel
        self._lifespan = lifespan
        self._raise_exceptions = raise_exceptions
        self.inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._to_server: Any = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self.closed: str | None = None
        self.thread = threading.Thread(target=self._run, name=f"mcpclient-in-process-{name}", daemon=True)
        self.thread.start()
        if not self._ready.wait(START_WAIT):
            self.stop()
            raise ConnectionClosed(f"the in-process server's loop did not start within {START_WAIT} s")

    # --- the caller's side -------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Hand one encoded message to the server; never blocks."""
        try:
            item: Any = self._session_message(self._adapter.validate_json(data, by_name=False))
        except Exception as exc:  # noqa: BLE001 - what the SDK's stdio reader does with a bad line
            item = exc
        with self._lock:
            if self.closed is not None or self._loop is None:
                raise ConnectionClosed(self.closed or "the in-process server is not running")
            try:
                self._loop.call_soon_threadsafe(self._deliver, item)
            except RuntimeError as exc:  # the loop closed under us
                raise ConnectionClosed("the in-process server's loop has ended") from exc

    def stop(self, reason: str = "closed by the client") -> None:
        """End the server (its input first, then a cancel after ``SERVER_GRACE``); idempotent."""
        with self._lock:
            if self.closed is None:
                self.closed = reason
            loop, stop = self._loop, self._stop
        self.inbox.put(_Closed(self.closed))
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already ended
                loop.call_soon_threadsafe(stop.set)
        if threading.current_thread() is not self.thread:
            self.thread.join(CLOSE_WAIT)
            if self.thread.is_alive():
                log.warning("the in-process server did not stop within %.1f s: a handler is still running "
                            "(a synchronous tool, or a blocking call in an async one); its daemon thread "
                            "is left to end by itself", CLOSE_WAIT)

    # --- the loop's side ---------------------------------------------------------------------

    def _deliver(self, item: Any) -> None:
        with contextlib.suppress(self._anyio.ClosedResourceError, self._anyio.BrokenResourceError):
            self._to_server.send_nowait(item)

    def _run(self) -> None:
        reason = "the in-process server stopped"
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to the caller as the connection's end
            log.warning("the in-process server failed: %r", exc, exc_info=True)
            reason = f"the in-process server failed: {exc!r}"
        finally:
            with self._lock:
                if self.closed is None:
                    self.closed = reason
                self._loop = None
            self._ready.set()
            self.inbox.put(_Closed(self.closed))

    async def _main(self) -> None:
        anyio = self._anyio
        to_server, server_in = anyio.create_memory_object_stream[Any](math.inf)
        server_out, from_server = anyio.create_memory_object_stream[Any](math.inf)
        self._to_server = to_server
        self._stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._ready.set()
        with self._lock:
            if self.closed is not None:  # stopped before the loop was up
                self._stop.set()
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._serve, server_in, server_out, done)
            tg.start_soon(self._pump, from_server)
            await self._stop.wait()
            to_server.close()  # the end of the server's input: it finishes its work and returns
            with anyio.move_on_after(SERVER_GRACE):
                await done.wait()
            tg.cancel_scope.cancel()

    async def _serve(self, server_in: Any, server_out: Any, done: Any) -> None:
        lowlevel = self._lowlevel
        try:
            async with self._lifespan():
                await lowlevel.run(server_in, server_out, lowlevel.create_initialization_options(),
                                   raise_exceptions=self._raise_exceptions)
        except Exception as exc:  # noqa: BLE001 - a server that raises ends the connection, as its process would
            log.warning("the in-process server raised %r", exc, exc_info=True)
            self._end(f"the in-process server raised {exc!r}")
        else:
            self._end("the in-process server stopped")
        finally:
            done.set()
            server_out.close()

    def _end(self, reason: str) -> None:
        with self._lock:
            if self.closed is None:
                self.closed = reason
        assert self._stop is not None
        self._stop.set()

    async def _pump(self, from_server: Any) -> None:
        async for message in from_server:
            self.inbox.put(message)


_NONE = Credentials()
_IN_PROCESS = Peer(network="inproc")


class InProcessTransport(Transport):
    """Connects a ``Client`` to an MCP server object in this process: no subprocess, no socket.

    ``server`` is an official-SDK ``mcp.server.mcpserver.MCPServer`` or
    ``mcp.server.lowlevel.Server``, or a ``fastmcp.FastMCP``. The server runs on its own
    asyncio loop in a daemon thread, started here; every message goes through the SDK's
    message model as it would over stdio. Both eras work (the SDK's servers serve both on one
    connection; the first request decides), and so do server requests (sampling, elicitation,
    roots), progress, logging and cancellation.

    ``raise_exceptions`` is passed to the SDK's ``Server.run``. A handler's exception is an
    error reply (or, in a tool, an ``is_error`` result), as over any transport; an exception
    out of the server itself (its lifespan, its task group) ends the connection: pending
    calls end at once and later ones raise ``ConnectionClosed`` with it. ``close()`` ends the server's input, cancels what is still running after
    ``SERVER_GRACE`` seconds and waits up to ``CLOSE_WAIT`` for the thread; a transport nobody
    closed is closed when it is collected or when the interpreter exits.
    """

    def __init__(self, server: Any, *, raise_exceptions: bool = False) -> None:
        lowlevel, lifespan, name = _runner(server)
        self.server = server
        self._raise_exceptions = raise_exceptions
        self._name = name
        self._loop = _ServerLoop(lowlevel, lifespan, name, raise_exceptions)
        self._finalizer = weakref.finalize(self, self._loop.stop)

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        self._loop.send(encode_message(message))

    def receive(self) -> Any:
        item = self._loop.inbox.get()
        if isinstance(item, _Closed):
            self._loop.inbox.put(item)  # for whoever reads next
            raise ConnectionClosed(item.reason)
        try:
            data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        except Exception as exc:  # noqa: BLE001 - a message the SDK cannot serialize is one bad message
            raise ProtocolError(f"the in-process server wrote a message that cannot be serialized: {exc}") from exc
        return decode_message(data)

    def close(self) -> None:
        self._finalizer()

    @property
    def about(self) -> About:
        """In process, no credentials (the server is handed messages, nothing else), and this
        process's directory, now: the server runs here."""
        return About(peer=_IN_PROCESS, credentials=_NONE, directory=os.getcwd())

    def __repr__(self) -> str:
        return f"InProcessTransport({self._name!r})"


def connect_in_process(server: Any, *, raise_exceptions: bool = False, **options: Any) -> Client:
    """An initialized ``Client`` on ``InProcessTransport(server)``; close it when done.

    ``options`` are ``Client``'s (``timeout``, ``protocol``, ``handlers=Handlers(...)``,
    ``plugins=Plugins(...)``...).
    Raises what ``Client.initialize`` raises (the server is stopped then).
    """
    return open_client(InProcessTransport(server, raise_exceptions=raise_exceptions),
                       opening("connect_in_process()", options))
