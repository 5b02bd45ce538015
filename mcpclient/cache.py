"""Where cached results and remembered discoveries are kept: the ``CacheStore`` interface.

``Plugins(cache=store)`` keeps list and read results in ``store`` (``cache=True`` means a
``MemoryStore`` of its own, as before), and remembers there which era each server speaks and
its ``server/discover`` answer, so other clients with the same store skip the era probe::

    store = FileStore("/var/cache/myapp/mcp")          # shared by pre-fork workers
    store = RedisStore("redis://127.0.0.1:6379/0")     # shared by hosts (pip install mcpclient[redis])

Private results (``cacheScope: "private"``) belong to one authorization context: a
``Partition`` names it (``Plugins(cache=store, cache_partition=Partition(user_id))``), and
only its digest goes into a key.

A store holds bytes under string keys, each with a lifetime; the values mcpclient puts there
are JSON of wire dicts (never pickle, so a shared store cannot make a process run code).
A store never raises for its backend's faults (a full disk, a dead Redis): it logs, and the
lookup misses. Write your own by subclassing ``CacheStore`` (five methods).

Work a store does for a client ends with what it serves: the client runs it ``bounded`` by
the call's or the connection's ``Until`` (its deadline, cancel, ``close()``, the connection's
death), and a long loop of the store (a key scan) asks ``stopped()`` between its steps.
"""

from __future__ import annotations

import abc
import contextlib
import contextvars
import errno
import hashlib
import json
import logging
import os
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Iterator, Union

from ._core.files import UnsafeDirectory, check_private_directory, open_private_directory, owned_regular_file, write_atomic
from ._core.waiting import Until

__all__ = [
    "CacheStore", "FileStore", "MemoryStore", "Partition", "PartitionOption", "RedisStore", "bounded", "stopped",
]

log = logging.getLogger(__name__)

#: What the store work running now serves (see ``bounded``); None: nothing says when to stop.
_SERVING: contextvars.ContextVar[Until | None] = contextvars.ContextVar("mcpclient_cache_serving", default=None)


@contextlib.contextmanager
def bounded(until: Until) -> Iterator[None]:
    """Run the store calls of the block for what ``until`` bounds (a call, a connection):
    a store's long loop stops once it is over (``stopped()``)."""
    token = _SERVING.set(until)
    try:
        yield
    finally:
        _SERVING.reset(token)


