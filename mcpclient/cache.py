"""Where cached results and remembered discoveries are kept: the ``CacheStore`` interface.

``Client(cache=store)`` keeps list and read results in ``store`` (``cache=True`` means a
``MemoryStore`` of its own, as before), and remembers there which era each server speaks and
its ``server/discover`` answer, so other clients with the same store skip the era probe::

    store = FileStore("/var/cache/myapp/mcp")          # shared by pre-fork workers
    store = RedisStore("redis://127.0.0.1:6379/0")     # shared by hosts (pip install mcpclient[redis])

Private results (``cacheScope: "private"``) belong to one authorization context: a
``Partition`` names it (``Client(cache=store, cache_partition=Partition(user_id))``), and
only its digest goes into a key.

A store holds bytes under string keys, each with a lifetime; the values mcpclient puts there
are JSON of wire dicts (never pickle, so a shared store cannot make a process run code).
A store never raises for its backend's faults (a full disk, a dead Redis): it logs, and the
lookup misses. Write your own by subclassing ``CacheStore`` (five methods).
"""

from __future__ import annotations

import abc
import hashlib
import json
import logging
import os
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Union

__all__ = ["CacheStore", "FileStore", "MemoryStore", "Partition", "PartitionOption", "RedisStore"]

log = logging.getLogger(__name__)


def digest(value: Any) -> str:
    """A short digest of JSON-able ``value``, the same in every process (for keys)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Partition:
    """Whom private results belong to: one authorization context (a user, a tenant, a token).

    ``Partition(name)``: any non-empty string that is the same for the same context and
    differs between contexts (a user id; an access token, since a new token is a new
    context). Only a digest of ``name`` is kept (``scope``), so the name never reaches a key,
    a store, a log or this object's repr. Two partitions of the same name are equal.
    """

    __slots__ = ("scope",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("Partition(name) takes a non-empty string (for no partition, give None)")
        #: The digest that names this partition in keys.
        self.scope = digest(name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Partition) and other.scope == self.scope

    def __hash__(self) -> int:
        return hash(("Partition", self.scope))

    def __repr__(self) -> str:
        return f"Partition(<{self.scope[:12]}>)"  # never the name: it may be a token


#: What ``cache_partition=`` takes: a name, a ``Partition``, or a function giving either for
#: the current call (run on the calling thread, so it may read a request-local); ``""`` and
#: None mean no partition.
PartitionOption = Union[str, Partition, Callable[[], Union[str, Partition, None]], None]


def check_partition(option: object) -> PartitionOption:
    """``option`` if ``cache_partition=`` may take it, else ``TypeError``."""
    if option is None or isinstance(option, (str, Partition)) or callable(option):
        return option
    raise TypeError(f"cache_partition= takes a string, a Partition or a function giving one, got {option!r}")


def resolve_partition(option: PartitionOption) -> Partition | None:
    """The partition ``option`` names now (calling it when a function); None for none.

    A function that gives something else than a string, a Partition or None raises
    ``TypeError``: private results must never land in the wrong partition by accident.
    """
    value = option() if callable(option) else option
    if value is None or value == "":
        return None
    if isinstance(value, Partition):
        return value
    if isinstance(value, str):
        return Partition(value)
    raise TypeError(f"the cache_partition function gave {type(value).__name__}: give a string, a Partition or None")


class CacheStore(abc.ABC):
    """Bytes under string keys, each kept for a number of seconds (thread-safe).

    Keys mcpclient uses are ``/``-separated ASCII (digests, method names, no credentials).
    Every method must return quickly and must not raise for the backend's faults: log them,
    and answer ``get`` with None.
    """

    @abc.abstractmethod
    def get(self, key: str) -> bytes | None:
        """The value kept under ``key``, or None (missing, expired, unreadable)."""

    @abc.abstractmethod
    def set(self, key: str, value: bytes, ttl: float) -> None:
        """Keep ``value`` under ``key`` for ``ttl`` seconds (nothing is kept for ``ttl <= 0``)."""

    @abc.abstractmethod
    def delete(self, key: str) -> None:
        """Forget ``key``."""

    @abc.abstractmethod
    def delete_prefix(self, prefix: str) -> None:
        """Forget every key that starts with ``prefix``."""

    def close(self) -> None:
        """Release the backend (a connection); the store's owner calls it, not the Client."""


