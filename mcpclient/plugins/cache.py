"""The result cache: list and read results kept while fresh, as an extension of the seam.

``Plugins(cache=True)`` (a ``MemoryStore`` of the client's own) or ``Plugins(cache=store)``
(any ``mcpclient.cache.CacheStore``, shared by the clients given it) adds a ``ResultCache``.
Its middleware answers ``tools/list``, ``prompts/list``, ``resources/list``,
``resources/templates/list`` (each page) and ``resources/read`` from the store while fresh,
and drops what a ``list_changed`` or ``resources/updated`` notification concerns. The drop
runs on a thread of its own, ended by ``close()`` and the connection's death, so no store holds
up the notification (and the user's handler after it); while it runs, this client neither
answers from nor keeps under what is being dropped.

How long: modern results say how long they stay fresh (``ttlMs``). The spec's caching utility
(2026-07-28, "Time-to-Live"): "If ``ttlMs`` is absent, clients SHOULD assume a default of 0
(immediately stale) and rely on their own caching heuristics or notifications. This should
only occur in older server versions"; a negative one is treated as 0. So a modern result
without ``ttlMs`` (or with ``ttlMs <= 0``) is never kept. Legacy results (the older versions
the spec means) carry none: the heuristic is that they are kept only when the server promised
to announce changes (``listChanged`` / ``subscribe``), for ``LEGACY_TTL`` at most.

Who may see it: a result is shared by every client of the store only when the server said so
(``cacheScope: "public"``). Any other result belongs to whom it was fetched for, its owner,
which the client's one account of credentials gives (``Session.credentials``,
``Credentials.owner``): a digest of the ``cache_partition`` (a ``mcpclient.cache.Partition``,
a name, or a function giving one per call), every credential the client sends (headers, the
URL's user info and query, HTTP Basic, a stdio server's environment) and the request's own
credential headers (a middleware's). It is kept and served under that owner only:

- a modern result without a ``cacheScope`` of ``"public"`` is private (the spec names no
  default scope; sharing is what must be promised), and is kept only for an owner who can be
  named (a partition or credentials);
- a legacy result never said it may be shared: it is private whenever the request carried any
  credential (any channel) or a partition is set, and shared only among clients that send
  none (the owner ``ANONYMOUS``: they all see the same answers);
- when who the client is cannot be told before a request (a token provider or an auth object,
  whose values are known only as they are sent) and no partition is set, nothing but public
  results is kept or served.

A request with its own ``_meta`` is neither answered from nor kept in the cache (another
``_meta`` may get another answer), nor is an input round.

Keys: ``mcpclient/results/<server>/<method>/<params digest>/<scope>``, where ``<server>`` is a
digest of the server's identity (``Session.server_identity``) and ``<scope>`` is ``public``,
``anonymous`` or the owner's digest: no credential, URI or user name is ever in a key.
(Entries of earlier versions, under ``mcpclient/result/``, are never read.)
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Mapping, Sequence

from .. import types as t
from .._core.credentials import ANONYMOUS, Credentials
from .._core.exceptions import ProtocolError
from ..cache import (
    CacheStore, MemoryStore, PartitionOption, bounded, check_partition, digest, resolve_partition,
)
from ..extensions import Extension, Job, Message, Middleware, Next, Session, Until

__all__ = ["LEGACY_TTL", "ResultCache", "freshness", "kept_under"]

log = logging.getLogger("mcpclient")

#: Where results are kept in a store (the root of every key).
_ROOT = "mcpclient/results/"
#: How long a legacy result is kept when the server announces changes.
LEGACY_TTL = 3600.0
#: The cached methods, with the capability whose announcements keep a legacy result fresh.
CACHED = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
}
#: What the client builds from each cached result: the key of its items, and their model. A
#: kept value it could not build is damaged (another version's, a bad write): a miss, dropped.
_ITEMS: dict[str, tuple[str, type]] = {
    "tools/list": ("tools", t.ToolDef),
    "prompts/list": ("prompts", t.Prompt),
    "resources/list": ("resources", t.Resource),
    "resources/templates/list": ("resourceTemplates", t.ResourceTemplate),
    "resources/read": ("contents", t.ResourceContents),
}
#: How many kept values, found sound, each ResultCache remembers (so a hit is checked once).
_SOUND_MEMORY = 64
#: What each list_changed notification makes stale.
_LIST_CHANGED = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


def freshness(results: Sequence[dict[str, Any]], legacy_ttl: float | None, *,
              modern: bool = False) -> tuple[float, str | None]:
    """How long results (the pages of one answer) stay fresh, in seconds, and what they say of
    sharing: ``"public"``, ``"private"``, or None when they say nothing (a legacy result).

    Results with ``ttlMs`` stay fresh that long (a negative one is 0); the shortest wins. A
    result without one is immediately stale (0) in the ``modern`` era, as the spec says; in
    the legacy era it gets ``legacy_ttl`` (None: not cached at all). A modern result is
    private unless its ``cacheScope`` is ``"public"``. One private page makes the answer
    private; it is public only when every page says so.
    """
    ttls: list[float] = []
    scopes: set[str | None] = set()
    for result in results:
        ttl = result.get("ttlMs")
        if isinstance(ttl, (int, float)) and not isinstance(ttl, bool):
            ttls.append(max(0.0, ttl / 1000.0))
        elif legacy_ttl is not None and not modern:
            ttls.append(legacy_ttl)
        else:
            return 0.0, None
        scope = result.get("cacheScope")
        scopes.add("private" if scope == "private" or (modern and scope != "public") else
                   "public" if scope == "public" else None)
    said = "private" if "private" in scopes else "public" if scopes == {"public"} else None
    return (min(ttls) if ttls else 0.0), said


def kept_under(said: str | None, owner: str | None) -> str | None:
    """The scope a result is kept under: ``"public"`` when the server said so; else its owner
    (``Credentials.owner``), ``ANONYMOUS`` included only for a result that said nothing (a
    legacy one: a private result needs someone to belong to); None: not kept."""
    if said == "public":
        return "public"
    if owner is None or (said == "private" and owner == ANONYMOUS):
        return None
    return owner


class ResultCache(Extension):
    """Keeps list and read results in ``store`` while fresh (see the module's docstring).

    The store is the caller's: closing the Client does not close it (a shared store outlives
    its clients), except the ``MemoryStore`` made for ``store=None``.
    """

    def __init__(self, store: CacheStore | None = None, *, partition: PartitionOption = None) -> None:
        if store is not None and not isinstance(store, CacheStore):
            raise TypeError(f"cache= takes True, False or a mcpclient.cache.CacheStore, got {store!r}")
        self.store: CacheStore = store if store is not None else MemoryStore()
        self._partition = check_partition(partition)
        self._session: Session | None = None
        self._server = "unbound"
        self._lock = threading.Lock()
        self._sound: dict[bytes, None] = {}  # kept values found sound, oldest first
        self._stale: dict[str, int] = {}  # prefixes being dropped (how many drops of each are due)
        self._dropping: list[str] = []  # what the drop's thread has still to do, in order
        self._drop_running = False

    # -- the seam ----------------------------------------------------------------------------------

    def middleware(self) -> Sequence[Middleware]:
        return (self._middleware,)

    def bind(self, session: Session) -> None:
        self._session = session
        identity = session.server_identity
        # A server without an identity gets one of this client's own: nothing shared.
        self._server = digest(identity) if identity is not None else f"client-{id(self):x}"

    # -- the middleware ----------------------------------------------------------------------------

    def _middleware(self, message: Message, next_: Next) -> Any:
        if message.direction == "receive":
            if message.kind == "notification":
                self._on_notification(message.method, message.params or {})
            return next_(message)
        if message.kind != "request" or message.method not in CACHED or message.options.meta:
            return next_(message)
        params = {k: v for k, v in (message.params or {}).items() if k != "_meta"}
        if "requestState" in params or "inputResponses" in params:
            return next_(message)  # an input round answers one caller's questions
        base = self._key(message.method, params)
        if self._stale and self._being_dropped(base):
            return next_(message)  # stale, and maybe still in the store: the server says
        owner = self._owner(message.options.headers)
        for scope in ("public", *((owner,) if owner is not None else ())):
            hit = self._load(message.method, f"{base}/{scope}")
            if hit is not None:
                return hit
        result = next_(message)
        if isinstance(result, dict):
            self._keep(message.method, base, result, owner)
        return result

    def _owner(self, headers: Mapping[str, str] | None) -> str | None:
        """Whom this call's private results belong to (``Credentials.owner``): the partition,
        resolved now on the caller's thread, with every credential the call carries."""
        partition = resolve_partition(self._partition)
        credentials = self._session.credentials if self._session is not None else Credentials.unknown()
        return credentials.owner(partition.scope if partition is not None else None, headers)

    def _key(self, method: str, params: Mapping[str, Any] | None) -> str:
        return f"{_ROOT}{self._server}/{method}/{digest(params or {})}"

    def _load(self, method: str, key: str) -> dict[str, Any] | None:
        raw = self.store.get(key)
        if raw is None:
            return None
        try:
            value = json.loads(raw)
            if not isinstance(value, dict):
                raise ValueError(f"a {type(value).__name__}, not an object")
            if raw not in self._sound:
                self._check(method, value)
        except (ValueError, ProtocolError) as exc:
            log.warning("dropping a damaged cache entry (%s: %s)", key, exc)
            self.store.delete(key)
            return None
        with self._lock:
            self._sound[raw] = None
            if len(self._sound) > _SOUND_MEMORY:
                del self._sound[next(iter(self._sound))]
        return value

    def _check(self, method: str, value: dict[str, Any]) -> None:
        """Raise ``ProtocolError`` unless the client can build its answer from ``value``, as
        from the server's (the items' models, the next page's cursor)."""
        session = self._session
        if session is None:  # a read comes through the middleware, after bind: never here
            raise ProtocolError("this cache belongs to no client yet")
        items, model = _ITEMS[method]
        session.structure_list(value.get(items, []), model)
        cursor = value.get("nextCursor")
        if cursor is not None and not isinstance(cursor, str):
            raise ProtocolError(f"nextCursor is a {type(cursor).__name__}, not a string")

    def _keep(self, method: str, base: str, result: dict[str, Any], owner: str | None) -> None:
        if result.get("resultType", "complete") != "complete":
            return
        caps = self._session.server_capabilities.get(CACHED[method]) if self._session is not None else None
        announces = isinstance(caps, dict) and bool(caps.get("listChanged") or caps.get("subscribe"))
        modern = self._session is not None and self._session.era == "modern"
        ttl, said = freshness([result], LEGACY_TTL if announces else None, modern=modern)
        if ttl <= 0:
            return
        scope = kept_under(said, owner)
        if scope is None:
            return  # a private result with nobody to keep it for is not kept
        try:
            value = json.dumps(result, separators=(",", ":")).encode()
        except (TypeError, ValueError):
            return
        self.store.set(f"{base}/{scope}", value, ttl)

    def _on_notification(self, method: str, params: Mapping[str, Any]) -> None:
        if method in _LIST_CHANGED:
            self._drop([f"{_ROOT}{self._server}/{stale}/" for stale in _LIST_CHANGED[method]])
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                self._drop([self._key("resources/read", {"uri": uri}) + "/"])

    # -- dropping stale entries --------------------------------------------------------------------

    def _drop(self, prefixes: list[str]) -> None:
        """Forget what is kept under ``prefixes``, on the drop's thread (one per client at a
        time), and meanwhile leave it alone (``_being_dropped``)."""
        session = self._session
        if session is None:  # not bound to a connection: nothing to wait with, nothing to hold up
            for prefix in prefixes:
                self.store.delete_prefix(prefix)
            return
        with self._lock:
            for prefix in prefixes:
                self._stale[prefix] = self._stale.get(prefix, 0) + 1
            self._dropping.extend(prefixes)
            if self._drop_running:
                return
            self._drop_running = True
        Job(self._run_drops, session.until(what="dropping stale cache entries"), name="mcpclient-cache-drop")

    def _run_drops(self, until: Until) -> None:
        """The drop's thread: each prefix in turn, until none is left or the connection ends
        (what is left then is given up: the client is closed, or reconnects with a new session)."""
        prefix: str | None = None
        while True:
            with self._lock:
                if prefix is not None:
                    self._done_dropping(prefix)
                if not self._dropping or until.stopped() is not None:
                    for left in self._dropping:
                        self._done_dropping(left)
                    self._dropping.clear()
                    self._drop_running = False
                    return
                prefix = self._dropping.pop(0)
            try:
                with bounded(until):
                    self.store.delete_prefix(prefix)
            except Exception:  # a store that broke its contract: logged, and the next one is done
                log.exception("dropping stale cache entries failed")

    def _done_dropping(self, prefix: str) -> None:  # (under the lock)
        count = self._stale.pop(prefix, 1) - 1
        if count > 0:
            self._stale[prefix] = count

    def _being_dropped(self, base: str) -> bool:
        key = base + "/"
        with self._lock:
            return any(key.startswith(prefix) for prefix in self._stale)

    def clear(self) -> None:
        """Forget every result of this client's server."""
        self.store.delete_prefix(f"{_ROOT}{self._server}/")


def cache_extensions(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """``cache=True`` (in-process) or a ``CacheStore``, private results under ``cache_partition``."""
    cache, partition = options.get("cache", False), options.get("cache_partition")
    if cache is False or cache is None:
        if partition is not None and partition != "":
            raise ValueError("cache_partition= needs cache= (True or a CacheStore)")
        return ()
    if cache is True:
        return (ResultCache(partition=partition),)
    if isinstance(cache, CacheStore):
        return (ResultCache(cache, partition=partition),)
    raise TypeError(f"cache= takes True, False or a mcpclient.cache.CacheStore, got {cache!r}")
