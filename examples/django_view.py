"""A one-file Django project whose view calls an MCP tool, with one client for all threads.

Run it with ``python examples/django_view.py runserver`` and open
http://127.0.0.1:8000/add?a=2&b=40. In a real project, put ``SharedClient`` in a module of
yours (say ``myapp/mcp.py``) and the view in ``views.py``: a ``Client`` is safe to share
between threads, and opening it lazily gives each worker process its own.
"""

from __future__ import annotations

import atexit
import sys
import threading
from pathlib import Path
from typing import Any

import django
from django.conf import settings

if not settings.configured:
    settings.configure(
        DEBUG=False,
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["127.0.0.1", "localhost", "testserver"],
        SECRET_KEY="example-only-not-secret",
        MIDDLEWARE=[],
        INSTALLED_APPS=[],
    )
    django.setup()

from django.http import HttpRequest, JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402

from mcpclient import Client, ConnectionClosed, MCPError, connect  # noqa: E402

DEMO_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "demo_server.py")]


class SharedClient:
    """One MCP client for the process: opened on first use, reopened if the server died."""

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self._client: Client | None = None
        self._lock = threading.Lock()
        self.opened = 0

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        with self._lock:
            if self._client is None:
                self._client = connect(self.command, timeout=10)
                self.opened += 1
            client = self._client
        try:
            return client.call_tool(name, arguments)
        except ConnectionClosed:
            with self._lock:
                if self._client is client:
                    self._client = None
            client.close()
            raise

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


mcp = SharedClient(DEMO_SERVER)
atexit.register(mcp.close)


def add(request: HttpRequest) -> JsonResponse:
    try:
        a, b = float(request.GET["a"]), float(request.GET["b"])
    except (KeyError, ValueError):
        return JsonResponse({"error": "give numbers a and b"}, status=400)
    try:
        result = mcp.call_tool("add", {"a": a, "b": b})
    except MCPError as exc:
        return JsonResponse({"error": str(exc).splitlines()[0]}, status=502)
    return JsonResponse({"sum": result.text, "is_error": result.is_error})


urlpatterns = [path("add", add)]

if __name__ == "__main__":
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