def stopped() -> bool:
    """Whether what the store work running now serves is over (its deadline, its cancel, the
    client's ``close()``, the connection's death): a long loop asks between its steps, and
    ends early (what is left undone is logged by whoever stops). False outside ``bounded``."""
    until = _SERVING.get()
    return until is not None and until.stopped() is not None


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
        """Forget every key that starts with ``prefix``; a long walk over the keys asks
        ``stopped()`` between its steps and returns early when it says so."""

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
#: How a FileStore's temporary files begin (``write_atomic``'s names): never read as entries.
_TEMPORARY = ".tmp-"
#: The first line of an entry file: this magic, then JSON of the key and the expiry time.
_MAGIC = b"mcpclient-cache-1 "
#: How an entry is opened: never through a symlink, never waiting on a planted FIFO.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class FileStore(CacheStore):
    """Files in one directory: for the workers of one host (gunicorn's pre-fork, Celery).

    Each entry is one file, written to a temporary name and renamed into place, so a reader
    in another process sees the old entry or the new one, never half of one. Expiry is per
    entry (wall-clock time, as processes share it); the directory is kept under ``max_bytes``
    by removing expired entries, then the oldest.

    The entries say what a server's tools are and what they do, so the directory is trusted
    only when it is the user's own: it is made ``0700`` (the files ``0600``), and a symlink or
    a directory another user owns is refused (``ValueError``). On POSIX the store holds the
    directory it checked open and reaches every entry through it, never following a symlink,
    so pointing the path elsewhere later changes nothing; elsewhere the path is checked again
    before each use. Files that are not entries, are damaged, or belong to another user are
    skipped with a log line. ``close()`` lets the directory go (a store that is never closed
    lets it go when it is collected).
    """

    def __init__(self, directory: str | os.PathLike[str], *, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        try:
            self._fd = open_private_directory(self.directory, "cache directory")
        except UnsafeDirectory as exc:
            raise ValueError(str(exc)) from exc
        self._closed = weakref.finalize(self, os.close, self._fd) if self._fd is not None else None
        self._lock = threading.Lock()
        self._written = 0  # bytes written since the last sweep (by this process)

    def _name(self, key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest() + _SUFFIX

    def _where(self, name: str) -> str:
        """What to give ``os`` for the file ``name`` (with ``dir_fd=self._fd``)."""
        if self._fd is not None:
            if self._closed is not None and not self._closed.alive:
                raise ValueError("the store is closed")
            return name
        check_private_directory(self.directory, "cache directory", closed=0o077)  # no descriptor: judged each time
        return str(self.directory / name)

    def get(self, key: str) -> bytes | None:
        name = self._name(key)
        entry = self._read(name)
        if entry is None:
            return None
        stored_key, expires, value = entry
        if stored_key != key:
            return None  # another key's file under this name: never served
        if expires < time.time():
            self._unlink(name)
            return None
        return value

    def set(self, key: str, value: bytes, ttl: float) -> None:
        if ttl <= 0:
            return
        header = _MAGIC + json.dumps({"key": key, "expires": time.time() + ttl}).encode() + b"\n"
        try:  # 0600, no flush to disk: an entry lost in a crash is a miss
            write_atomic(Path(self._where(self._name(key))), header + value, mode=0o600, dir_fd=self._fd, sync=False)
        except (OSError, ValueError) as exc:
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
        self._unlink(self._name(key))

    def delete_prefix(self, prefix: str) -> None:
        for name in self._names():
            if stopped():
                return
            entry = self._read(name)
            if entry is not None and entry[0].startswith(prefix):
                self._unlink(name)

    def sweep(self) -> None:
        """Remove expired entries, then the oldest until the directory is under ``max_bytes``."""
        now = time.time()
        kept: list[tuple[float, int, str]] = []
        for name in self._names(temporary=True):
            if name.startswith(_TEMPORARY):  # left by a process killed mid-write
                info = self._stat(name)
                if info is not None and info.st_mtime < now - 60:
                    self._unlink(name)
                continue
            entry = self._read(name)
            if entry is None or entry[1] < now:
                self._unlink(name)
                continue
            info = self._stat(name)
            if info is not None:
                kept.append((info.st_mtime, info.st_size, name))
        total = sum(size for _, size, _ in kept)
        for _, size, name in sorted(kept, key=lambda item: item[0]):
            if total <= self.max_bytes:
                break
            self._unlink(name)
            total -= size

    def close(self) -> None:
        """Let the directory go; the store misses from then on (close it when no thread uses it)."""
        if self._closed is not None:
            self._closed()

    def _names(self, *, temporary: bool = False) -> list[str]:
        """The entries' names (and the temporary files', when asked)."""
        try:
            if self._fd is None:
                names = os.listdir(self._where("."))
            else:  # a descriptor of its own: listing moves a directory's offset, shared by dup()
                listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=self._fd)
                try:
                    names = os.listdir(listing)
                finally:
                    os.close(listing)
        except (OSError, ValueError) as exc:
            log.warning("cannot list the cache directory %s: %s", self.directory, exc)
            return []
        return [name for name in names if name.endswith(_SUFFIX) and (temporary or not name.startswith(_TEMPORARY))]

    def _read(self, name: str) -> tuple[str, float, bytes] | None:
        """(key, expiry, value) of an entry file; None when missing or not a sound entry."""
        try:
            fd = os.open(self._where(name), _READ_FLAGS, dir_fd=self._fd)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            if isinstance(exc, OSError) and exc.errno == errno.ELOOP:
                log.warning("skipping the cache entry %s in %s: it is a symbolic link", name, self.directory)
                self._unlink(name)
            else:
                log.warning("cannot read the cache entry %s: %s", name, exc)
            return None
        try:
            with os.fdopen(fd, "rb") as file:
                if not owned_regular_file(file.fileno()):
                    log.warning("skipping the cache entry %s in %s: not a file of this user's own", name, self.directory)
                    return None
                data = file.read()
        except OSError as exc:
            log.warning("cannot read the cache entry %s: %s", name, exc)
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
            log.warning("skipping the damaged cache entry %s in %s (%s)", name, self.directory, exc)
            self._unlink(name)
            return None
        return key, float(expires), value

    def _stat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(self._where(name), dir_fd=self._fd, follow_symlinks=False)
        except (OSError, ValueError):
            return None

    def _unlink(self, name: str) -> None:
        try:
            os.unlink(self._where(name), dir_fd=self._fd)  # a symlink itself, never what it points at
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            log.warning("cannot remove the cache entry %s: %s", name, exc)

    def __repr__(self) -> str:
        return f"FileStore({str(self.directory)!r})"


#: How long a RedisStore waits for Redis (connect, and each command) by default, in seconds.
REDIS_TIMEOUT = 0.5
#: How long a RedisStore leaves Redis alone after a failure before trying again.
REDIS_BACKOFF = 5.0
#: How many keys a RedisStore's key scan asks Redis to look at per round trip.
SCAN_COUNT = 1000
#: A key scan that has not ended after this many round trips (ten million keys looked at) is
#: a broken Redis: it stops, as a failure.
MAX_SCAN_ROUNDS = 10_000


class RedisStore(CacheStore):
    """Keys in Redis (``pip install 'mcpclient[redis]'``): shared by hosts and their workers.

    Give a URL (``redis://host:6379/0``, ``rediss://`` for TLS, ``unix:///path``): the store
    makes its client with ``timeout`` for connecting and for every command, and closes it in
    ``close()``. Or give your own ``redis.Redis`` (its own timeouts then apply; set them: a
    client without a socket timeout can wait for ever). Keys are prefixed with ``prefix``.
    When Redis fails, is too slow or answers what redis-py cannot read, the store logs once,
    misses, and leaves Redis alone for ``REDIS_BACKOFF`` seconds, so calls go to the server at
    full speed meanwhile. A key scan (``delete_prefix``) that goes past ``MAX_SCAN_ROUNDS``
    round trips is such a failure.
    """

    def __init__(self, url_or_client: Any, *, prefix: str = "mcpclient:", timeout: float = REDIS_TIMEOUT) -> None:
        try:
            import redis
        except ImportError as exc:
            raise ImportError("RedisStore needs redis-py: pip install 'mcpclient[redis]'") from exc
        # A backend fault is a miss, whatever redis-py makes of it: an answer of the wrong type
        # raises AttributeError or TypeError from its parsers, not a RedisError.
        self._errors: tuple[type[BaseException], ...] = (Exception,)
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
        cursor: Any = 0
        try:
            for _ in range(MAX_SCAN_ROUNDS):
                cursor, keys = self._client.scan(cursor, match=pattern, count=SCAN_COUNT)
                if keys:
                    self._client.delete(*keys)
                if not cursor:
                    return
                if stopped():
                    log.debug("a key scan of the Redis cache was stopped: what it served is over")
                    return
            raise RuntimeError(f"the key scan did not end after {MAX_SCAN_ROUNDS} round trips")
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
