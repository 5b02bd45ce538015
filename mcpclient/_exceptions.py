"""Every exception mcpclient raises, under one base class.

The hierarchy::

    MCPError
    ├── RPCError                  the server answered with a JSON-RPC error
    ├── CapabilityError           the server did not declare what the method needs
    ├── ClientClosedError         the client was closed (by you) before or during the call
    ├── ProtocolError             the server sent something that breaks the protocol
    ├── ToolError                 a tool result with is_error=True, raised on request
    ├── RequestTimeout            also a TimeoutError
    ├── RequestCancelled          the call was cancelled by the caller
    └── TransportError            also a ConnectionError
        └── ConnectionClosed      the connection to the server is gone

Foreign exceptions (OSError, json, cattrs, requests) never escape mcpclient unwrapped: they are
translated at the boundary where they happen and chained with ``raise ... from``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CapabilityError",
    "ClientClosedError",
    "ConnectionClosed",
    "MCPError",
    "ProtocolError",
    "RPCError",
    "RequestCancelled",
    "RequestTimeout",
    "ToolError",
    "TransportError",
]


class MCPError(Exception):
    """Base class of every error raised by mcpclient."""


class RPCError(MCPError):
    """The server replied to a request with a JSON-RPC error object.

    ``code``, ``message`` and ``data`` are the error object's fields; ``method`` and
    ``request_id`` name the request that failed.
    """

    # Standard JSON-RPC codes, for comparisons in user code.
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    RESOURCE_NOT_FOUND = -32002

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        method: str | None = None,
        request_id: Any = None,
    ) -> None:
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        self.request_id = request_id
        where = f" (method {method!r}, request id {request_id!r})" if method else ""
        super().__init__(f"server error {code}: {message}{where}")

    def __reduce__(self) -> Any:
        return (
            _rebuild_rpc_error,
            (self.code, self.message, self.data, self.method, self.request_id),
        )


def _rebuild_rpc_error(code: int, message: str, data: Any, method: Any, request_id: Any) -> RPCError:
    return RPCError(code, message, data, method=method, request_id=request_id)


class CapabilityError(MCPError):
    """A method needs a server capability the server did not declare; nothing was sent."""

    def __init__(self, capability: str, method: str | None = None) -> None:
        self.capability = capability
        self.method = method
        what = f"{method!r} needs" if method else "this call needs"
        super().__init__(
            f"{what} the server capability {capability!r}, which the server did not declare"
        )

    def __reduce__(self) -> Any:
        return (type(self), (self.capability, self.method))


class ClientClosedError(MCPError):
    """The client is closed: the call was abandoned or never sent."""

    def __init__(self, message: str = "mcp: client closed") -> None:
        super().__init__(message)


class ProtocolError(MCPError):
    """The server sent a message that breaks the protocol (bad JSON, bad shape, bad version)."""


class ToolError(MCPError):
    """A tool ran and reported failure (``ToolResult.is_error``); raised only when asked for."""

    def __init__(self, message: str, result: Any = None, *, tool: str | None = None) -> None:
        self.result = result
        self.tool = tool
        super().__init__(message)


class RequestTimeout(MCPError, TimeoutError):
    """No reply came within the timeout; the server was told to cancel the request."""

    def __init__(self, message: str, *, method: str | None = None, timeout: float | None = None) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(message)


class RequestCancelled(MCPError):
    """The caller cancelled the request before its reply arrived."""

    def __init__(self, message: str, *, method: str | None = None) -> None:
        self.method = method
        super().__init__(message)


class TransportError(MCPError, ConnectionError):
    """The transport failed: the server cannot be started, reached or written to."""


class ConnectionClosed(TransportError):
    """The connection to the server is gone; ``reason`` says why (exit code, stderr tail)."""

    def __init__(self, reason: str, *, exit_code: int | None = None, stderr_tail: str = "") -> None:
        self.reason = reason
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        message = f"connection closed: {reason}"
        if stderr_tail:
            message += f"\nlast lines of the server's stderr:\n{stderr_tail}"
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (_rebuild_connection_closed, (self.reason, self.exit_code, self.stderr_tail))


def _rebuild_connection_closed(reason: str, exit_code: Any, stderr_tail: str) -> ConnectionClosed:
    return ConnectionClosed(reason, exit_code=exit_code, stderr_tail=stderr_tail)
