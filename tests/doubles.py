"""Test doubles: an in-memory transport and a scripted server playing the other side."""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable

from mcpclient import ConnectionClosed, Transport

_EOF = object()


class QueueTransport(Transport):
    """A transport whose other end is two queues; records every message sent."""

    def __init__(self) -> None:
        self.to_server: queue.Queue[Any] = queue.Queue()
        self.to_client: queue.Queue[Any] = queue.Queue()
        self.sent: list[dict[str, Any]] = []
        self.closed = threading.Event()

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        if self.closed.is_set():
            raise ConnectionClosed("the transport is closed")
        self.sent.append(message)
        self.to_server.put(message)

    def receive(self) -> Any:
        item = self.to_client.get()
        if item is _EOF:
            raise ConnectionClosed("the fake server hung up")
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        self.closed.set()
        self.to_client.put(_EOF)

    # The server side.
    def push(self, message: Any) -> None:
        self.to_client.put(message)

    def hang_up(self) -> None:
        self.to_client.put(_EOF)

    def methods_sent(self) -> list[str]:
        return [m.get("method", "<reply>") for m in self.sent]


LEGACY_INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "completions": {}},
    "serverInfo": {"name": "scripted", "version": "0.1"},
}


class ScriptedServer:
    """Answers requests arriving on a QueueTransport from a table of handlers.

    ``handlers[method](params, message)`` returns a result dict, or raises ``Reply`` to send a
    custom message (an error, nothing at all, several messages).
    """

    def __init__(self, transport: QueueTransport, handlers: dict[str, Callable[..., Any]] | None = None,
                 init_result: dict[str, Any] | None = None) -> None:
        self.transport = transport
        self.received: list[dict[str, Any]] = []
        self.handlers: dict[str, Callable[..., Any]] = {
            "initialize": lambda params, msg: dict(init_result or LEGACY_INIT_RESULT),
            "ping": lambda params, msg: {},
        }
        self.handlers.update(handlers or {})
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            message = self.transport.to_server.get()
            if message is None:
                return
            self.received.append(message)
            method = message.get("method")
            if method is None or "id" not in message:
                continue
            handler = self.handlers.get(method)
            if handler is None:
                self.transport.push({"jsonrpc": "2.0", "id": message["id"],
                                     "error": {"code": -32601, "message": f"no {method}"}})
                continue
            try:
                result = handler(message.get("params") or {}, message)
            except Reply as reply:
                for item in reply.messages:
                    self.transport.push(item)
                continue
            self.transport.push({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def stop(self) -> None:
        self.transport.to_server.put(None)

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method and "id" not in m]


class Reply(Exception):
    def __init__(self, *messages: Any) -> None:
        self.messages = messages


def error(message: dict[str, Any], code: int, text: str, data: Any = None) -> Reply:
    err: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        err["data"] = data
    return Reply({"jsonrpc": "2.0", "id": message["id"], "error": err})
