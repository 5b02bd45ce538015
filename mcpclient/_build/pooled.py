"""``PooledClient``: one key's client of a ``ClientPool``, as ``pool.get(key)`` gives it.

It has every public member of ``Client``, with its signature and docstring, made as
``SharedClient``'s are (``_build/delegates``): each call takes the key's client from the pool for
the length of the call (a lease: the pool never closes a client under a call), opening it first
if need be, and gives it back when the call ends. So a handle may be kept and used from any
thread for as long as one likes: a client evicted meanwhile (the pool was full, or it was idle
too long) is opened again by the next call. It pickles as its pool and its key.

What a handle cannot do is keep a setting: a key's client is made by the pool's factory each
time it is opened, so handlers, roots and the like belong there (the setters raise ``TypeError``
saying so). Requests a server remembers per connection (``subscribe_resource``,
``set_log_level``) apply to the client open now only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, Protocol

from .._client.client import Client
from .._core.timeouts import DEFAULT
from .delegates import delegating
from .reopening import Lent, Reopening, RetryOption
from .shared import CHANGE_NOTHING_CALLS, COMPOSED, SEEN, TOOL_CALLS

__all__ = ["HAND_WRITTEN", "PooledClient"]

#: The ``Client`` members a handle writes by hand; ``_delegates`` makes the rest.
HAND_WRITTEN = ("initialize", "close", "timeout")


class Pool(Protocol):
    """What a handle asks of its pool (``ClientPool``)."""

    retry: RetryOption
    timeout: float | None

    def _lend(self, key: Any, kwargs: Mapping[str, Any]) -> Lent: ...

    def _discard(self, key: Any, client: Client, error: BaseException) -> None: ...

    def discard(self, key: Any) -> None: ...

    def open_client(self, key: Any, *, timeout: float | None = DEFAULT) -> Client: ...


if TYPE_CHECKING:
    # What type checkers see: every public member of Client, with its exact signature
    # (as for SharedClient); at run time the base is object, and _delegates makes them.
    ClientSurface = Client
else:
    ClientSurface = object


@delegating(
    Client, hand_written=HAND_WRITTEN, retried=CHANGE_NOTHING_CALLS, composed=COMPOSED, tool_calls=TOOL_CALLS, seen=SEEN
)
class PooledClient(Reopening, ClientSurface):
    """One key's client of a ``ClientPool`` (``pool.get(key)``); see the module docstring.

    Thread-safe. Each call waits for its key's client (a free place in the pool, then its
    open) as long as its own ``timeout`` and ``cancel`` allow, and goes on with what is left of
    its time; after a dead server the pool's ``retry`` decides as for ``SharedClient``.
    """

    #: A dead server is replaced by the next call: ``map_tool`` fails that item, not the batch.
    reopens_connections = True

    def __init__(self, pool: Pool, key: Hashable) -> None:
        self.pool = pool
        self.key = key
        self.retry = pool.retry
        self._tool_safety: dict[str, bool] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the pool (which pickles as its factory and options) and the key."""
        return (PooledClient, (self.pool, self.key))

    def __repr__(self) -> str:
        return f"<PooledClient of {self.pool!r}>"  # never the key: an application may key by a token

    def _lend(self, kwargs: Mapping[str, Any]) -> Lent:
        return self.pool._lend(self.key, kwargs)

    def _discard(self, client: Client, error: BaseException) -> None:
        self.pool._discard(self.key, client, error)

    def _remember(self, key: str, apply: Callable[[Client], None]) -> None:
        raise TypeError(
            f"a pooled client keeps no setting ({key}): the pool's factory makes the key's client each time "
            "it opens one, so give it its handlers and roots there (factory(key) returns a Client made with them)"
        )

    def get(self) -> Client:
        """The key's open ``Client`` (opened now if there is none), not held: the pool may close
        it once idle. To hold it for several calls, use ``with pool.client(key) as client:``."""
        return self.pool.open_client(self.key)

    def initialize(self, *, timeout: float | None = DEFAULT) -> None:
        """Open the key's client now rather than on first use; wait at most ``timeout``."""
        self.pool.open_client(self.key, timeout=timeout)

    def close(self) -> None:
        """Close the key's client now (``pool.discard(key)``); the next call opens a new one."""
        self.pool.discard(self.key)

    @property
    def timeout(self) -> float | None:
        """The pool's ``timeout``: how long a call that gives none waits for its client."""
        return self.pool.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        raise TypeError("a pooled client's timeout is the pool's (ClientPool(timeout=...)) or its client's (the factory's)")
