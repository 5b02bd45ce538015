"""The in-process wire of a FakeServer: a Transport whose other end is Python code.

Every request the client sends is answered on its own short-lived thread, so a handler may
sleep (simulated latency) or ask the client something (sampling, elicitation) and wait for
the answer without blocking the client's reader.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from typing import Any, Mapping

from .._core.credentials import Credentials
from .._core.exceptions import ConnectionClosed, RequestTimeout, RPCError, TransportError, method_not_found
from ..transports.base import About, Transport

__all__ = ["Context", "FakeConnection"]

log = logging.getLogger(__name__)

_EOF = object()


class Context:
    """What a fake tool, prompt or resource function receives when it takes ``ctx``.

    It can report progress, log, ask the client to sample or elicit, and see whether the
    client cancelled the call (``cancelled`` is a ``threading.Event``).
    """

    def __init__(self, connection: FakeConnection, request_id: Any, params: Mapping[str, Any]) -> None:
        self.connection = connection
        self.request_id = request_id
        self.params = params
        self.cancelled = threading.Event()
        meta = params.get("_meta")
        self.progress_token = meta.get("progressToken") if isinstance(meta, Mapping) else None

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress`` for this call (only if the client asked for it)."""
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.connection.notify("notifications/progress", params)

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a ``notifications/message`` log entry to the client."""
        params: dict[str, Any] = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        self.connection.notify("notifications/message", params)

    def sample(self, prompt: str | list[dict[str, Any]], *, max_tokens: int = 100,
               timeout: float | None = 5.0, **extra: Any) -> dict[str, Any]:
        """Ask the client's sampling handler; return its result (wire JSON)."""
        messages = prompt if isinstance(prompt, list) else [
            {"role": "user", "content": {"type": "text", "text": prompt}}
        ]
        params = {"messages": messages, "maxTokens": max_tokens, **extra}
        return self.connection.request("sampling/createMessage", params, timeout=timeout)

    def elicit(self, message: str, schema: Mapping[str, Any] | None = None, *,
               timeout: float | None = 5.0) -> dict[str, Any]:
        """Ask the client's elicitation handler (form mode); return its result (wire JSON)."""
        params = {"message": message, "requestedSchema": dict(schema or {"type": "object", "properties": {}})}
        return self.connection.request("elicitation/create", params, timeout=timeout)


class _Pending:
    __slots__ = ("event", "reply")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reply: dict[str, Any] | None = None


_ABOUT = About(credentials=Credentials())


