"""Remembered discovery: which era a server speaks, and its ``server/discover`` answer, in a store.

With ``Plugins(cache=store)`` the opening looks here first: a server remembered as modern is
not probed at all (its discover answer is taken as if just received: the modern era keeps no
session), one remembered as legacy goes straight to ``initialize``. An entry lives for the
discover answer's ``ttlMs`` (one without ``ttlMs`` is immediately stale, as the spec's caching
utility says of a missing ``ttlMs``, so it is not kept; a legacy era, which has no hint, is kept
for ``DISCOVERY_TTL``) and is
forgotten when the server says otherwise: an unsupported-version error, or an opening that
finds another era. Keys are ``mcpclient/era/<digest of the server's identity>``; the value is
JSON (``era``, ``version``, ``discover``).

A discover answer is shared by every client of the store only when its ``cacheScope`` is
``"public"``. Otherwise it belongs to whom it was fetched for, as any private result (see
``plugins/cache``): it is kept under ``mcpclient/era/<server>/<owner>``, where the owner is
what the client's one account of credentials gives (``Credentials.owner``: the
``cache_partition``, resolved when the client opens, with every credential the client sends),
and recalled only by that owner; when nobody can be named (no partition and no credential, or
credentials known only as they are sent), it is not kept, and the next opening probes again.
A legacy server's entry holds its era alone, no answer of the server: it is shared.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import attrs

from .._core.credentials import ANONYMOUS, Credentials
from ..cache import CacheStore, PartitionOption, check_partition, digest, resolve_partition

__all__ = ["DISCOVERY_TTL", "Discoveries", "Remembered"]

log = logging.getLogger("mcpclient")

#: How long a legacy era is remembered (seconds): the legacy era has no freshness hint.
DISCOVERY_TTL = 3600.0


@attrs.frozen
class Remembered:
    era: str
    version: str | None = None
    discover: dict[str, Any] | None = None


class Discoveries:
    """What ``store`` remembers of servers, by identity (``Session.server_identity``), public
    answers for all, private ones per owner (``Credentials.owner`` of the ``cache_partition=``
    value and the client's credentials)."""

    def __init__(self, store: CacheStore, partition: PartitionOption = None) -> None:
        self.store = store
        self.partition = check_partition(partition)

    @staticmethod
    def key(identity: str, owner: str | None = None) -> str:
        base = f"mcpclient/era/{digest(identity)}"
        return base if owner is None else f"{base}/{owner}"

    def _owner(self, credentials: Credentials) -> str | None:
        """The owner of a private answer: None when nobody can be named (``ANONYMOUS`` too)."""
        partition = resolve_partition(self.partition)
        owner = credentials.owner(partition.scope if partition is not None else None)
        return None if owner == ANONYMOUS else owner

    def recall(self, identity: str | None, credentials: Credentials) -> Remembered | None:
        if identity is None:
            return None
        owner = self._owner(credentials)
        keys = [self.key(identity)] + ([self.key(identity, owner)] if owner is not None else [])
        for key in keys:
            remembered = self._recall(identity, key)
            if remembered is not None:
                return remembered
        return None

    def _recall(self, identity: str, key: str) -> Remembered | None:
        raw = self.store.get(key)
        if raw is None:
            return None
        try:
            entry = json.loads(raw)
            era, version, discover = entry["era"], entry.get("version"), entry.get("discover")
            if era not in ("legacy", "modern") or (era == "modern" and not (
                    isinstance(version, str) and isinstance(discover, dict))):
                raise ValueError("not a remembered era")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("forgetting a damaged remembered era (%s)", exc)
            self.store.delete(key)
            return None
        return Remembered(era, version if era == "modern" else None, discover if era == "modern" else None)

    def remember(self, identity: str | None, era: str, version: str | None, discover: dict[str, Any] | None,
                 credentials: Credentials) -> None:
        if identity is None:
            return
        ttl = DISCOVERY_TTL if era == "legacy" else 0.0
        given = discover.get("ttlMs") if discover is not None else None
        if era == "modern" and isinstance(given, (int, float)) and not isinstance(given, bool):
            ttl = max(0.0, given / 1000.0)
        entry: dict[str, Any] = {"era": era}
        key = self.key(identity)
        if era == "modern" and discover is not None:
            entry.update(version=version, discover=discover)
            if discover.get("cacheScope") != "public":
                owner = self._owner(credentials)
                if owner is None:
                    return  # a private answer with nobody to keep it for is not kept
                key = self.key(identity, owner)
        try:
            value = json.dumps(entry, separators=(",", ":")).encode()
        except (TypeError, ValueError):
            return
        self.store.set(key, value, ttl)

    def forget(self, identity: str | None) -> None:
        """Forget the server for every partition: its era or versions changed for all."""
        if identity is not None:
            self.store.delete_prefix(self.key(identity))
