"""Django app: ``SharedClient``s from ``settings.MCPCLIENT_SERVERS``, one per process; and a
``ClientPool`` of clients per user from ``settings.MCPCLIENT_POOL``.

In ``settings.py``::

    INSTALLED_APPS = [..., "mcpclient.contrib.django"]
    MCPCLIENT_SERVERS = {
        "default": {"target": ["python", "server.py"], "timeout": 10, "retry": "safe"},
        "search": {"target": "https://search.example/mcp", "http": HTTP(headers={"X-Team": "web"})},
    }

In a view: ``from mcpclient.contrib.django import get_client`` then
``get_client().call_tool(...)`` (or ``get_client("search")``). Each entry's ``target`` and
``retry`` go to ``SharedClient``, the rest are ``mcpclient.connect``'s keywords. Nothing starts at import
or in ``ready()``: each worker process opens its clients on first use and closes them at exit
(Django has no shutdown signal; under gunicorn a worker's exit runs the interpreter's exit
handlers). The system check ``mcpclient.E001`` pings every server (``manage.py check``,
``runserver``) and reports one that does not answer; ``MCPCLIENT_CHECK = False`` turns it off.

A client per user (each with the user's own credentials)::

    MCPCLIENT_POOL = {"factory": "myapp.mcp.client_for", "max_clients": 32, "idle_timeout": 300}

``factory(key)`` returns the user's ``Client`` (see ``mcpclient.ClientPool``); in a view,
``client_for(request).call_tool(...)`` runs on the client of ``request.user`` (its ``pk`` is the
key; ``"key": "dotted.path"`` names another function of the request), and an anonymous request
gets ``PermissionDenied``. ``get_pool()`` is the pool (``stats()``, ``discard(key)`` at logout).
"""

from __future__ import annotations

from ._pool import client_for, get_pool, user_key
from ._registry import clients, get_client

__all__ = ["client_for", "clients", "get_client", "get_pool", "user_key"]
