"""``ClientPool``: a client per user (or tenant) key, bounded in number, for multi-user web apps
and gateways.

    def client_for(user_id):                                      # a module-level function
        token = tokens.for_user(user_id)
        return mcpclient.connect(URL, http=HTTP(headers={"Authorization": f"Bearer {token}"}),
                                 plugins=Plugins(cache=STORE))

    pool = mcpclient.ClientPool(client_for, max_clients=32)       # at import
    pool.get(request.user.pk).call_tool("search", {"q": "..."})   # in any thread, any worker

Each key's client is made by ``factory(key)``, with that user's credentials, so every call for
the key carries that user's token on that user's session, and the result cache keeps that
user's private results under the owner the client's one account of credentials names
(``Credentials.owner``: nothing the pool decides). The pool holds at most ``max_clients``
clients in each process, evicting the least recently used idle one; closes a client idle for
``idle_timeout``; opens each key's client once, on a thread of its own, so a call for one user
never waits on another user's open; and never closes a client under a call (``pool.get(key)``'s
calls and ``with pool.client(key)`` blocks hold a lease).

Every wait (for a key's open, for a free place, the idle clock) goes through the one primitive
(``_core/waiting``): it ends at the caller's deadline, its cancel, and the pool's ``close()``.
Like ``SharedClient``, the pool is process-local (a child of ``fork()`` lets go of what its
parent opened and opens its own) and pickles as its factory and options.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
import weakref
from collections import OrderedDict, deque
from typing import Any, Callable, Generic, Hashable, Iterator, Mapping, TypeVar

from .._client.client import Client
from .._core.credentials import Credentials
from .._core.exceptions import ClientClosedError, ConnectionClosed, MCPError
from .._core.timeouts import DEFAULT, DEFAULT_TIMEOUT
from .._core.waiting import Job, Lifetime, Signal, Until
from .pooled import PooledClient
from .process_local import ProcessLocal, error_line
from .reopening import Lent, RetryOption, check_retry
from .shared import call_bounds, release_inherited, server_of, spent
from .travel import check_travels, made, received

__all__ = ["ClientPool"]

K = TypeVar("K", bound=Hashable)

_live: weakref.WeakSet[ClientPool[Any]] = weakref.WeakSet()


class _Slot:
    """One key's place in the pool: its client's holder, and who uses it now."""

    __slots__ = ("holder", "leases", "last_used", "credentials", "pending", "ended")

    def __init__(self) -> None:
        self.holder: ProcessLocal[Client]
        #: Calls and blocks using the client now: while any, it is never closed by the pool's clock.
        self.leases = 0
        self.last_used = time.monotonic()
        #: The account of what the key's client sends, once the factory made it: what its errors never show.
        self.credentials: Credentials | None = None
        #: The factory's client while its handshake runs: closed with the slot, which ends the handshake.
        self.pending: Client | None = None
        #: Taken out of the pool and closed: it opens nothing again (a lease taken before
        #: that gets ``ClientClosedError``; the key's next call takes a new slot).
        self.ended = False

    def redact(self, text: str) -> str:
        credentials = self.credentials
        return credentials.redactor.redact(text) if credentials is not None else text

    def end(self) -> None:
        """Close the key's client, and end its open if one runs (its waiters at once, its
        handshake by closing the client it runs on)."""
        self.ended = True
        pending = self.pending
        self.holder.close()
        if pending is not None:
            pending.close()


class ClientPool(Generic[K]):
    """Clients keyed by user (or tenant), each made by ``factory(key)``; see the module docstring.

    ``factory(key)`` returns the key's ``Client`` made with that user's credentials (headers, an
    ``auth`` object or a token provider: ``http=HTTP(...)``) and whatever else it needs
    (``handlers``, ``plugins``): opened (``mcpclient.connect(...)``) or only made (``Client(transport, ...)``), which the pool
    opens. It runs on a thread of its own; what it raises is raised to the calls that waited for
    that key, and the next call for the key tries again. It must make a new client for each key.

    ``max_clients`` bounds the clients open (or opening) in each process. A key without one
    takes a free place, or the place of the least recently used client nobody is using (closed
    on a thread of its own); when every client is in use, the call waits for one to be given
    back, as long as its own ``timeout`` and ``cancel`` allow (and at most ``slot_timeout``
    seconds if given: 0 means "do not wait", a ``RequestTimeout`` at once).

    ``idle_timeout`` (seconds; None: never) closes a client nobody used for that long.
    ``timeout`` bounds the wait of a call that gives none (the call itself then has the client's
    own timeout, less what it waited). ``retry`` says what a dead server means, as for
    ``SharedClient``: "fail" (default) fails the call, the next call opens a new client; "safe"
    also sends again, once, the requests that change nothing; a ``mcpclient.Retry`` as its
    attempts allow (the factory gives each client its own ``retry=``, if any).

    ``close()`` closes every client and ends every wait at once (``ClientClosedError``); the
    pool opens clients again on the next call. Thread-safe; process-local; pickles as its
    factory (which must then be a module-level function) and options.
    """

    def __init__(
        self,
        factory: Callable[[K], Client],
        *,
        max_clients: int = 32,
        idle_timeout: float | None = 300.0,
        timeout: float | None = DEFAULT_TIMEOUT,
        slot_timeout: float | None = None,
        retry: RetryOption = "fail",
    ) -> None:
        if not callable(factory):
            raise TypeError(f"ClientPool takes a function factory(key) -> Client, got {type(factory).__name__}")
        if not isinstance(max_clients, int) or isinstance(max_clients, bool) or max_clients < 1:
            raise ValueError(f"max_clients must be a positive int, got {max_clients!r}")
        for name, value in (("idle_timeout", idle_timeout), ("timeout", timeout), ("slot_timeout", slot_timeout)):
            if value is not None and (not isinstance(value, (int, float)) or value < 0):
                raise ValueError(f"{name} must be a number of seconds (>= 0) or None, got {value!r}")
        self._factory = factory
        self.max_clients = max_clients
        self.idle_timeout = idle_timeout
        self.timeout = timeout
        self.slot_timeout = slot_timeout
        self.retry = check_retry(retry)
        self._lock = threading.Lock()  # held for a look or a change, never while waiting or opening
        self._slots: OrderedDict[K, _Slot] = OrderedDict()  # least recently used first
        self._waiters: deque[Signal] = deque()  # calls waiting for a free place, first come first
        self._woken = 0  # calls woken for a free place that have not taken it yet
        self._life = Lifetime()  # ended by close(): every wait of the pool ends with it
        self._reaping = False  # whether the idle clock's thread runs
        self._given: weakref.WeakKeyDictionary[Client, K] = weakref.WeakKeyDictionary()
        self._pid = os.getpid()
        self._counts = dict.fromkeys(("opened", "failed", "evicted", "closed_idle"), 0)
        self._ident = made(self)
        _live.add(self)

    # -- what users call ----------------------------------------------------------------------

    def get(self, key: K) -> PooledClient:
        """The client of ``key``: a ``PooledClient``, which has every method of ``Client`` and
        runs each call on the key's client (opened on first use, reopened after eviction or a
        dead server), holding it for the call. Cheap: make one per request if you like."""
        hash(key)  # a TypeError now, not in a thread
        return PooledClient(self, key)

    @contextlib.contextmanager
    def client(self, key: K, *, timeout: float | None = DEFAULT, cancel: Any = None) -> Iterator[Client]:
        """Hold the key's open ``Client`` for the block: several calls on one connection, never
        closed under it by eviction or the idle clock (``close()`` and ``discard`` still do).

        The wait for it ends by ``timeout`` (``DEFAULT``: the pool's) and ``cancel``. A block
        that raises ``ConnectionClosed`` drops the client: the next use opens a new one.
        """
        slot, client = self._lease(key, call_bounds({"timeout": timeout, "cancel": cancel}, self.timeout))
        try:
            yield client
        except (ConnectionClosed, ClientClosedError) as exc:
            slot.holder.discard(client, exc)
            raise
        finally:
            self._release(key, slot)

    def open_client(self, key: K, *, timeout: float | None = DEFAULT) -> Client:
        """The key's open ``Client``, opened now if need be, not held (``PooledClient.get``)."""
        slot, client = self._lease(key, call_bounds({"timeout": timeout}, self.timeout))
        self._release(key, slot)
        return client

    def discard(self, key: K) -> None:
        """Close the key's client now, if any (calls on it fail with ``ClientClosedError``): after
        a logout, or a token revoked or rotated. The next call for the key calls the factory."""
        with self._lock:
            inherited = self._after_fork()
            slot = self._slots.pop(key, None)
            if slot is not None:
                self._wake_one()
        _let_go(inherited)
        if slot is not None:
            slot.end()

    def close(self) -> None:
        """Close every client, and end every wait at once (``ClientClosedError``): for a key's
        open, for a free place. Idempotent; the pool opens clients again on the next call."""
        with self._lock:
            inherited = self._after_fork()
            slots = list(self._slots.values())
            self._slots.clear()
            life, self._life = self._life, Lifetime()
            self._waiters.clear()
            self._woken = 0
            self._reaping = False
        life.end(ClientClosedError("the client pool was closed"))
        _let_go(inherited)
        jobs = [Job(slot.end, name="mcpclient-pool-close") for slot in slots]
        for job in jobs:  # in parallel: each ends within a Client's close time
            Until(what="closing the pool's clients").finish(job)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` has an open client in this process now (never opens one)."""
        slot = self._slots.get(key) if self._pid == os.getpid() else None  # type: ignore[arg-type]
        return slot is not None and slot.holder.current() is not None

    def __len__(self) -> int:
        """How many clients are open in this process now."""
        if self._pid != os.getpid():
            return 0
        with self._lock:
            return sum(1 for slot in self._slots.values() if slot.holder.current() is not None)

    def stats(self) -> dict[str, Any]:
        """The pool in this process, as a small dict to serve as JSON (no key, no credential):
        ``open``, ``opening``, ``in_use``, ``waiting``, ``max_clients``, and since the process
        began (or forked) ``opened``, ``failed`` (opens that raised), ``evicted``, ``closed_idle``."""
        with self._lock:
            inherited = self._after_fork()
            slots = list(self._slots.values())
            stats = {
                "pid": os.getpid(),
                "max_clients": self.max_clients,
                "open": sum(1 for slot in slots if slot.holder.current() is not None),
                "opening": sum(1 for slot in slots if slot.holder.opening),
                "in_use": sum(1 for slot in slots if slot.leases),
                "waiting": len(self._waiters),
                **self._counts,
            }
        _let_go(inherited)
        return stats

    def health(self, key: K, *, timeout: float = 2.0) -> dict[str, Any]:
        """A ping of the key's server (opening its client if need be), as a small dict a web
        app can serve as JSON: ``{"ok", "latency_ms", "pid", "server", "last_error"}``, with no
        credential and not the key. Never raises for the server's or the factory's errors."""
        started = time.monotonic()
        error: str | None = None
        server: str | None = None
        until = Until(timeout, what="opening the client for a health check")
        try:
            slot, life = self._place(key, until)
        except MCPError as exc:  # no place, or the pool closed: nothing of the key's in it
            slot, error = None, error_line(exc)
        if slot is not None:
            try:
                client = slot.holder.get(until.also(life))
                server = server_of(client)
                client.ping(timeout=max(0.0, timeout - (time.monotonic() - started)))
            except MCPError as exc:
                slot.holder.note_error(exc)  # through the key's account: no credential of its client
                error = slot.holder.last_error
            except Exception as exc:  # the factory's own: its words may hold anything, its type is shown
                error = f"{type(exc).__name__} raised by the pool's factory (its message is not shown)"
            finally:
                self._release(key, slot)
        return {
            "ok": error is None,
            "latency_ms": round((time.monotonic() - started) * 1000, 1) if error is None else None,
            "pid": os.getpid(),
            "server": server,
            "last_error": error,
        }

    def __repr__(self) -> str:
        stats = self.stats()
        return (f"<ClientPool {stats['open']}/{stats['max_clients']} open, {stats['in_use']} in use, "
                f"{stats['waiting']} waiting in pid {stats['pid']}>")  # never a key: it may be a token

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the factory and the options; raise ``TypeError`` naming what cannot travel."""
        options = {"max_clients": self.max_clients, "idle_timeout": self.idle_timeout, "timeout": self.timeout,
                   "slot_timeout": self.slot_timeout, "retry": self.retry}
        check_travels("this ClientPool", [("its factory", self._factory)])
        return (_received_pool, (self._ident, self._factory, options))

    # -- a call's lease ---------------------------------------------------------------------------

    def _lend(self, key: K, kwargs: Mapping[str, Any]) -> Lent:
        """``PooledClient``'s: the key's client for one call, what is left of its time, and what
        gives the client back."""
        with self._lock:  # the usual case: the key's client is open; no Until, no wait
            slot = self._slots.get(key) if self._pid == os.getpid() else None
            client = slot.holder.current() if slot is not None else None
            if slot is not None and client is not None:
                slot.leases += 1
                self._slots.move_to_end(key)
                return client, kwargs, functools.partial(self._release, key, slot)
        started = time.monotonic()
        slot, client = self._lease(key, call_bounds(kwargs, self.timeout))
        return client, spent(kwargs, client.timeout, time.monotonic() - started), functools.partial(
            self._release, key, slot)

    def _discard(self, key: K, client: Client, error: BaseException) -> None:
        """The key's ``client`` found its server dead: drop it (a no-op if already replaced)."""
        slot = self._slots.get(key)
        if slot is not None:
            slot.holder.discard(client, error)

    def _lease(self, key: K, until: Until) -> tuple[_Slot, Client]:
        """The key's slot, held (``leases``), and its open client: a free place taken first (or
        the idlest client's), then the open waited for, each by ``until`` and the pool's life."""
        slot, life = self._place(key, until)
        try:
            client = slot.holder.get(until.also(life, what="opening the key's MCP client"))
        except BaseException:
            self._release(key, slot)
            raise
        return slot, client

    def _place(self, key: K, until: Until) -> tuple[_Slot, Lifetime]:
        """The key's slot with a lease taken, waiting for a free place if every one is in use.

        First come, first served: a call that finds others waiting for a place (or one woken
        for a place and not there yet) waits behind them; the one woken takes the place."""
        mine: Signal | None = None
        life: Lifetime | None = None
        free_until: Until | None = None  # the wait for a free place
        try:
            while True:
                victim: _Slot | None = None
                with self._lock:
                    inherited = self._after_fork()
                    life = self._life
                    woken = mine is not None and mine.is_set()
                    if mine is not None and woken:
                        mine.clear()
                        self._woken -= 1
                    slot = self._slots.get(key)
                    took = False
                    if slot is None and (woken or not (self._waiters or self._woken)):
                        if len(self._slots) >= self.max_clients:
                            victim = self._evict()
                        if len(self._slots) < self.max_clients:
                            slot = self._slots[key] = self._new_slot(key)
                            took = True
                    if slot is not None:
                        slot.leases += 1
                        self._slots.move_to_end(key)
                        if mine is not None and mine in self._waiters:
                            self._waiters.remove(mine)
                        mine = None
                        if (woken and not took) or self._has_room():
                            self._wake_one()  # the place it was woken for, or another free one: the next's
                    elif mine is None:
                        mine = Signal()
                        self._waiters.append(mine)
                    elif woken:  # the place was taken back by its own key's call: first in line again
                        self._waiters.appendleft(mine)
                _let_go(inherited)
                if victim is not None:
                    Job(victim.end, name="mcpclient-pool-close")  # not on this caller's time
                if slot is not None:
                    return slot, life
                if free_until is None:
                    free_until = until.also(life, what=(
                        f"waiting for a free client of the pool (max_clients={self.max_clients}, all in use)"
                    )).within(self.slot_timeout)
                assert mine is not None
                free_until.wait(mine)
        except BaseException:
            if mine is not None:
                with self._lock:
                    if mine in self._waiters:
                        self._waiters.remove(mine)
                    if mine.is_set() and self._life is life:  # woken for a place it will not take
                        mine.clear()
                        self._woken -= 1
                        self._wake_one()
            raise

    def _release(self, key: K, slot: _Slot) -> None:
        """A lease ends: the client may now be evicted or closed when idle."""
        reap = False
        with self._lock:
            slot.leases -= 1
            if slot.leases or self._slots.get(key) is not slot:
                return
            slot.last_used = time.monotonic()
            if slot.holder.current() is None and not slot.holder.opening:
                del self._slots[key]  # its open failed: it holds nothing
            elif self.idle_timeout is not None and not self._reaping:
                reap = self._reaping = True
            self._wake_one()
            life = self._life
        if reap:
            threading.Thread(target=self._reap, args=(life,), name="mcpclient-pool-idle", daemon=True).start()

    def _evict(self) -> _Slot | None:
        """(With the lock held.) Take out the least recently used slot nobody uses, if any."""
        for key, slot in self._slots.items():
            if not slot.leases:
                del self._slots[key]
                self._counts["evicted"] += 1
                return slot
        return None

    def _wake_one(self) -> None:
        """(With the lock held.) A place may be free: wake the call that waited longest (it is
        counted in ``_woken`` until it takes a place or leaves)."""
        if self._waiters:
            self._woken += 1
            self._waiters.popleft().set()

    def _has_room(self) -> bool:
        """(With the lock held.) Whether a call could take a place now (a free one, or an idle
        client's) beyond those the woken calls will take."""
        room = self.max_clients - len(self._slots) + sum(1 for slot in self._slots.values() if not slot.leases)
        return room > self._woken

    # -- opening and closing ------------------------------------------------------------------

    def _new_slot(self, key: K) -> _Slot:
        slot = _Slot()
        slot.holder = ProcessLocal(
            functools.partial(self._open_key, key, slot), _close_client, release_inherited, lock_timeout=None,
            what="the key's MCP server", redact=slot.redact,
        )
        return slot

    def _open_key(self, key: K, slot: _Slot) -> Client:
        """The open's thread (``ProcessLocal``): the factory's client for ``key``, initialized."""
        try:
            if slot.ended:
                raise ClientClosedError("the key's client was closed by the pool (discarded, evicted or closed)")
            client = self._factory(key)
            if not isinstance(client, Client):
                raise TypeError(
                    f"the pool's factory must return a mcpclient.Client (opened or not), got {type(client).__name__}")
            with self._lock:
                given = self._given.get(client)
                if given is None:
                    self._given[client] = key
            if given is not None and given != key:  # never closed here: it is another key's
                raise ValueError("the pool's factory returned, for one key, the client it made for another: "
                                 "return a new Client for each key (each sends its own user's credentials)")
            slot.credentials = client.transport.about.credentials
            slot.pending = client
            try:
                client.initialize()
            except ClientClosedError:
                if given is None:
                    raise
                raise ClientClosedError("the pool's factory returned a client the pool had closed: make a new "
                                        "Client each time it is called (the pool closes the clients it evicts)"
                                        ) from None
            except BaseException:
                client.close()
                raise
            finally:
                slot.pending = None
        except BaseException:
            with self._lock:
                self._counts["failed"] += 1
            raise
        with self._lock:
            self._counts["opened"] += 1
        return client

    def _reap(self, life: Lifetime) -> None:
        """The idle clock's thread: close the clients nobody used for ``idle_timeout``; it ends
        when no client is idle (the next one given back starts it again) and at ``close()``."""
        until = Until(ends=(life,), what="the pool's idle clock")
        while True:
            expired: list[_Slot] = []
            with self._lock:
                if self._life is not life:
                    return
                now, idle, next_at = time.monotonic(), self.idle_timeout or 0.0, None
                for key, slot in list(self._slots.items()):
                    if slot.leases:
                        continue
                    if slot.last_used + idle <= now:
                        del self._slots[key]
                        expired.append(slot)
                        self._counts["closed_idle"] += 1
                    elif next_at is None or slot.last_used + idle < next_at:
                        next_at = slot.last_used + idle
                if next_at is None:
                    self._reaping = False
                for _ in expired:
                    self._wake_one()  # a call may wait behind one woken before (first come, first served)
            for slot in expired:
                slot.end()
            if next_at is None:
                return
            try:
                until.sleep(next_at - time.monotonic())
            except MCPError:  # close(): it closes what is left
                return

    def _after_fork(self) -> list[_Slot]:
        """(With the lock held.) In a child of ``fork()``: forget the parent's slots, waiters,
        leases and counts; returns the slots, whose clients the child lets go of (``_let_go``)."""
        if self._pid == os.getpid():
            return []
        self._pid = os.getpid()
        inherited = list(self._slots.values())
        self._slots.clear()
        self._waiters.clear()
        self._woken = 0
        self._life = Lifetime()
        self._reaping = False
        self._given = weakref.WeakKeyDictionary()
        self._counts = dict.fromkeys(self._counts, 0)
        return inherited

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()  # a parent's thread may have held it at fork()


def _let_go(inherited: list[_Slot]) -> None:
    """Let go of clients inherited through fork() (their servers are the parent's)."""
    for slot in inherited:
        slot.holder.close()  # in a child, ProcessLocal releases what the parent opened, never closes it


def _close_client(client: Client) -> None:
    client.close()


def _received_pool(ident: str, factory: Callable[[Any], Client], options: dict[str, Any]) -> ClientPool[Any]:
    """Unpickle a ``ClientPool``: this process's one for ``ident`` (made on first receipt)."""

    def build() -> ClientPool[Any]:
        pool: ClientPool[Any] = ClientPool(factory, **options)
        pool._ident = ident
        return pool

    return received(ident, build)


def _after_fork_in_child() -> None:
    for pool in list(_live):
        pool._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
