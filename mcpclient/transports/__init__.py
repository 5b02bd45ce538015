"""Transports: how messages reach a server (stdio child process; Streamable HTTP; HTTP+SSE)."""

from typing import TYPE_CHECKING, Any

from .._core.credentials import Credentials
from .base import Transport
from .stdio import StdioTransport

if TYPE_CHECKING:
    from .http import StreamableHTTPTransport
    from .sse import SSETransport

__all__ = ["Credentials", "SSETransport", "StdioTransport", "StreamableHTTPTransport", "Transport"]

# The HTTP transports need requests: imported on first use (see mcpclient/__init__.py).
_LAZY = {"StreamableHTTPTransport": ".http", "SSETransport": ".sse"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value