class MemoryStore(CacheStore):
    """A dict in this process, bounded to ``max_entries`` (the oldest go first)."""

    def __init__(self, max_entries: int = 1024) -> None:
        self._max = max_entries
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[float, bytes]] = {}

    def get(self, key: str) -> bytes | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] < time.monotonic():
                del self._entries[key]
                return None
            return entry[1]

    def set(self, key: str, value: bytes, ttl: float) -> None:
        if ttl <= 0:
            return
        with self._lock:
            self._entries.pop(key, None)
            while len(self._entries) >= self._max:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (time.monotonic() + ttl, value)

    def delete(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def delete_prefix(self, prefix: str) -> None:
        with self._lock:
            for key in [k for k in self._entries if k.startswith(prefix)]:
                del self._entries[key]

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._entries)} entries)"


#: What a FileStore entry file is called: the key's digest, and this suffix.
_SUFFIX = ".mcpcache"
#: The first line of an entry file: this magic, then JSON of the key and the expiry time.
_MAGIC = b"mcpclient-cache-1 "


class FileStore(CacheStore):
    """Files in one directory: for the workers of one host (gunicorn's pre-fork, Celery).

    Each entry is one file, written to a temporary name and renamed into place, so a reader
    in another process sees the old entry or the new one, never half of one. Expiry is per
    entry (wall-clock time, as processes share it); the directory is kept under ``max_bytes``
    by removing expired entries, then the oldest. The directory is made ``0700`` and the files
    ``0600``; a directory another user owns, or one others may write to, is refused
    (``ValueError``). Files that are not entries, or are damaged, are skipped with a log line.
    """

    def __init__(self, directory: str | os.PathLike[str], *, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = self.directory.stat()
        if info.st_uid != os.getuid():
            raise ValueError(f"the cache directory {self.directory} belongs to another user: choose one of your own")
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.chmod(self.directory, 0o700)  # ours: close it to others before anything is written
        self._lock = threading.Lock()
        self._written = 0  # bytes written since the last sweep (by this process)

    def _path(self, key: str) -> Path:
        return self.directory / (hashlib.sha256(key.encode()).hexdigest() + _SUFFIX)

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        entry = self._read(path)
        if entry is None:
            return None
        stored_key, expires, value = entry
        if stored_key != key:
            return None  # another key's file under this name: never served
        if expires < time.time():
            self._unlink(path)
            return None
        return value

    def set(self, key: str, value: bytes, ttl: float) -> None:
        if ttl <= 0:
            return
        header = _MAGIC + json.dumps({"key": key, "expires": time.time() + ttl}).encode() + b"\n"
        try:
            fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".part")  # 0600
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(header)
                    file.write(value)
                os.replace(temporary, self._path(key))
            except BaseException:
                self._unlink(Path(temporary))
                raise
        except OSError as exc:
            log.warning("cannot write the cache entry in %s: %s", self.directory, exc)
            return
        with self._lock:
            self._written += len(header) + len(value)
            sweep = self._written > self.max_bytes // 8
            if sweep:
                self._written = 0
        if sweep:
            self.sweep()

    def delete(self, key: str) -> None:
        self._unlink(self._path(key))

    def delete_prefix(self, prefix: str) -> None:
        for path in self._entries():
            entry = self._read(path)
            if entry is not None and entry[0].startswith(prefix):
                self._unlink(path)

    def sweep(self) -> None:
        """Remove expired entries, then the oldest until the directory is under ``max_bytes``."""
        now = time.time()
        kept: list[tuple[float, int, Path]] = []
        for path in self._entries():
            entry = self._read(path)
            if entry is None or entry[1] < now:
                self._unlink(path)
                continue
            try:
                info = path.stat()
            except OSError:
                continue
            kept.append((info.st_mtime, info.st_size, path))
        total = sum(size for _, size, _ in kept)
        for _, size, path in sorted(kept, key=lambda item: item[0]):
            if total <= self.max_bytes:
                break
            self._unlink(path)
            total -= size
        for path in self.directory.glob(".tmp-*.part"):  # left by a process killed mid-write
            try:
                if path.stat().st_mtime < now - 60:
                    self._unlink(path)
            except OSError:
                continue

    def _entries(self) -> list[Path]:
        try:
            return [path for path in self.directory.iterdir() if path.name.endswith(_SUFFIX)]
        except OSError as exc:
            log.warning("cannot list the cache directory %s: %s", self.directory, exc)
            return []

    def _read(self, path: Path) -> tuple[str, float, bytes] | None:
        """(key, expiry, value) of an entry file; None when missing or not a sound entry."""
        try:
            with open(path, "rb") as file:
                data = file.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("cannot read the cache entry %s: %s", path.name, exc)
            return None
        header, newline, value = data.partition(b"\n")
        try:
            if not newline or not header.startswith(_MAGIC):
                raise ValueError("not an mcpclient cache entry")
            fields = json.loads(header[len(_MAGIC):])
            key, expires = fields["key"], fields["expires"]
            if not isinstance(key, str) or not isinstance(expires, (int, float)):
                raise ValueError("a malformed header")
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("skipping the damaged cache entry %s in %s (%s)", path.name, self.directory, exc)
            self._unlink(path)
            return None
        return key, float(expires), value

    def _unlink(self, path: Path) -> None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("cannot remove the cache entry %s: %s", path.name, exc)

    def __repr__(self) -> str:
        return f"FileStore({str(self.directory)!r})"


