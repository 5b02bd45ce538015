"""Transports: how messages reach a server (stdio child process; Streamable HTTP; HTTP+SSE)."""

from .base import Transport
from .http import StreamableHTTPTransport
from .sse import SSETransport
from .stdio import StdioTransport

__all__ = ["SSETransport", "StdioTransport", "StreamableHTTPTransport", "Transport"]
