"""``SharedClient``: one client per process for web apps and task queues.

    >>> mcp = SharedClient(["python", "server.py"], timeout=10)     # at import time
    >>> mcp.call_tool("add", {"a": 1, "b": 2}).text                 # in any thread, any worker

``SharedClient`` has every public member of ``Client``, with its signature and docstring: the
few with a behaviour of their own are written here (``HAND_WRITTEN``), and ``_delegates`` makes
the others when the class is made, so a new ``Client`` method is on ``SharedClient`` at once.
Each gets this process's client (opening it on first use, after a fork, after the server died,
after ``close()``) and runs the call on it. For type checkers ``SharedClient`` is a subclass of
``Client`` (``ClientSurface``), so they see every method with ``Client``'s exact signature.

What a dead server (``ConnectionClosed``) means is chosen per shared client: ``retry="fail"``
(default) fails that call and the next call opens a new server; ``retry="safe"`` also retries
once, on a new server, the requests that change nothing (pings, lists, reads, prompt gets,
completions, and tools whose annotations say ``readOnlyHint`` or ``idempotentHint``). A tool
call is never sent twice unless its server said that is harmless.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypeVar, Union

from .._client.client import Client
from .._client.handlers import BUILTIN_REQUESTS
from .._client.notifications import ROUTED_NOTIFICATIONS
from .._client.seam import check_claim
from .._core.exceptions import MCPError
from .._core.retry import Retry
from .._core.timeouts import DEFAULT, DEFAULT_TIMEOUT
from .._core.waiting import Until
from ..extensions import NotificationHandler, RequestHandler
from ..transports.stdio import StdioTransport
from .delegates import delegating
from .open import ServerEntry, credentials_of, open_client, opening
from .process_local import ProcessLocal
from .reopening import RETRY_MODES, Lent, Reopening, RetryOption, check_retry, safe_tool
from .travel import Setting, check_travels, made, option_items, received

__all__ = [
    "CHANGE_NOTHING_CALLS", "COMPOSED", "HAND_WRITTEN", "RETRY_MODES", "SEEN", "TOOL_CALLS", "SharedClient",
    "call_bounds", "open_within", "release_inherited", "safe_tool", "server_of", "spent",
]

V = TypeVar("V")

#: What ``SharedClient(target)`` takes: an http(s) URL, a command, a config entry, or a
#: function returning an initialized ``Client`` (for anything else, ``FakeServer`` included).
SharedTarget = Union[str, Sequence[str], ServerEntry, Callable[[], Client]]

#: The ``Client`` members with a behaviour of their own here; ``_delegates`` makes the rest.
HAND_WRITTEN = (
    "initialize", "close", "timeout",  # the life cycle, and a setting kept in the options
    "on_notification", "on_request",  # one handler per method, checked here
    "subscribe_resource", "unsubscribe_resource", "set_log_level",  # requests kept for the next client
)

#: The ``Client`` requests that change nothing (``_methods.CHANGE_NOTHING``, and the reads of
#: the tasks and skills extensions): with ``retry="safe"`` they are sent once more, to a new
#: server, when the server died. Any other request is never sent twice.
CHANGE_NOTHING_CALLS = frozenset({
    "ping", "list_tools", "list_resources", "list_resource_templates", "read_resource", "read_ui_resource",
    "list_prompts", "get_prompt", "complete", "get_task", "list_tasks", "list_skills", "get_skill", "load_skill",
    "read_skill_file",
})

#: The ``Client`` requests that run a tool, by the parameter that names it: with
#: ``retry="safe"`` sent again only when the tool's annotations say that is harmless.
TOOL_CALLS = {"call_tool": "name"}

#: The ``Client`` methods written over its public methods only: ``Client``'s own function
#: runs with the ``SharedClient`` as ``self``, so each call of ``map_tool`` is the shared
#: ``call_tool`` (a dead server is reopened, and retried as ``retry`` says).
COMPOSED = ("map_tool",)

if TYPE_CHECKING:
    # What type checkers see: every public member of Client, with its exact signature and
    # overloads, which _delegates gives SharedClient at run time (where the base is object).
    ClientSurface = Client
else:
    ClientSurface = object


def _learn_tools(shared: SharedClient, tools: Any) -> Any:
    """What ``list_tools`` returned: the whole list teaches which tools a retry may resend."""
    if isinstance(tools, list):
        shared._learn(tools)
    return tools


#: What ``SharedClient`` sees of a call's result before the caller does.
SEEN = {"list_tools": _learn_tools}


@delegating(
    Client, hand_written=HAND_WRITTEN, retried=CHANGE_NOTHING_CALLS, composed=COMPOSED, tool_calls=TOOL_CALLS, seen=SEEN
)
class SharedClient(Reopening, ClientSurface):
    """A process-aware ``Client`` for web apps and task queues; create it once, at import.

    ``target`` is a URL, a command, a ``config.ServerConfig``, or a function returning an
    initialized ``Client``. Other keyword arguments are ``connect``'s (``timeout`` bounds the
    handshake and every call; ``handlers``, ``plugins``, ``http``, ``stdio``...). Nothing is
    started until the first call; each process (each gunicorn worker, each Celery pool process)
    opens its own client, once, on a thread of its own: each call waits for it as long as its
    own ``timeout`` (and ``cancel``) allows, then goes on with what is left of its time (for
    an open another call began, at most ``lock_timeout`` seconds, if given), and ``close()``
    ends the wait. An open that fails
    fails every call that waited for it; the next call opens again.

    ``retry`` says what a dead server means: "fail" (default) fails the call, and the next one
    opens a new server; "safe" also retries once the requests that change nothing. A
    ``mcpclient.Retry`` is also every client's own (``connect(retry=...)``), and sends a call
    again on a new server as its attempts allow (docs/reliability.md).

    Closed at interpreter exit, and by ``close()`` (after which the next call opens again).
    Handlers, roots, log level and subscriptions set on it are applied to every client it
    opens (``handlers=Handlers(...)`` are declared at the handshake; set later, they take
    effect like ``Client``'s late setters).

    It pickles as what it connects to and how (the target, the options, ``retry``), never as
    a connection: passed to a worker process (``ProcessPoolExecutor``, joblib, Dask, Ray), it
    opens its own client there on first use, one per process however many tasks receive it.
    Settings made after construction (``set_roots``, ``on_request``, the handler setters,
    ``set_log_level``, ``timeout``, subscriptions) travel with it. An option or a setting
    that cannot be pickled (a lambda as a handler, say) is named in the ``TypeError``.
    """

    #: A dead server is replaced by the next call: ``map_tool`` fails that item, not the batch.
    reopens_connections = True

    def __init__(
        self,
        target: SharedTarget,
        *,
        retry: RetryOption = "fail",
        lock_timeout: float | None = None,
        **options: Any,
    ) -> None:
        self.target = target
        self.retry = check_retry(retry)
        self._options = opening("SharedClient()", options)
        # A Retry (not "safe") is also each client's own, for its calls' attempts on one server.
        self._open_client = _opener(target, self._options if not isinstance(retry, Retry) else {
            **self._options, "retry": retry})
        #: What every client it opens sends (the one account, made as their transports make
        #: it): the last error, which ``health()`` serves, never shows any of it.
        self._credentials = credentials_of(target, self._options)
        self._holder: ProcessLocal[Client] = ProcessLocal(
            self._open, _close_client, release_inherited, lock_timeout=lock_timeout, what="the MCP server",
            redact=self._redact,
        )
        self._setup_lock = threading.Lock()
        #: What was set after construction, applied to every client opened (``Setting``s: they travel).
        self._setup: dict[str, Callable[[Client], None]] = {}
        self._subscribed: set[str] = set()
        self._tool_safety: dict[str, bool] = {}
        self._ident = made(self)

    # -- travelling to another process ------------------------------------------------------

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the spec (see the class docstring); raise ``TypeError`` naming what cannot."""
        with self._setup_lock:
            setup = {key: apply for key, apply in self._setup.items() if key != "timeout"}  # in the options
            subscribed = sorted(self._subscribed)
        settings = [item for apply in setup.values() if isinstance(apply, Setting) for item in apply.arguments()]
        check_travels("this SharedClient", [("its target", self.target), *option_items(self._options), *settings])
        spec = (self.target, self.retry, self._holder.lock_timeout, dict(self._options), subscribed, setup)
        return (_received_client, (self._ident, spec))

    # -- life cycle -------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        """``text`` without any credential the clients send: the account's, and the open
        client's transport's (a function target's, which only its transport knows)."""
        text = self._credentials.redactor.redact(text)
        client = self._holder.current() if hasattr(self, "_holder") else None
        return client.transport.about.credentials.redactor.redact(text) if client is not None else text

    def _open(self) -> Client:
        client = self._open_client()
        try:
            with self._setup_lock:
                setup = list(self._setup.values())
                subscribed = sorted(self._subscribed)
            for apply in setup:
                apply(client)
            for uri in subscribed:
                client.subscribe_resource(uri)
        except BaseException:
            client.close()
            raise
        return client

    def get(self) -> Client:
        """This process's open ``Client`` (opened now if there is none)."""
        return self._holder.get()

    def initialize(self, *, timeout: float | None = DEFAULT) -> None:
        """Open this process's client now rather than on first use; wait at most ``timeout``
        for it (the handshake itself takes the ``timeout`` given to the constructor)."""
        self._holder.get(self._until({"timeout": timeout}))

    def close(self) -> None:
        """Close this process's client and its server; the next call opens a new one."""
        self._holder.close()

    def __enter__(self) -> SharedClient:
        self.initialize()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        holder = self._holder
        client = holder.current()
        state = f"open, server {server_of(client)}" if client is not None else "not open"
        error = f", last error {holder.last_error!r}" if holder.last_error else ""
        return f"<SharedClient {state} in pid {os.getpid()}, opened {holder.opened}x{error}>"

    @property
    def opened(self) -> int:
        """How many clients this process opened (1 unless servers died or it was closed)."""
        return self._holder.opened

    @property
    def is_open(self) -> bool:
        """Whether this process has an open client now (never opens one)."""
        return self._holder.current() is not None

    @property
    def last_error(self) -> str | None:
        """The last error that made or kept the client unusable ("Type: first line")."""
        return self._holder.last_error

    def health(self, *, timeout: float = 2.0) -> dict[str, Any]:
        """A ping of this process's server, as a small dict a web app can serve as JSON.

        ``{"ok": bool, "latency_ms": float | None, "pid": ..., "opened": ..., "server": ...,
        "last_error": ...}``; opens the client if needed, and never raises an ``MCPError``.
        """
        started = time.monotonic()
        ok = True
        try:
            self.ping(timeout=timeout)
        except MCPError as exc:
            self._holder.note_error(exc)
            ok = False
        client = self._holder.current()
        return {
            "ok": ok,
            "latency_ms": round((time.monotonic() - started) * 1000, 1) if ok else None,
            "pid": os.getpid(),
            "opened": self._holder.opened,
            "server": server_of(client) if client is not None else None,
            "last_error": self._holder.last_error,
        }

    # -- running a call ---------------------------------------------------------------------

    def _lend(self, kwargs: Mapping[str, Any]) -> Lent:
        client, kwargs = open_within(self._holder, kwargs, self.timeout)
        return client, kwargs, None

    def _discard(self, client: Client, error: BaseException) -> None:
        self._holder.discard(client, error)

    def _until(self, kwargs: Mapping[str, Any]) -> Until:
        return call_bounds(kwargs, self.timeout)

    def _remember(self, key: str, apply: Callable[[Client], None]) -> None:
        """Apply a setting to the open client and to every client opened later."""
        with self._setup_lock:
            self._setup[key] = apply
        client = self._holder.current()
        if client is not None:
            apply(client)

    # -- what Client offers that is not made by _delegates -----------------------------------

    @property
    def timeout(self) -> float | None:
        """The timeout of every call that gives none (None: no limit); settable, kept across reopens."""
        value: float | None = self._options.get("timeout", DEFAULT_TIMEOUT)
        return value

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._options["timeout"] = value

        def apply(client: Client) -> None:
            client.timeout = value

        self._remember("timeout", apply)

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """``Client.on_notification``, on the open client and every client opened later."""
        check_claim(method, handler, ROUTED_NOTIFICATIONS, "notification")
        self._claim(f"notification {method}", Setting("on_notification", method, handler))

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """``Client.on_request``, on the open client and every client opened later."""
        check_claim(method, handler, BUILTIN_REQUESTS, "server request")
        self._claim(f"server request {method}", Setting("on_request", method, handler))

    def _claim(self, key: str, apply: Callable[[Client], None]) -> None:
        with self._setup_lock:
            if key in self._setup:
                raise ValueError(f"the {key} has a handler already; one handler per method")
        self._remember(key, apply)

    def subscribe_resource(self, uri: str, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> None:
        """Subscribe on this process's client; clients opened later subscribe again."""
        self._run(lambda c, kw: c.subscribe_resource(uri, **kw), {"timeout": timeout, "meta": meta}, safe=False)
        with self._setup_lock:
            self._subscribed.add(uri)

    def unsubscribe_resource(self, uri: str, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> None:
        """Stop notifications for ``uri`` on this process's client, and in clients opened later."""
        with self._setup_lock:
            self._subscribed.discard(uri)
        self._run(lambda c, kw: c.unsubscribe_resource(uri, **kw), {"timeout": timeout, "meta": meta}, safe=False)

    def set_log_level(self, level: str, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> None:
        """Set the server's log level now and on every client opened later."""
        self._run(lambda c, kw: c.set_log_level(level, **kw), {"timeout": timeout, "meta": meta}, safe=False)
        with self._setup_lock:
            self._setup["log_level"] = Setting("set_log_level", level, timeout=timeout)


def open_within(holder: ProcessLocal[V], kwargs: Mapping[str, Any], default: float | None) -> tuple[V, Mapping[str, Any]]:
    """``holder``'s value for a call made with ``kwargs``, and the call's ``kwargs``: a wait
    for the open ends by the call's bounds (``call_bounds``), and after one the call's
    ``timeout`` and ``max_total`` are what is left of them."""
    value = holder.current()
    if value is not None:
        return value, kwargs
    started = time.monotonic()
    value = holder.get(call_bounds(kwargs, default))
    return value, spent(kwargs, default, time.monotonic() - started)


def spent(kwargs: Mapping[str, Any], default: float | None, waited: float) -> Mapping[str, Any]:
    """``kwargs`` of a call that waited ``waited`` seconds for its client: its ``timeout``
    (``default`` for ``DEFAULT``) and ``max_total`` are what is left of them."""
    left = dict(kwargs)
    timeout = default if kwargs.get("timeout", DEFAULT) is DEFAULT else kwargs["timeout"]
    if timeout is not None:
        left["timeout"] = max(0.0, timeout - waited)
    if kwargs.get("max_total") is not None:
        left["max_total"] = max(0.0, kwargs["max_total"] - waited)
    return left


def call_bounds(kwargs: Mapping[str, Any], default: float | None) -> Until:
    """The bounds of a call made with ``kwargs``: its time (``timeout``, ``default`` for
    ``DEFAULT``; ``max_total``; the nearer) and its ``cancel``."""
    timeout = default if kwargs.get("timeout", DEFAULT) is DEFAULT else kwargs["timeout"]
    limits = [limit for limit in (timeout, kwargs.get("max_total")) if limit is not None]
    return Until(min(limits) if limits else None, cancel=kwargs.get("cancel"))


def server_of(client: Client) -> str:
    """What a repr or health check may say about the server: its pid or its URL (no secrets:
    the transports' reprs never carry credentials)."""
    transport = client.transport
    if isinstance(transport, StdioTransport):
        return f"pid {transport.pid}"
    return repr(transport)


def release_inherited(client: Client) -> None:
    """Let go of a client inherited through fork(): its server is the parent's.

    Only a stdio transport is told (its close() in a child just drops the child's copy of the
    server's stdin, so the parent's server still sees EOF when the parent closes); an HTTP
    transport is left alone, since closing it could end the parent's session.
    """
    if isinstance(client.transport, StdioTransport):
        client.transport.close()


def _received_client(ident: str, spec: tuple[Any, ...]) -> SharedClient:
    """Unpickle a ``SharedClient``: this process's one for ``ident`` (made on first receipt)."""
    target, retry, lock_timeout, options, subscribed, setup = spec

    def build() -> SharedClient:
        shared = SharedClient(target, retry=retry, lock_timeout=lock_timeout, **options)
        shared._ident = ident
        shared._subscribed.update(subscribed)
        shared._setup.update(setup)
        return shared

    return received(ident, build)


def _close_client(client: Client) -> None:
    client.close()


def _opener(target: SharedTarget, options: dict[str, Any]) -> Callable[[], Client]:
    if isinstance(target, (str, list, tuple, ServerEntry)):
        return lambda: open_client(target, options)
    if callable(target):
        if options:
            raise TypeError("options cannot be given with a function target: pass them to what it calls")
        return target
    raise TypeError(f"SharedClient takes a URL, a command, a ServerConfig or a function, got {target!r}")
