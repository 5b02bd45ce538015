"""Transports: how messages reach a server (stdio child process; HTTP)."""

from .base import Transport
from .stdio import StdioTransport

__all__ = ["StdioTransport", "Transport"]
