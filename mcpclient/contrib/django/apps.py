"""The app config: settings read in ``ready()``, and the reachability system check."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks

from ._pool import get_pool
from ._registry import clients

__all__ = ["MCPClientConfig", "check_servers"]


class MCPClientConfig(AppConfig):  # type: ignore[misc]  # Django ships no type hints
    name = "mcpclient.contrib.django"
    label = "mcpclient"
    verbose_name = "MCP client"

    def ready(self) -> None:
        clients()  # a settings mistake shows at start-up, not on the first request
        if getattr(settings, "MCPCLIENT_POOL", None) is not None:
            get_pool()  # the same for the pool's (nothing is opened)
        checks.register(check_servers, "mcpclient")


def check_servers(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``mcpclient.E001`` for every configured server that does not answer a ping.

    A client the check opened is closed again, so ``manage.py`` commands leave no server
    behind and each worker still opens its own.
    """
    if not getattr(settings, "MCPCLIENT_CHECK", True):
        return []
    errors: list[checks.CheckMessage] = []
    for name, shared in clients().items():
        was_open = shared.is_open
        health = shared.health()
        if not was_open:
            shared.close()
        if not health["ok"]:
            errors.append(checks.Error(
                f"MCP server {name!r} is unreachable: {health['last_error']}",
                hint="check MCPCLIENT_SERVERS in settings.py, or set MCPCLIENT_CHECK = False",
                id="mcpclient.E001",
            ))
    return errors
