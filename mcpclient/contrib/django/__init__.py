"""Django app: ``SharedClient``s from ``settings.MCPCLIENT_SERVERS``, one per process.

In ``settings.py``::

    INSTALLED_APPS = [..., "mcpclient.contrib.django"]
    MCPCLIENT_SERVERS = {
        "default": {"target": ["python", "server.py"], "timeout": 10, "retry": "safe"},
        "search": {"target": "https://search.example/mcp", "headers": {"X-Team": "web"}},
    }

In a view: ``from mcpclient.contrib.django import get_client`` then
``get_client().call_tool(...)`` (or ``get_client("search")``). Each entry's ``target`` and
``retry`` go to ``SharedClient``, the rest to ``mcpclient.connect``. Nothing starts at import
or in ``ready()``: each worker process opens its clients on first use and closes them at exit
(Django has no shutdown signal; under gunicorn a worker's exit runs the interpreter's exit
handlers). The system check ``mcpclient.E001`` pings every server (``manage.py check``,
``runserver``) and reports one that does not answer; ``MCPCLIENT_CHECK = False`` turns it off.
"""

from __future__ import annotations

from ._registry import clients, get_client

__all__ = ["clients", "get_client"]