class FakeConnection(Transport):
    """Transport mechanics of the fake server; subclasses implement ``handle``."""

    def __init__(self, *, latency: float = 0.0) -> None:
        self.latency = latency
        self._outbox: queue.Queue[Any] = queue.Queue()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._pending: dict[Any, _Pending] = {}
        self._contexts: dict[Any, Context] = {}
        self._ids = itertools.count(1)
        self._reader: threading.Thread | None = None
        self.notifications: list[tuple[str, dict[str, Any]]] = []

    # -- subclass hooks ---------------------------------------------------------------------

    def record(self, method: str, params: dict[str, Any]) -> None:
        """Called on the client's thread for each request, before it is answered."""

    def handle(self, method: str, params: dict[str, Any], ctx: Context) -> Any:
        """Return the result of one request, or raise ``RPCError``."""
        raise method_not_found(method, "this server does not handle it")

    def request_latency(self, method: str, params: dict[str, Any]) -> float:
        return self.latency

    # -- Transport --------------------------------------------------------------------------

    @property
    def about(self) -> About:
        """No credentials: a fake server is handed messages, nothing else."""
        return _ABOUT

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        if self._closed.is_set():
            raise ConnectionClosed("the fake server is closed")
        method = message.get("method")
        if method is None:
            self._on_reply(message)
        elif "id" in message:
            params = message.get("params") or {}
            ctx = Context(self, message["id"], params)
            with self._lock:
                self._contexts[message["id"]] = ctx
            self.record(method, params)
            threading.Thread(
                target=self._answer, args=(message["id"], method, params, ctx),
                name="mcpclient-fake-request", daemon=True,
            ).start()
        else:
            params = message.get("params") or {}
            with self._lock:
                self.notifications.append((method, params))
            if method == "notifications/cancelled":
                with self._lock:
                    cancelled = self._contexts.get(params.get("requestId"))
                if cancelled is not None:
                    cancelled.cancelled.set()

    def receive(self) -> Any:
        reader = threading.current_thread()
        with self._lock:
            if self._reader is None or not self._reader.is_alive():
                self._reader = reader
        if self._reader is not reader:
            raise TransportError("this FakeServer already serves another client: make one FakeServer per Client")
        item = self._outbox.get()
        if item is _EOF:
            self._outbox.put(_EOF)  # every later receive sees the end too
            raise ConnectionClosed("the fake server hung up")
        return item

    def close(self) -> None:
        """Close the connection: the client's reader sees the end; pending asks fail."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._outbox.put(_EOF)
        with self._lock:
            pending = list(self._pending.values())
        for slot in pending:
            slot.event.set()

    @property
    def closed(self) -> bool:
        """Whether the connection was closed (by the client, ``close()`` or ``hang_up()``)."""
        return self._closed.is_set()

    def hang_up(self) -> None:
        """Simulate the server going away: the client fails every pending call at once."""
        self.close()

    # -- answering --------------------------------------------------------------------------

    def _answer(self, request_id: Any, method: str, params: dict[str, Any], ctx: Context) -> None:
        try:
            delay = self.request_latency(method, params)
            if delay > 0 and (self._closed.wait(delay) or ctx.cancelled.is_set()):
                return
            try:
                result = self.handle(method, params, ctx)
            except RPCError as exc:
                error: dict[str, Any] = {"code": exc.code, "message": exc.message}
                if exc.data is not None:
                    error["data"] = exc.data
                self._put({"jsonrpc": "2.0", "id": request_id, "error": error})
                return
            except Exception as exc:
                log.debug("fake handler for %s raised", method, exc_info=True)
                self._put({"jsonrpc": "2.0", "id": request_id,
                           "error": {"code": RPCError.INTERNAL_ERROR, "message": f"{type(exc).__name__}: {exc}"}})
                return
            if not ctx.cancelled.is_set():
                self._put({"jsonrpc": "2.0", "id": request_id, "result": result})
        finally:
            with self._lock:
                self._contexts.pop(request_id, None)

    def _put(self, message: dict[str, Any]) -> None:
        if not self._closed.is_set():
            self._outbox.put(message)

    # -- the server asks the client ---------------------------------------------------------

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification to the client (e.g. ``notifications/tools/list_changed``)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        self._put(message)

    def request(self, method: str, params: Mapping[str, Any] | None = None, *,
                timeout: float | None = 5.0) -> dict[str, Any]:
        """Send a request to the client and wait for its result.

        Raises ``RPCError`` if the client answered with an error, ``RequestTimeout`` if it did
        not answer within ``timeout``, ``ConnectionClosed`` if the connection closed first.
        """
        request_id = f"fake-{next(self._ids)}"
        slot = _Pending()
        with self._lock:
            self._pending[request_id] = slot
        try:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if params is not None:
                message["params"] = dict(params)
            self._put(message)
            if not slot.event.wait(timeout):
                raise RequestTimeout(f"the client did not answer {method!r} in {timeout} s",
                                     method=method, timeout=timeout)
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        reply = slot.reply
        if reply is None:
            raise ConnectionClosed("the fake server was closed while waiting for the client")
        if "error" in reply:
            err = reply["error"] or {}
            raise RPCError(err.get("code", 0), err.get("message", ""), err.get("data"), method=method,
                           request_id=request_id)
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    def _on_reply(self, message: dict[str, Any]) -> None:
        with self._lock:
            slot = self._pending.get(message.get("id"))
        if slot is not None:
            slot.reply = message
            slot.event.set()
