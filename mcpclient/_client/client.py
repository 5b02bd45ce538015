"""The blocking MCP client: one class whose features are collaborators over one session.

``Client`` holds the life cycle and the public methods. Each method checks that the client
is open, resolves its timeout, and hands the call in one step to the collaborator that owns
the feature: ``Calls`` (tools, resources, prompts, completions, the ``tools/call`` of a
task), ``Notifications`` and ``Elicitation``. They talk to the server through the
``Conversation``, whose era strategy owns what differs between protocol eras. The features
that are built-in extensions (MCP Apps, skills, tasks) are reached through the ``Seam``, by the
interface ``_features`` declares, and are made from the keyword options by the builders
``mcpclient.plugins`` registers (``_extending.gather``).
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, NoReturn, Sequence, SupportsIndex, overload

import attrs

from .. import types as t
from .._core.cancel import CancelToken
from .._core.exceptions import ClientClosedError, ConnectionClosed, MCPError
from .._core.options import CallOptions, ProgressCallback
from .._core.retry import Retry
from .._core.timeouts import DEFAULT, DEFAULT_TIMEOUT, Deadline, Timeouts
from .._core.version import __version__
from .._rpc.engine import Engine
from ..extensions import Call, Extension, Middleware, NotificationHandler, RequestHandler
from ..transports.base import LEGACY, PipeTransport, Transport
from .batch import map_tool as _map_tool
from .calls import Calls
from .conversation import CLOSED, MAX_INPUT_ROUNDS, OPEN, UNOPENED, Conversation, remember_era
from .elicitation import Elicitation
from .features import Skill, SkillsFeature, Task, TasksFeature, UIResource, UIViews
from . import handlers as answering
from .handlers import BUILTIN_REQUESTS
from .inputs import ON_INPUT, Inputs
from .pending import PendingInput, check_key
from .notifications import ROUTED_NOTIFICATIONS, Notifications
from .pages import ALL_PAGES, Page
from .seam import Seam, check_custom, gather, through
from .session import BoundSession
from .settings import NO_HANDLERS, NO_PLUGINS, Handlers, Plugins, respell
from .subscriptions import Listener

if TYPE_CHECKING:
    from .discovery import Discoveries

__all__ = ["DEFAULT", "DEFAULT_TIMEOUT", "Client"]

log = logging.getLogger("mcpclient")


class Client:
    """A blocking MCP client over one ``Transport``; safe to share between threads.

    Create it with a transport, then call ``initialize()`` (or use it as a context manager,
    which initializes on enter and closes on exit). A daemon reader thread pairs replies with
    calls; server requests and notifications run on a bounded pool of ``max_dispatch``
    threads, so a slow handler never delays replies. ``mcpclient.connect`` makes the
    transport from a URL or a command and opens the client.

    ``timeout`` (seconds) bounds every call that does not give its own; ``None`` means no
    limit. A call that times out raises ``RequestTimeout`` and the server is told to cancel.
    ``protocol`` picks the protocol era: "auto" (default) probes with ``server/discover`` and
    falls back to the legacy ``initialize`` handshake; "legacy" or "2026-07-28" force one.

    ``handlers`` (a ``Handlers``: sampling, elicitation, roots...) answer the server;
    ``plugins`` (a ``Plugins``: the cache, the policy, the lockfile, telemetry, MCP Apps...)
    switch on the built-in plug-ins: each group is documented on its class. ``middleware``
    (functions ``mw(message, next)``) wraps every message the client sends and receives;
    ``extensions`` (``mcpclient.extensions.Extension`` instances) advertise capabilities,
    handle custom methods and hear of the connection's life (docs/extending.md).

    ``resume`` (a ``SessionState`` from ``session_state``, or its ``as_dict()``) takes up a
    legacy Streamable HTTP session another client started, with no ``initialize``; when the
    server no longer knows it, ``on_session_lost`` says what happens: "raise" (``SessionLost``)
    or "reinitialize" (a new session, and the request goes on). See docs/reliability.md.
    ``client_info`` is the ``Implementation`` the client names itself with. ``retry`` (a
    ``mcpclient.Retry``) sends again the calls that failed in passing, as it says: only those
    that change nothing, or that provably never ran, unless a call opts in (``call_tool(...,
    retry=...)``); without one, a change-nothing call whose reply stream broke is sent once more.

    Every request method takes ``meta=``, a mapping of extra ``_meta`` keys for that request
    (vendor keys, trace ids of one's own). The era's ``_meta`` keys and, with
    ``on_progress``, the ``progressToken`` are the client's: a ``meta`` key of the same name
    is overridden. A call with ``meta`` never answers from, nor fills, the result cache.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        protocol: str = "auto",
        handlers: Handlers | None = None,
        plugins: Plugins | None = None,
        middleware: Sequence[Middleware] = (),
        extensions: Sequence[Extension] = (),
        resume: t.SessionState | Mapping[str, Any] | None = None,
        on_session_lost: str = "raise",
        client_info: t.Implementation | None = None,
        max_dispatch: int = 16,
        retry: Retry | None = None,
        **old: Any,
    ) -> None:
        plugins = _plugins(plugins, old)
        self.client_info = client_info or t.Implementation(name="mcpclient", version=_version())
        self._timeouts = Timeouts(timeout)
        #: The options of a call that gives none but the client's timeout: made once, not per call.
        self._plain = CallOptions(timeout)
        self._seam = Seam(
            middleware,
            gather(extensions, transport, {**attrs.asdict(plugins, recurse=False), "timeout": timeout}),
            reserved_requests=BUILTIN_REQUESTS, reserved_notifications=ROUTED_NOTIFICATIONS,
            declared=transport.about.extensions,
        )
        self._handlers = answering.Handlers(self._seam)
        self._state = UNOPENED
        self._state_lock = threading.Lock()
        self._keeps_lists = (plugins.cache is not False and plugins.cache is not None) or self._seam.wants_list_changes
        self._discoveries = _discoveries(plugins.cache, plugins.cache_partition)
        self._tasks = self._seam.find(TasksFeature)  # what Calls waits for a task with
        self._max_dispatch = max_dispatch
        self._protocol = protocol
        self._resume = (resume, on_session_lost)
        if retry is not None and not isinstance(retry, Retry):
            raise TypeError(f"retry must be a mcpclient.Retry or None, got {retry!r}")
        self._retry = retry
        handlers = handlers or NO_HANDLERS
        self._pending_key = check_key(handlers.pending_key)
        if not handlers.pending_expiry > 0:
            raise ValueError(f"pending_expiry must be a number of seconds above 0, got {handlers.pending_expiry!r}")
        self._pending_expiry = float(handlers.pending_expiry)
        self._partition = plugins.cache_partition  # whom a PendingInput is for, with the credentials
        self._install(handlers)  # before the engine starts: a bad handler leaves nothing running
        self._wire(transport)

    def _wire(self, transport: Transport) -> None:
        """The engine, session and features on ``transport`` (again after a restart)."""
        self.transport = transport
        self._engine = Engine(
            transport,
            on_request=self._seam.receiving_requests(self._handlers.handle),
            on_notification=self._seam.receiving_notifications(_weak_notification_handler(self)),
            max_dispatch=self._max_dispatch,
        )
        self._conversation = Conversation(
            self._engine, self._handlers, self.client_info, self._protocol, transport, self._discoveries,
            *self._resume, retry=self._retry,
        )
        # The features, each given what it needs; none of them refers back to the Client.
        self._calls = Calls(self._conversation, self._tasks, self._listed)
        self._inputs = Inputs(self._conversation, self._calls, self._handlers, self._pending_key, self._pending_expiry,
                              _owner_of(weakref.ref(self)), MAX_INPUT_ROUNDS)
        self._elicitation = Elicitation(self._handlers.url_elicitations)
        self._notices = Notifications(self._conversation, self._handlers, self._keeps_lists, self._elicitation)
        self._session = BoundSession(self._conversation, self._seam, _weak_state(self), self._timeouts, self._notices)
        self._seam.bind(self._session)
        # Like an unclosed file: a Client dropped without close() is closed when collected,
        # with a ResourceWarning. Nothing the threads hold refers back to the Client.
        self._finalizer = weakref.finalize(
            self, _close_unclosed, self._engine, self._notices.listener, self._seam, os.getpid(), repr(transport)
        )
        self._finalizer.atexit = False  # at exit the transports end their servers themselves
        self._engine.start()

    def _install(self, handlers: Handlers) -> None:
        """The handlers given at construction, set as their setters set them."""
        if handlers.sampling is not None:
            self.set_sampling_handler(handlers.sampling, tools=handlers.sampling_tools)
        if handlers.elicitation is not None:
            self.set_elicitation_handler(handlers.elicitation, modes=handlers.elicitation_modes)
        if handlers.notification is not None:
            self.set_notification_handler(handlers.notification)
        if handlers.roots is not None:
            self.set_roots(handlers.roots)

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
            resolved = self._timeouts.resolve(timeout)
            deadline = Deadline(resolved)  # a restart comes out of the same time
            try:
                self._conversation.open(resolved)
            except ConnectionClosed as exc:
                if not (self._conversation.probe_killed and self._restart_after_probe(exc)):
                    raise
                self._open_restarted(exc, deadline.remaining())
            self._state = OPEN
        self._notices.update_listener()  # a modern server sends changes only to a listen stream
        self._seam.opened(self._session)

    def _restart_after_probe(self, error: ConnectionClosed) -> bool:
        """Start the server again after the era probe ended it, to go straight to initialize.

        Servers on older SDKs (the Python SDK 1.6 line, for one) exit on a request method they
        do not know, so ``server/discover`` kills them. The transport's ``reopen()`` gives a new
        connection to the same server (a new process for stdio); the legacy era is remembered
        for it, so this happens once per server configuration per process.
        """
        fresh = self.transport.reopen() if isinstance(self.transport, PipeTransport) else None
        if fresh is None:
            return False
        log.debug("the server closed the connection when probed with server/discover (%s): starting it again", error)
        self._finalizer.detach()  # the new wiring registers its own
        self._engine.close()
        remember_era(fresh.about.server_key, LEGACY)  # so the new conversation goes straight to initialize
        self._wire(fresh)
        return True

    def _open_restarted(self, probed: ConnectionClosed, timeout: float | None) -> None:
        """``initialize`` with the server started again; a server that dies again before any
        answer crashes at start-up, whatever it was sent: one error says so, nothing is remembered."""
        key = self.transport.about.server_key
        try:
            self._conversation.open(timeout)
        except ConnectionClosed as again:
            remember_era(key, None)
            raise ConnectionClosed(
                "the server exited before answering anything, twice (probed with server/discover, then "
                f"started again for initialize): it fails at start-up; {again.reason}",
                exit_code=again.exit_code, stderr_tail=again.stderr_tail,
            ) from None
        log.warning(
            "the server closed the connection when probed with server/discover (exit code %s); started it "
            "again and using initialize (the legacy era, remembered for this server)", probed.exit_code,
        )

    def close(self) -> None:
        """Close the client: idempotent, always returns within a few seconds.

        Pending calls fail with ``ClientClosedError``, running handlers see their CancelToken
        cancelled and get a short grace, and the transport is closed (a stdio server is asked
        to exit, then terminated).
        """
        self._state = CLOSED
        self._seam.close()  # the extensions' closers may still send, as MCP Apps' shown views do
        self._finalizer.detach()
        self._notices.listener.stop()
        self._engine.close()

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise TypeError(
            "a Client cannot be pickled: it is a live connection (a server process or an HTTP session, and "
            "its reader thread); to pass one to another process, use mcpclient.SharedClient(target, **options), "
            "which pickles as what it connects to and opens its own client in each process"
        )

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
    def extensions(self) -> tuple[Extension, ...]:
        """The extensions plugged in, in order: the built-ins that see a call first
        (telemetry, the tool lock, the policy gate), the user's, the transport's, then the
        other built-ins the options stand for (``apps=True``: an ``mcpclient.apps.Apps``;
        ``keepalive``; skills; tasks; the header mirroring; the cache)."""
        return self._seam.extensions

    @property
    def timeout(self) -> float | None:
        """The timeout of every call that gives none, in seconds (None: no limit); settable."""
        return self._timeouts.default

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._timeouts.default = value
        self._plain = CallOptions(value)

    @property
    def protocol_version(self) -> str:
        """The protocol version in use; "" until ``initialize()`` succeeded."""
        return self._conversation.version

    @property
    def session_state(self) -> t.SessionState | None:
        """The legacy Streamable HTTP session open now, to save and resume in another client
        (``resume=``; ``as_dict()`` is JSON); None over stdio, the 2026-07-28 era, or before
        ``initialize()``. See docs/reliability.md."""
        return self._conversation.session_state()

    @property
    def server_info(self) -> t.Implementation | None:
        return self._conversation.state.server_info if self._conversation.state else None

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return t.Capabilities(self._conversation.capabilities)

    @property
    def instructions(self) -> str | None:
        return self._conversation.state.instructions if self._conversation.state else None

    def _ready(self, timeout: float | None) -> float | None:
        """Check that the client is open, and resolve ``timeout`` (``DEFAULT``: the client's)."""
        if self._state != OPEN:
            if self._state == CLOSED:
                raise ClientClosedError()
            raise MCPError("call initialize() first (or use the client in a with block)")
        return self._timeouts.default if timeout is DEFAULT else timeout  # Timeouts.resolve, inline

    def _per_call(
        self, timeout: float | None, meta: Mapping[str, Any] | None, on_progress: ProgressCallback | None = None,
        max_total: float | None = None, cancel: CancelToken | threading.Event | None = None,
    ) -> CallOptions:
        """Check that the client is open; the call's options, made once (its timeout resolved)."""
        resolved = self._ready(timeout)
        if timeout is DEFAULT and meta is None and on_progress is None and max_total is None and cancel is None:
            return self._plain
        return CallOptions(resolved, max_total=max_total, on_progress=on_progress, cancel=cancel, meta=meta)

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

    def set_elicitation_complete_handler(self, handler: Callable[[str], None] | None) -> None:
        """Call ``handler(elicitation_id)`` when the server says a URL elicitation is done.

        Only ids this client has seen (in a URL-mode ``elicitation/create`` or a
        ``URLElicitationRequired`` error) are reported, each once, as the spec requires;
        unknown or repeated ids are ignored. The notice is optional for servers: keep a way
        for the user to retry or give up without it. Runs on a dispatch thread.
        """
        self._elicitation.set_complete_handler(handler)

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
        if self._state == OPEN and self._handlers.roots is not None:
            try:
                self._conversation.strategy.roots_changed(self._conversation, CallOptions(self._timeouts.default))
            except MCPError as exc:
                log.warning("could not tell the server that the roots changed: %s", exc)

    def _warn_if_late(self, what: str) -> None:
        if self._state == OPEN:
            self._conversation.strategy.handler_set_late(what)

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Give the server's notification ``method`` to ``handler(params)``, on a dispatch thread.

        For custom (vendor) notifications: the ones mcpclient routes itself (logs, list
        changes, resource updates, task status, progress, cancellation) cannot be claimed, and
        ``set_notification_handler`` still sees every notification. Raises ``ValueError`` if
        ``method`` is one of those or has a handler already.
        """
        self._seam.claim_notification(method, handler)

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Answer the server's request ``method`` with ``handler(params, cancel_token)``.

        The handler runs on a dispatch thread and returns the result dict (None answers
        ``{}``); an ``RPCError`` it raises is the error reply. It also answers the method when
        a modern server asks for it in an input-required round. Raises ``ValueError`` for the
        requests mcpclient answers itself (ping, sampling, elicitation, roots) and for a
        method claimed already.
        """
        self._seam.claim_request(method, handler)

    # -- any method -------------------------------------------------------------------------

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        cancel: CancelToken | threading.Event | None = None,
        max_total: float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Send the request ``method`` (a vendor method, or one mcpclient has no method for).

        Returns the result dict as the server sent it. The timeout, ``on_progress``,
        ``max_total``, ``cancel`` and ``meta`` rules are those of ``call_tool``, and the
        request goes through the middleware and the era's ``_meta`` like any call. Raises
        ``ValueError`` for the methods the client sends itself (``initialize``,
        ``server/discover``), and what ``call_tool`` raises (``RPCError`` for an error reply).
        """
        check_custom(method)
        options = self._per_call(timeout, meta, on_progress, max_total, cancel)
        result = self._conversation.call(method, dict(params) if params else None, options)
        if hooks := self._seam.results_for(method):
            result = through(hooks, Call(method=method, params=params), result)
        return result

    def notify(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Send the notification ``method``, through the middleware; ``timeout`` bounds the write.

        Raises ``ValueError`` for the notifications the client sends itself
        (``notifications/initialized``, ``notifications/cancelled``).
        """
        check_custom(method)
        self._conversation.notify(method, dict(params) if params else None, self._per_call(timeout, meta))

    # -- tools --------------------------------------------------------------------------------

    def ping(self, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> None:
        """Check that the server answers (``ping``; ``server/discover`` in the modern era)."""
        self._calls.ping(self._per_call(timeout, meta))

    @overload
    def list_tools(self, *, timeout: float | None = ..., meta: Mapping[str, Any] | None = ...) -> list[t.ToolDef]: ...
    @overload
    def list_tools(
        self, *, cursor: str | None, timeout: float | None = ..., meta: Mapping[str, Any] | None = ...
    ) -> Page[t.ToolDef]: ...
    def list_tools(
        self, *, timeout: float | None = DEFAULT, cursor: Any = ALL_PAGES, meta: Mapping[str, Any] | None = None
    ) -> list[t.ToolDef] | Page[t.ToolDef]:
        """Every tool the server offers, following pagination to the end.

        With ``cursor`` given, one page instead: a ``Page`` whose ``next_cursor`` (None after
        the last) is the next call's ``cursor``; ``cursor=None`` is the first page.
        """
        if cursor is not ALL_PAGES:
            return self._calls.list_page("tools/list", t.ToolDef, cursor, self._per_call(timeout, meta))
        return t.Listing(self._calls.list_tools(self._per_call(timeout, meta)))  # through _listed

    @overload
    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = ..., *, timeout: float | None = ...,
        on_progress: ProgressCallback | None = ..., max_total: float | None = ...,
        cancel: CancelToken | threading.Event | None = ..., meta: Mapping[str, Any] | None = ...,
        retry: Retry | None = ..., on_input: Literal["answer"] = ...,
    ) -> t.ToolResult: ...
    @overload
    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = ..., *, timeout: float | None = ...,
        on_progress: ProgressCallback | None = ..., max_total: float | None = ...,
        cancel: CancelToken | threading.Event | None = ..., meta: Mapping[str, Any] | None = ...,
        retry: Retry | None = ..., on_input: str,
    ) -> t.ToolResult | PendingInput: ...
    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        max_total: float | None = None,
        cancel: CancelToken | threading.Event | None = None,
        meta: Mapping[str, Any] | None = None,
        retry: Retry | None = None,
        on_input: str = "answer",
    ) -> t.ToolResult | PendingInput:
        """Run a tool and return its ``ToolResult``.

        ``arguments`` is a JSON-able mapping (None sends ``{}``). A tool that fails reports
        ``is_error=True`` in the result rather than raising; call ``result.raise_for_error()``
        to raise ``ToolError`` instead.

        ``on_progress(progress, total, message)`` receives the server's progress reports; each
        one renews ``timeout`` (an idle timeout), while ``max_total`` caps the whole call.
        ``cancel`` (a ``CancelToken`` or ``threading.Event``) cancels the call from another
        thread: the server is told, and this call raises ``RequestCancelled``.

        ``retry`` (a ``mcpclient.Retry``) replaces the client's for this call:
        ``retry=Retry(idempotent=True)`` lets a tool that may change something be sent again
        after a failure that may have run it; ``retry=Retry(attempts=1)`` sends it once.

        With ``apps=True`` the result is an ``apps.AppResult``: a ``ToolResult`` that renders
        as the tool's view in a live notebook.

        ``on_input="return"``: when the server asks for input (an elicitation form or URL,
        sampling, roots), the call returns a ``PendingInput`` holding the questions instead of
        answering them with the handlers; ``resume(pending, answers)`` goes on (docs/wsgi.md).
        With a 2026-07-28 server the call is over until then (its state travels in the
        ``PendingInput``); with a legacy server the call stays open, held in this process, and
        ``timeout`` then bounds the whole held call, the person's time included: give it enough
        (a held call also ends at ``Handlers(pending_expiry=...)``). A client holds one legacy
        call at a time, and every elicitation and sampling request of its server goes to it
        meanwhile (the server's requests do not say which call they belong to): a client per
        user, never one shared by users, for this.
        """
        if self._state != OPEN:
            self._ready(timeout)  # raises the error for the state
        if on_input != "answer":
            return self._call_returning(name, arguments, timeout, on_progress, max_total, cancel, meta, retry, on_input)
        if (timeout is DEFAULT and on_progress is None and max_total is None and cancel is None and meta is None
                and retry is None):
            options = self._plain  # _per_call's, inline
        else:
            options = CallOptions(self._timeouts.default if timeout is DEFAULT else timeout, max_total=max_total,
                                  on_progress=on_progress, cancel=cancel, meta=meta, retry=retry)
        return self._tool_result(name, arguments, self._calls.call_tool(name, arguments, options))

    def _tool_result(
        self, name: str, arguments: Mapping[str, Any] | None, result: t.ToolResult | dict[str, Any]
    ) -> t.ToolResult:
        if not isinstance(result, t.ToolResult):  # (never: only on_input="return" gives the server's dict)
            raise MCPError("the server asked for input where the call answers it")
        hooks = self._seam.tool_results  # empty unless an extension takes tool results: no Call then
        if hooks:
            changed: t.ToolResult = through(hooks, Call(method="tools/call", name=name, arguments=arguments), result)
            return changed
        return result

    def _call_returning(
        self, name: str, arguments: Mapping[str, Any] | None, timeout: float | None,
        on_progress: ProgressCallback | None, max_total: float | None, cancel: CancelToken | threading.Event | None,
        meta: Mapping[str, Any] | None, retry: Retry | None, on_input: str,
    ) -> t.ToolResult | PendingInput:
        if on_input not in ON_INPUT:
            raise ValueError(f"on_input must be one of {ON_INPUT}, got {on_input!r}")
        options = CallOptions(self._timeouts.default if timeout is DEFAULT else timeout, max_total=max_total,
                              on_progress=on_progress, cancel=cancel, meta=meta, retry=retry, on_input="return")
        return self._finished(name, arguments, self._inputs.call_tool(name, arguments, options))

    def _finished(
        self, name: str, arguments: Mapping[str, Any] | None, outcome: t.ToolResult | PendingInput
    ) -> t.ToolResult | PendingInput:
        if isinstance(outcome, PendingInput):
            return outcome
        return self._tool_result(name, arguments, outcome)

    def resume(
        self,
        pending: PendingInput,
        answers: Any,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        max_total: float | None = None,
        cancel: CancelToken | threading.Event | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> t.ToolResult | PendingInput:
        """Go on with a call that waits for a person: ``pending`` is what
        ``call_tool(..., on_input="return")`` (or an earlier ``resume``) returned, or
        ``PendingInput.from_json(text)`` read back; returns the ``ToolResult``, or another
        ``PendingInput`` when the server asks again.

        ``answers`` answers each question as its handler would (an elicitation: an
        ``ElicitationResult`` or a dict with ``action`` and ``content``; sampling: a
        ``CreateMessageResult``; roots: a list of ``Root`` or URIs): a mapping from each
        question's key, or for one question its answer alone. An answer that does not fit
        (a form answer that breaks its schema) raises ``ValueError`` and sends nothing.

        Before anything is sent, the state is checked: signed with this client's
        ``Handlers(pending_key=...)`` (for one read from JSON), not expired, made for this
        server and for these credentials; else ``PendingInputRefused``. A 2026-07-28 call is
        sent again once, with the answers and the server's ``requestState``, through the
        middleware and the policy gate like any call (``timeout``, ``cancel``... are this
        step's). A legacy call is held in the process that made it: only its client resumes it
        there, and the wait goes on by the held call's own deadline and cancel.
        """
        self._ready(timeout)
        options = CallOptions(self._timeouts.default if timeout is DEFAULT else timeout, max_total=max_total,
                              on_progress=on_progress, cancel=cancel,
                              meta=meta if meta is not None else getattr(pending, "meta", None), on_input="return")
        outcome = self._inputs.resume(pending, answers, options)
        return self._finished(pending.name, pending.arguments, outcome)

    map_tool = _map_tool

    def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: float | None = None,
        timeout: float | None = DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> Task:
        """Start a tool as a task and return its ``Task`` handle without waiting for the end.

        Legacy servers must declare ``tasks.requests.tools.call`` and the tool must allow it
        (``execution.taskSupport``); ``ttl`` asks for how many seconds the server keeps the task.
        Modern servers must declare the ``io.modelcontextprotocol/tasks`` extension; they
        decide on their own whether to make a task (``ttl`` is not sent: the extension has no
        such field). A server that answers at once gives a Task that is already done.

        Raises ``CapabilityError`` if the server supports no tasks, ``TaskSupportError`` (before
        sending) if a legacy server lists the tool with a ``taskSupport`` that is not "optional"
        or "required" (absent means "forbidden"; an unlisted tool is listed once first), and what
        ``call_tool`` raises.
        """
        return self._calls.call_tool_as_task(name, arguments, ttl, self._per_call(timeout, meta))

    def get_task(self, task_id: str, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> Task:
        """A handle on an existing task (e.g. one started before a restart), freshly polled."""
        return self._task_feature().get_task(task_id, self._ready(timeout), meta)

    def list_tasks(self, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> list[Task]:
        """Every task the server lists (legacy era only, with ``tasks.list`` declared).

        The 2026 extension has no ``tasks/list``: there it raises ``CapabilityError``.
        """
        return self._task_feature().list_tasks(self._ready(timeout), meta)

    def _task_feature(self) -> TasksFeature:
        return self._seam.feature(TasksFeature, TasksFeature.missing)

    # -- resources and prompts ----------------------------------------------------------------

    @overload
    def list_resources(self, *, timeout: float | None = ..., meta: Mapping[str, Any] | None = ...) -> list[t.Resource]: ...
    @overload
    def list_resources(
        self, *, cursor: str | None, timeout: float | None = ..., meta: Mapping[str, Any] | None = ...
    ) -> Page[t.Resource]: ...
    def list_resources(
        self, *, timeout: float | None = DEFAULT, cursor: Any = ALL_PAGES, meta: Mapping[str, Any] | None = None
    ) -> list[t.Resource] | Page[t.Resource]:
        """Every resource the server lists, following pagination to the end (``cursor``: one
        page, as in ``list_tools``)."""
        if cursor is not ALL_PAGES:
            return self._calls.list_page("resources/list", t.Resource, cursor, self._per_call(timeout, meta))
        return t.Listing(self._calls.list_resources(self._per_call(timeout, meta)))

    @overload
    def list_resource_templates(
        self, *, timeout: float | None = ..., meta: Mapping[str, Any] | None = ...
    ) -> list[t.ResourceTemplate]: ...
    @overload
    def list_resource_templates(
        self, *, cursor: str | None, timeout: float | None = ..., meta: Mapping[str, Any] | None = ...
    ) -> Page[t.ResourceTemplate]: ...
    def list_resource_templates(
        self, *, timeout: float | None = DEFAULT, cursor: Any = ALL_PAGES, meta: Mapping[str, Any] | None = None
    ) -> list[t.ResourceTemplate] | Page[t.ResourceTemplate]:
        """Every resource template, following pagination to the end (``cursor``: one page, as
        in ``list_tools``)."""
        if cursor is not ALL_PAGES:
            return self._calls.list_page("resources/templates/list", t.ResourceTemplate, cursor,
                                         self._per_call(timeout, meta))
        return self._calls.list_resource_templates(self._per_call(timeout, meta))

    def read_resource(
        self,
        uri: str,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        cancel: CancelToken | threading.Event | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> list[t.ResourceContents]:
        """Read a resource: each entry has ``text`` or decoded ``blob`` bytes.

        Raises ``ResourceNotFound`` (an ``RPCError``) when the server has no such resource.
        """
        contents = self._calls.read_resource(uri, self._per_call(timeout, meta, on_progress, cancel=cancel))
        if hooks := self._seam.results_for("resources/read"):
            contents = through(hooks, Call(method="resources/read", name=uri), contents)
        return contents

    def read_ui_resource(self, uri: str, *, timeout: float | None = DEFAULT) -> UIResource:
        """An MCP Apps view (``ui://``) with its ``_meta.ui``, read once per connection.

        Needs ``apps=True`` (the ``mcpclient.apps.Apps`` extension, which this asks). Raises
        ``ProtocolError`` when the resource is not an MCP App view (``text/html;profile=mcp-app``),
        ``ResourceNotFound`` when the server has none.
        """
        views = self._seam.feature(UIViews, UIViews.missing)
        return views.read_ui_resource(uri, self._ready(timeout))

    @overload
    def list_prompts(self, *, timeout: float | None = ..., meta: Mapping[str, Any] | None = ...) -> list[t.Prompt]: ...
    @overload
    def list_prompts(
        self, *, cursor: str | None, timeout: float | None = ..., meta: Mapping[str, Any] | None = ...
    ) -> Page[t.Prompt]: ...
    def list_prompts(
        self, *, timeout: float | None = DEFAULT, cursor: Any = ALL_PAGES, meta: Mapping[str, Any] | None = None
    ) -> list[t.Prompt] | Page[t.Prompt]:
        """Every prompt the server offers, following pagination to the end (``cursor``: one
        page, as in ``list_tools``)."""
        if cursor is not ALL_PAGES:
            return self._calls.list_page("prompts/list", t.Prompt, cursor, self._per_call(timeout, meta))
        return t.Listing(self._calls.list_prompts(self._per_call(timeout, meta)))

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        cancel: CancelToken | threading.Event | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> tuple[str | None, list[t.PromptMessage]]:
        """Render a prompt: return its description and messages."""
        prompt = self._calls.get_prompt(name, arguments, self._per_call(timeout, meta, on_progress, cancel=cancel))
        if hooks := self._seam.results_for("prompts/get"):
            prompt = through(hooks, Call(method="prompts/get", name=name, arguments=arguments), prompt)
        return prompt

    def complete(
        self,
        ref: t.CompletionRef,
        arg_name: str,
        arg_value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> t.Completion:
        """Ask for completions of one argument of a prompt or resource template.

        ``context`` gives the values of arguments already filled in.
        """
        completion = self._calls.complete(ref, arg_name, arg_value, context, self._per_call(timeout, meta))
        if hooks := self._seam.results_for("completion/complete"):
            completion = through(hooks, Call(method="completion/complete", arguments=context), completion)
        return completion

    # -- notifications and logs -----------------------------------------------------------------

    def set_log_level(self, level: str, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> None:
        """Ask the server for log messages at ``level`` and above ("debug" ... "emergency").

        Legacy servers get ``logging/setLevel``; modern ones get the level in every request's
        ``_meta``. Messages go to the ``mcpclient.server`` logger unless ``set_log_handler``
        installed a callback.
        """
        self._notices.set_log_level(level, self._per_call(timeout, meta))

    def set_log_handler(self, handler: Callable[[str, Any, str | None], None] | None) -> None:
        """Send server log messages to ``handler(level, data, logger)`` instead of logging."""
        self._notices.logs.handler = handler

    def set_resource_updated_handler(self, handler: Callable[[str], None] | None) -> None:
        """Call ``handler(uri)`` when a subscribed resource changes."""
        self._notices.set_resource_updated_handler(handler)

    def set_list_changed_handler(self, handler: Callable[[str], None] | None) -> None:
        """Call ``handler(kind)`` ("tools", "prompts" or "resources") when a list changes."""
        self._notices.set_list_changed_handler(handler)

    def subscribe_resource(
        self, uri: str, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None
    ) -> None:
        """Get ``resources/updated`` notifications for ``uri`` (see set_resource_updated_handler).

        A legacy server is sent ``resources/subscribe``. A modern one is asked on the client's
        ``subscriptions/listen`` stream, and this returns once the server has acknowledged the
        subscription; ``SubscriptionError`` if its acknowledgement leaves ``uri`` out or does
        not come within ``timeout``.
        """
        self._notices.subscribe(uri, self._per_call(timeout, meta))

    def unsubscribe_resource(self, uri: str, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> None:
        """Stop notifications for ``uri``."""
        self._notices.unsubscribe(uri, self._per_call(timeout, meta))

    def _listed(self, tools: list[t.ToolDef]) -> list[t.ToolDef]:
        """Every whole tool list, through the extensions' result hooks (``list_tools``, and the
        listings a call makes for itself: a task's tool checked, stale headers refreshed)."""
        if hooks := self._seam.results_for("tools/list"):
            listed: list[t.ToolDef] = through(hooks, Call(method="tools/list"), tools)
            return listed
        return tools

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        self._notices.on_notification(method, params)

    # -- skills (the built-in Skills extension, through SkillsFeature) ---------------------------

    def _skill_feature(self) -> SkillsFeature:
        return self._seam.feature(SkillsFeature, SkillsFeature.missing)

    def list_skills(self, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> list[Skill]:
        """Every skill the server lists (``skills/list``, all pages); no file is read.

        A listing may be partial: a skill missing from it can still be loaded by URI. Entries
        that break the extension's rules (no manifest, a bad digest, files outside the skill)
        are left out with a warning, since they could never be loaded.
        Raises ``CapabilityError`` if the server does not declare the skills extension.
        """
        return self._skill_feature().list_skills(self._ready(timeout), meta)

    def get_skill(self, uri: str, *, timeout: float | None = DEFAULT, meta: Mapping[str, Any] | None = None) -> Skill:
        """The entry of the skill whose SKILL.md is at ``uri`` (``skills/get``); no file is read.

        Raises ``RPCError`` (-32602) if the server serves no such skill, ``ProtocolError`` if
        its entry breaks the extension's rules.
        """
        return self._skill_feature().get_skill(uri, self._ready(timeout), meta)

    def load_skill(
        self, skill: Skill | str, *, allow_dynamic: bool = False, timeout: float | None = DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        """Read a skill's SKILL.md, verify it against the skill's entry, and return its text.

        ``skill`` is a ``Skill`` from ``list_skills``/``get_skill``, the URI of a SKILL.md
        (its entry is fetched with ``skills/get``), or a name (looked up with ``skills/list``;
        ``ValueError`` if no skill or several skills have it). Only SKILL.md is read.

        Raises ``SkillVerificationError`` if the file's size or digest differs from the entry,
        or its frontmatter differs from the entry's in any field; the text is then not
        returned. A ``"dynamic"`` skill is refused the same way unless ``allow_dynamic=True``.
        Frontmatter checking needs PyYAML (``pip install mcpclient[skills]``).
        """
        return self._skill_feature().load_skill(skill, allow_dynamic, self._ready(timeout), meta)

    def read_skill_file(
        self, skill: Skill, path: str, *, allow_dynamic: bool = False, timeout: float | None = DEFAULT,
        meta: Mapping[str, Any] | None = None,
    ) -> bytes:
        """Read one file of ``skill`` (``path`` relative to its root, or a URI) and verify it.

        Returns the file's bytes once its size and digest match the entry. Raises
        ``SkillVerificationError`` if they do not, or if the entry does not list the file
        (an unlisted file is a change to the skill). Files of a ``"dynamic"`` skill are
        refused unless ``allow_dynamic=True``, and then only within the skill's directory.
        """
        return self._skill_feature().read_skill_file(skill, path, allow_dynamic, self._ready(timeout), meta)


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


def _plugins(plugins: Plugins | None, old: Mapping[str, Any]) -> Plugins:
    """The ``Plugins`` a Client was given, with the plug-ins' keywords of the release before
    (``Client(cache=True)``) moved in (``settings.respell``: a ``DeprecationWarning`` each)."""
    if old:
        plugins = respell("Client()", {"plugins": plugins}, old, groups=("plugins",))["plugins"]
    return plugins or NO_PLUGINS


def _owner_of(client_ref: weakref.ref[Client]) -> Callable[[], str | None]:
    """Whom the client's credentials (and ``cache_partition``) make it, as ``Credentials.owner``."""

    def owner() -> str | None:
        client = client_ref()
        if client is None:
            return None
        partition = client._partition
        scope = None
        if partition is not None:
            from ..cache import resolve_partition

            resolved = resolve_partition(partition)
            scope = resolved.scope if resolved is not None else None
        return client.transport.about.credentials.owner(scope)

    return owner


def _discoveries(cache: Any, partition: Any) -> Discoveries | None:
    """Where the server's era and discover answer are kept, for ``cache=`` a store; None else.

    The stores (and the hashing their keys take) are imported by the first client given one:
    ``import mcpclient`` and a client without a store never load them.
    """
    if cache is True or cache is False or cache is None:
        return None
    from ..cache import CacheStore
    from .discovery import Discoveries

    return Discoveries(cache, partition) if isinstance(cache, CacheStore) else None


def _weak_state(client: Client) -> Callable[[], str]:
    """``client._state`` without a strong reference (the Session given to extensions holds it)."""
    ref = weakref.ref(client)

    def state() -> str:
        held = ref()
        return CLOSED if held is None else held._state

    return state


def _close_unclosed(engine: Engine, listener: Listener, seam: Seam, pid: int, transport: str) -> None:
    """The finalizer of a Client collected without close(): warn, then close it."""
    if os.getpid() != pid:
        return  # a forked child: the connection, its server and threads are the parent's
    warnings.warn(f"unclosed Client on {transport}; call close() or use a with block", ResourceWarning, stacklevel=2)
    seam.close()  # the extensions' close hooks, as close() runs them
    listener.stop()
    engine.close()


def _version() -> str:
    return __version__
