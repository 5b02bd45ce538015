"""A one-file Django project whose view calls an MCP tool, with one client per process.

Run it with ``python examples/django_view.py runserver`` (or under gunicorn:
``gunicorn -w 2 --threads 4 examples.django_view:application``) and open
http://127.0.0.1:8000/add?a=2&b=40. The MCP server is configured in the settings
(``MCPCLIENT_SERVERS``) and the ``mcpclient.contrib.django`` app: each worker process opens
its own client on first use, a server that died is replaced on the next request, and
``manage.py check`` reports a server that does not answer. In a real project the settings go
in ``settings.py`` and the views in ``views.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import django
from django.conf import settings

DEMO_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "demo_server.py")]

if not settings.configured:
    settings.configure(
        DEBUG=False,
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["127.0.0.1", "localhost", "testserver"],
        SECRET_KEY="example-only-not-secret",
        MIDDLEWARE=[],
        INSTALLED_APPS=["mcpclient.contrib.django"],
        MCPCLIENT_SERVERS={
            "default": {
                "target": os.environ["MCP_SERVER"].split() if os.environ.get("MCP_SERVER") else DEMO_SERVER,
                "timeout": 10,
                "retry": "safe",
            },
        },
    )
    django.setup()

from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpRequest, JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402

from mcpclient import MCPError  # noqa: E402
from mcpclient.contrib.django import get_client  # noqa: E402


def add(request: HttpRequest) -> JsonResponse:
    try:
        a, b = float(request.GET["a"]), float(request.GET["b"])
    except (KeyError, ValueError):
        return JsonResponse({"error": "give numbers a and b"}, status=400)
    try:
        result = get_client().call_tool("add", {"a": a, "b": b})
    except MCPError as exc:
        return JsonResponse({"error": str(exc).splitlines()[0]}, status=502)
    return JsonResponse({"sum": result.text, "is_error": result.is_error, "worker": os.getpid()})


def health(request: HttpRequest) -> JsonResponse:
    report = get_client().health()
    return JsonResponse(report, status=200 if report["ok"] else 503)


urlpatterns = [path("add", add), path("healthz/mcp", health)]
application = get_wsgi_application()

if __name__ == "__main__":
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
