"""The ``ClientPool`` of ``settings.MCPCLIENT_POOL`` (once per process tree), and the client of a
request's user."""

from __future__ import annotations

import threading
from typing import Any, Callable, Hashable

from ..._build.pool import ClientPool
from ..._build.pooled import PooledClient

__all__ = ["build_pool", "client_for", "get_pool", "user_key"]

_lock = threading.Lock()
_pool: ClientPool[Any] | None = None
_key: Callable[[Any], Hashable] | None = None


def user_key(request: Any) -> Hashable:
    """The default key of a request: its user's primary key (``request.user.pk``).

    Raises ``PermissionDenied`` (a 403) for a request with no logged-in user: a pool holds
    clients that carry a user's credentials, and an anonymous request has none of its own.
    """
    from django.core.exceptions import PermissionDenied

    user = getattr(request, "user", None)
    if user is None or not getattr(user, "is_authenticated", False):
        raise PermissionDenied("an MCP client of the pool is for a logged-in user")
    return user.pk  # type: ignore[no-any-return]


def build_pool(setting: Any) -> tuple[ClientPool[Any], Callable[[Any], Hashable]]:
    """The pool of ``MCPCLIENT_POOL`` (nothing is opened), and the function giving a request's key.

    ``{"factory": "app.module.client_for", "key": "app.module.key_for", **ClientPool's options}``:
    ``factory`` (a dotted path or a function) is ``ClientPool``'s; ``key`` (optional, default
    ``user_key``) gives a request's key; the rest go to ``ClientPool``.
    """
    from django.utils.module_loading import import_string

    if not isinstance(setting, dict) or "factory" not in setting:
        raise TypeError("MCPCLIENT_POOL must be a dict with a 'factory' (the dotted path of factory(key) -> Client)")
    options = dict(setting)
    factory, key = options.pop("factory"), options.pop("key", user_key)
    factory = import_string(factory) if isinstance(factory, str) else factory
    key = import_string(key) if isinstance(key, str) else key
    return ClientPool(factory, **options), key


def get_pool() -> ClientPool[Any]:
    """The pool of ``settings.MCPCLIENT_POOL`` (built on first use)."""
    return _built()[0]


def client_for(request: Any) -> PooledClient:
    """The client of the request's user: ``get_pool().get(key(request))`` (``PermissionDenied``
    without a logged-in user, with the default key)."""
    pool, key = _built()
    return pool.get(key(request))


def _built() -> tuple[ClientPool[Any], Callable[[Any], Hashable]]:
    global _pool, _key
    with _lock:
        if _pool is None or _key is None:
            from django.conf import settings

            setting = getattr(settings, "MCPCLIENT_POOL", None)
            if setting is None:
                raise LookupError("settings.MCPCLIENT_POOL is not set (a dict with a 'factory')")
            _pool, _key = build_pool(setting)
        return _pool, _key
