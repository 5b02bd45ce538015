"""The blocking MCP client."""

from __future__ import annotations

import logging
import os
import threading
import warnings
import weakref
from typing import Any, Callable, Hashable, Sequence

from . import types as t
from ._cache import ResultCache
from ._calls import CallsMixin
from ._elicitation import ElicitationMixin
from ._exceptions import CapabilityError, ClientClosedError, ConnectionClosed, MCPError
from ._handlers import Handlers
from ._logging import LogRouter
from ._notifications import NotificationsMixin
from ._rpc.cancel import CancelToken
from ._rpc.engine import Engine, ProgressCallback
from ._session import CLOSED, LEGACY, MODERN, OPEN, UNOPENED, Session, remember_era
from ._skills import SkillsMixin
from ._structured import OutputValidator
from ._subscriptions import Listener
from ._tasks import TasksMixin
from ._timeouts import DEFAULT, DEFAULT_TIMEOUT
from .transports.base import Transport

__all__ = ["DEFAULT", "DEFAULT_TIMEOUT", "Client"]

log = logging.getLogger("mcpclient")

class Client(CallsMixin, NotificationsMixin, TasksMixin, SkillsMixin, ElicitationMixin):
    """A blocking MCP client over one ``Transport``; safe to share between threads.

    Create it with a transport, then call ``initialize()`` (or use it as a context manager,
    which initializes on enter and closes on exit). A daemon reader thread pairs replies with
    calls; server requests and notifications run on a bounded pool of ``max_dispatch``
    threads, so a slow handler never delays replies.

    ``timeout`` (seconds) bounds every call that does not give its own; ``None`` means no
    limit. A call that times out raises ``RequestTimeout`` and the server is told to cancel.

    ``protocol`` picks the protocol era: "auto" (default) probes with ``server/discover`` and
    falls back to the legacy ``initialize`` handshake; "legacy" or "2026-07-28" force one.
    ``cache=True`` keeps list and read results while they are fresh (``ttlMs``), dropping them
    on change notifications.

    ``output_validation`` checks structured tool output against the ``outputSchema`` of tools
    seen in ``list_tools()`` (with the ``jsonschema`` extra installed): "strict" raises
    ``OutputValidationError``, "lenient" logs a warning, "off" skips the check.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        client_info: t.Implementation | None = None,
        max_dispatch: int = 16,
        protocol: str = "auto",
        cache: bool = False,
        output_validation: str = "strict",
    ) -> None:
        self.timeout = timeout
        self.client_info = client_info or t.Implementation(name="mcpclient", version=_version())
        self._handlers = Handlers()
        self._state = UNOPENED
        self._state_lock = threading.Lock()
        self._logs = LogRouter()
        self._resource_updated: Callable[[str], None] | None = None
        self._list_changed: Callable[[str], None] | None = None
        self._subscribed: set[str] = set()
        self._cache = ResultCache() if cache else None
        self._outputs = OutputValidator(output_validation)
        self._max_dispatch = max_dispatch
        self._protocol = protocol
        self._wire(transport)

    def _wire(self, transport: Transport) -> None:
        """The engine, session and listener on ``transport`` (again after a restart)."""
        self.transport = transport
        self._engine = Engine(
            transport,
            on_request=self._handlers.handle,
            on_notification=_weak_notification_handler(self),
            max_dispatch=self._max_dispatch,
        )
        server_key: Hashable | None = getattr(transport, "server_key", None)
        self._session = Session(self._engine, self._handlers, self.client_info, self._protocol, server_key)
        self._listener = Listener(self._session)
        # Like an unclosed file: a Client dropped without close() is closed when collected,
        # with a ResourceWarning. Nothing the threads hold refers back to the Client.
        self._finalizer = weakref.finalize(
            self, _close_unclosed, self._engine, self._listener, os.getpid(), repr(transport)
        )
        self._finalizer.atexit = False  # at exit the transports end their servers themselves
        self._engine.start()

    # -- life cycle -------------------------------------------------------------------------

    def initialize(self, *, timeout: float | None = DEFAULT) -> None:
        """Connect at the protocol level; a no-op once done.

        In the legacy era this is the ``initialize`` handshake (newest version first, any
        supported version accepted, then ``notifications/initialized``); in the modern era it is
        ``server/discover``. The client capabilities declared are those backed by the handlers
        and roots set so far.

        Raises ``ProtocolError`` if the server speaks no version mcpclient does,
        ``RequestTimeout``, ``RPCError``, ``ConnectionClosed`` or ``ClientClosedError``.
        """
        with self._state_lock:
            if self._state == OPEN:
                return
            if self._state == CLOSED:
                raise ClientClosedError()
            try:
                self._session.open(self._timeout(timeout))
            except ConnectionClosed as exc:
                if not (self._session.probe_killed and self._restart_after_probe(exc)):
                    raise
                self._session.open(self._timeout(timeout))
            self._state = OPEN
        if self._session.era == MODERN:
            self._update_listener()

    def _restart_after_probe(self, error: ConnectionClosed) -> bool:
        """Start the server again after the era probe ended it, to go straight to initialize.

        Servers on older SDKs (the Python SDK 1.6 line, for one) exit on a request method they
        do not know, so ``server/discover`` kills them. The transport's ``reopen()`` gives a new
        connection to the same server (a new process for stdio); the legacy era is remembered
        for it, so this happens once per server configuration per process.
        """
        fresh = self.transport.reopen()
        if fresh is None:
            return False
        log.warning(
            "the server closed the connection when probed with server/discover (%s); started it again "
            "and using initialize (the legacy era, remembered for this server)", error,
        )
        self._finalizer.detach()  # the new wiring registers its own
        self._engine.close()
        remember_era(getattr(fresh, "server_key", None), LEGACY)
        self._wire(fresh)
        return True

    def close(self) -> None:
        """Close the client: idempotent, always returns within a few seconds.

        Pending calls fail with ``ClientClosedError``, running handlers see their CancelToken
        cancelled and get a short grace, and the transport is closed (a stdio server is asked
        to exit, then terminated).
        """
        self._state = CLOSED
        self._finalizer.detach()
        self._listener.stop()
        self._engine.close()

    def __enter__(self) -> Client:
        try:
            self.initialize()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        version = f" protocol={self.protocol_version}" if self.protocol_version else ""
        return f"<Client {self.transport!r} {self._state}{version}>"

    @property
    def protocol_version(self) -> str:
        """The protocol version in use; "" until ``initialize()`` succeeded."""
        return self._session.version

    @property
    def server_info(self) -> t.Implementation | None:
        return self._session.state.server_info if self._session.state else None

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self._session.state.capabilities if self._session.state else {}

    @property
    def instructions(self) -> str | None:
        return self._session.state.instructions if self._session.state else None

    # -- what the server may ask of us ------------------------------------------------------

    def set_sampling_handler(self, handler: Callable[..., Any] | None, *, tools: bool = False) -> None:
        """Answer ``sampling/createMessage`` with ``handler(request, cancel_token)``.

        The handler receives a ``CreateMessageRequest`` (and, if it takes a second argument, a
        ``CancelToken``) and returns a ``CreateMessageResult``. Set it before ``initialize()``:
        the ``sampling`` capability is declared only then (with ``tools`` if ``tools=True``).
        Without a handler, sampling requests get a -32601 error.
        """
        self._warn_if_late("sampling handler")
        self._handlers.set_sampling(handler, tools=tools)

    def set_elicitation_handler(
        self, handler: Callable[..., Any] | None, *, modes: Sequence[str] = ("form",)
    ) -> None:
        """Answer ``elicitation/create`` with ``handler(request, cancel_token)``.

        The handler receives an ``ElicitationRequest`` and returns an ``ElicitationResult``.
        ``modes`` lists what it can do ("form", "url"). Set it before ``initialize()``: the
        ``elicitation`` capability is declared only then. Without a handler, every elicitation
        is declined automatically.
        """
        self._warn_if_late("elicitation handler")
        self._handlers.set_elicitation(handler, modes=modes)

    def set_notification_handler(self, handler: Callable[[str, dict[str, Any]], None] | None) -> None:
        """Call ``handler(method, params)`` for every notification from the server.

        It runs on a dispatch thread; delivery is best effort (dropped, with a log line, when
        the dispatch pool is saturated). Set it before ``initialize()`` to miss nothing.
        """
        if handler is not None and not callable(handler):
            raise TypeError(f"a handler must be callable, got {handler!r}")
        self._handlers.notification = handler

    def set_roots(self, roots: Sequence[t.Root | str] | None) -> None:
        """Expose ``roots`` (file:// URIs) to the server's ``roots/list`` requests.

        Set before ``initialize()`` to declare the ``roots`` capability. Changing them later
        tells a legacy server with ``notifications/roots/list_changed``.
        """
        self._handlers.set_roots(roots)
        declared = "roots" in self._session.declared
        if self._state == OPEN and self._session.era == LEGACY and declared and self._handlers.roots is not None:
            try:
                self._session.notify("notifications/roots/list_changed", None, self._timeout(DEFAULT))
            except MCPError as exc:
                log.warning("could not tell the server that the roots changed: %s", exc)

    def _warn_if_late(self, what: str) -> None:
        if self._state == OPEN and self._session.era == LEGACY:
            log.warning("%s set after initialize(): the server was not told this client supports it", what)

    # -- calls ------------------------------------------------------------------------------

    def _timeout(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is DEFAULT else timeout

    def _require_open(self) -> None:
        if self._state != OPEN:
            if self._state == CLOSED:
                raise ClientClosedError()
            raise MCPError("call initialize() first (or use the client in a with block)")

    def _call(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        *,
        on_progress: ProgressCallback | None = None,
        max_total: float | None = None,
        cancel: CancelToken | threading.Event | None = None,
    ) -> dict[str, Any]:
        self._require_open()
        return self._session.call(
            method,
            params,
            timeout=self._timeout(timeout),
            on_progress=on_progress,
            max_total=max_total,
            cancel=cancel,
        )

    def _require(self, capability: str, method: str) -> None:
        if self._state == OPEN and capability not in self.server_capabilities:
            raise CapabilityError(capability, method)

def _weak_notification_handler(client: Client) -> Callable[[str, dict[str, Any]], None]:
    """``client._on_notification`` without a strong reference to ``client``.

    The engine (held by the reader and dispatch threads) keeps this; a bound method would
    keep the Client alive as long as its threads run, that is forever.
    """
    method = weakref.WeakMethod(client._on_notification)

    def on_notification(name: str, params: dict[str, Any]) -> None:
        handler = method()
        if handler is not None:
            handler(name, params)

    return on_notification


def _close_unclosed(engine: Engine, listener: Listener, pid: int, transport: str) -> None:
    """The finalizer of a Client collected without close(): warn, then close it."""
    if os.getpid() != pid:
        return  # a forked child: the connection, its server and threads are the parent's
    warnings.warn(f"unclosed Client on {transport}; call close() or use a with block", ResourceWarning, stacklevel=2)
    listener.stop()
    engine.close()


def _version() -> str:
    from . import __version__

    return __version__
