"""An opt-in cache of list and read results, honouring ``ttlMs`` and ``cacheScope``.

Modern results say how long they stay fresh (``ttlMs``) and whether they may be shared across
credentials (``cacheScope``). Legacy results carry neither: they are kept only when the server
promised to announce changes (``listChanged`` / ``subscribe``), until it does. Every
``list_changed`` or ``resources/updated`` notification drops what it concerns. Private results
(``cacheScope: "private"``) are not cached at all, so they are never served to another identity.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Hashable

__all__ = ["ResultCache"]

#: The most entries kept; the oldest go first.
MAX_ENTRIES = 1024


class ResultCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Hashable, tuple[float, Any]] = {}

    def get(self, key: Hashable) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires, value = entry
            if expires < time.monotonic():
                del self._entries[key]
                return None
            return value

    def put(self, key: Hashable, value: Any, ttl: float) -> None:
        if ttl <= 0:
            return
        with self._lock:
            if len(self._entries) >= MAX_ENTRIES:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (time.monotonic() + ttl, value)

    def drop(self, kind: str, uri: str | None = None) -> None:
        """Forget entries of ``kind`` ("tools", "prompts", "resources", "read"), or one URI."""
        with self._lock:
            for key in [k for k in self._entries if _matches(k, kind, uri)]:
                del self._entries[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _matches(key: Hashable, kind: str, uri: str | None) -> bool:
    if not isinstance(key, tuple) or not key or key[0] != kind:
        return False
    return uri is None or (len(key) > 1 and key[1] == uri)


def freshness(results: list[dict[str, Any]], legacy_ttl: float | None) -> tuple[float, bool]:
    """How long a result (all its pages) stays fresh, and whether it is private.

    Modern pages carry ``ttlMs``; the shortest wins. Legacy pages carry none: they get
    ``legacy_ttl`` (None when they must not be cached at all).
    """
    ttls: list[float] = []
    private = False
    for result in results:
        ttl = result.get("ttlMs")
        if isinstance(ttl, (int, float)) and not isinstance(ttl, bool):
            ttls.append(max(0.0, ttl / 1000.0))
        elif legacy_ttl is not None:
            ttls.append(legacy_ttl)
        else:
            return 0.0, False
        if result.get("cacheScope") == "private":
            private = True
    return (min(ttls) if ttls else 0.0), private
