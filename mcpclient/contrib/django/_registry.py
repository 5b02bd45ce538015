"""The shared clients built from ``settings.MCPCLIENT_SERVERS`` (once per process tree)."""

from __future__ import annotations

import threading
from typing import Any

from ..._build.shared import SharedClient

__all__ = ["build", "clients", "get_client"]

_lock = threading.Lock()
_clients: dict[str, SharedClient] | None = None


def build(servers: Any) -> dict[str, SharedClient]:
    """One ``SharedClient`` per entry of ``MCPCLIENT_SERVERS`` (nothing is started)."""
    if not isinstance(servers, dict):
        raise TypeError(f"MCPCLIENT_SERVERS must be a dict of name to options, got {type(servers).__name__}")
    built: dict[str, SharedClient] = {}
    for name, entry in servers.items():
        if not isinstance(entry, dict) or "target" not in entry:
            raise TypeError(f"MCPCLIENT_SERVERS[{name!r}] must be a dict with a 'target'")
        options = dict(entry)
        built[name] = SharedClient(options.pop("target"), **options)
    return built


def clients() -> dict[str, SharedClient]:
    """The shared clients by name (built from the settings on first use)."""
    global _clients
    with _lock:
        if _clients is None:
            from django.conf import settings

            _clients = build(getattr(settings, "MCPCLIENT_SERVERS", {}))
        return _clients


def get_client(name: str = "default") -> SharedClient:
    """The shared client ``name`` of ``settings.MCPCLIENT_SERVERS``."""
    found = clients()
    if name not in found:
        known = ", ".join(sorted(found)) or "none"
        raise LookupError(f"no MCP server {name!r} in settings.MCPCLIENT_SERVERS (known: {known})")
    return found[name]