#: How long a RedisStore waits for Redis (connect, and each command) by default, in seconds.
REDIS_TIMEOUT = 0.5
#: How long a RedisStore leaves Redis alone after a failure before trying again.
REDIS_BACKOFF = 5.0


class RedisStore(CacheStore):
    """Keys in Redis (``pip install 'mcpclient[redis]'``): shared by hosts and their workers.

    Give a URL (``redis://host:6379/0``, ``rediss://`` for TLS, ``unix:///path``): the store
    makes its client with ``timeout`` for connecting and for every command, and closes it in
    ``close()``. Or give your own ``redis.Redis`` (its own timeouts then apply; set them: a
    client without a socket timeout can wait for ever). Keys are prefixed with ``prefix``.
    When Redis fails or is too slow, the store logs once, misses, and leaves Redis alone for
    ``REDIS_BACKOFF`` seconds, so calls go to the server at full speed meanwhile.
    """

    def __init__(self, url_or_client: Any, *, prefix: str = "mcpclient:", timeout: float = REDIS_TIMEOUT) -> None:
        try:
            import redis
        except ImportError as exc:
            raise ImportError("RedisStore needs redis-py: pip install 'mcpclient[redis]'") from exc
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        if isinstance(url_or_client, str):
            self._client = redis.Redis.from_url(
                url_or_client, socket_timeout=timeout, socket_connect_timeout=timeout, retry_on_timeout=False,
            )
            self._owned = True
        elif isinstance(url_or_client, redis.Redis):
            self._client = url_or_client
            self._owned = False
        else:
            raise TypeError(f"RedisStore takes a redis:// URL or a redis.Redis client, got {type(url_or_client).__name__}")
        self.prefix = prefix
        self._lock = threading.Lock()
        self._down_until = 0.0

    def _usable(self) -> bool:
        return time.monotonic() >= self._down_until

    def _failed(self, what: str, exc: BaseException) -> None:
        with self._lock:
            first = self._down_until == 0.0 or time.monotonic() >= self._down_until
            self._down_until = time.monotonic() + REDIS_BACKOFF
        if first:
            log.warning("the Redis cache failed to %s (%s: %s): missing for %gs", what, type(exc).__name__, exc,
                        REDIS_BACKOFF)

    def get(self, key: str) -> bytes | None:
        if not self._usable():
            return None
        try:
            value = self._client.get(self.prefix + key)
        except self._errors as exc:
            self._failed("get an entry", exc)
            return None
        return value if isinstance(value, bytes) else None

    def set(self, key: str, value: bytes, ttl: float) -> None:
        if ttl <= 0 or not self._usable():
            return
        try:
            self._client.set(self.prefix + key, value, px=max(1, int(ttl * 1000)))
        except self._errors as exc:
            self._failed("store an entry", exc)

    def delete(self, key: str) -> None:
        if not self._usable():
            return
        try:
            self._client.delete(self.prefix + key)
        except self._errors as exc:
            self._failed("delete an entry", exc)

    def delete_prefix(self, prefix: str) -> None:
        if not self._usable():
            return
        pattern = _glob_escape(self.prefix + prefix) + "*"
        try:
            keys = list(self._client.scan_iter(match=pattern, count=500))
            for start in range(0, len(keys), 500):
                self._client.delete(*keys[start:start + 500])
        except self._errors as exc:
            self._failed("delete entries", exc)

    def close(self) -> None:
        if self._owned:
            try:
                self._client.close()
            except self._errors as exc:
                log.debug("closing the Redis client: %s", exc)

    def __repr__(self) -> str:
        return f"RedisStore(prefix={self.prefix!r})"  # never the URL: it may hold a password


def _glob_escape(text: str) -> str:
    """``text`` as a literal in a Redis MATCH pattern."""
    return "".join("\\" + char if char in "*?[]\\" else char for char in text)
