"""The client's side of the public seam: the middleware chains, the custom handlers, the hooks.

``Seam`` holds what a ``Client`` was given (``middleware=``, ``extensions=``) and what was
registered later (``on_notification``/``on_request``). The session asks it for the send
chain (``chain`` is None when there is no middleware: the hot path then costs one test),
the handlers ask it for custom server requests and the capabilities extensions advertise,
the notifications ask it for custom notifications. It knows nothing of the Client.
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping, Sequence, TypeVar, cast

from .._core.cancel import CancelToken
from .._core.exceptions import MCPError, method_not_found
from .._core.options import CallOptions
from ..extensions import (
    Call,
    Extension,
    Message,
    Middleware,
    Next,
    NotificationHandler,
    Options,
    RequestHandler,
    Session,
)

if TYPE_CHECKING:
    from ..transports.base import Transport

__all__ = [
    "CLIENT_OWNED", "Seam", "call_options", "check_claim", "check_custom", "compose", "gather", "merge_meta",
    "message_options", "register_option_builder", "through",
]

log = logging.getLogger("mcpclient")

#: Methods the client sends itself, which ``Client.request``/``notify`` refuse.
CLIENT_OWNED = frozenset({"initialize", "server/discover", "notifications/initialized", "notifications/cancelled"})
#: Notifications the engine consumes on the reader thread; not messages for middleware.
NOT_MESSAGES = frozenset({"notifications/progress"})

F = TypeVar("F")


def check_custom(method: str) -> None:
    """Refuse, with ``ValueError``, a method the client sends itself (or a malformed one)."""
    if not isinstance(method, str) or not method:
        raise ValueError(f"a method must be a non-empty string, got {method!r}")
    if method in CLIENT_OWNED:
        raise ValueError(f"{method!r} is sent by mcpclient itself; it cannot be sent with request() or notify()")


def check_claim(method: str, fn: Any, reserved: Collection[str], what: str) -> None:
    """Refuse a handler for a method mcpclient handles itself (``ValueError``), or a bad one."""
    if not isinstance(method, str) or not method:
        raise ValueError(f"a {what} method must be a non-empty string, got {method!r}")
    if not callable(fn):
        raise TypeError(f"a handler must be callable, got {fn!r}")
    if method in reserved:
        raise ValueError(
            f"{method!r} is handled by mcpclient itself and cannot be claimed; observe it with a middleware instead"
        )


#: What builds the built-in extensions that the fields of a Client's ``Plugins`` stand for
#: (``cache``, ``policy``, ``lock``, ``keepalive``...): called with every field (and the Client's
#: transport under ``"transport"``), each returns its extensions (none when its option is off;
#: it also sees the extensions gathered before it).
OptionBuilder = Callable[[Mapping[str, Any], Sequence[Extension]], Sequence[Extension]]
#: Whether a builder has anything to do for these options: a cheap test, made before the
#: builder's module is imported.
Wanted = Callable[[Mapping[str, Any]], bool]


class _Registered:
    """One registered builder: a function, or where to find one (``"module:function"``),
    imported the first time a Client's options want it."""

    def __init__(self, builder: OptionBuilder | str, wanted: Wanted | None) -> None:
        self._builder = builder
        self.wanted = wanted

    def build(self, options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
        if self.wanted is not None and not self.wanted(options):
            return ()
        builder = self._builder
        if isinstance(builder, str):
            module, _, name = builder.partition(":")
            builder = self._builder = getattr(importlib.import_module(module), name)
        return builder(options, gathered)


_OUTER: list[_Registered] = []
_INNER: list[_Registered] = []


def register_option_builder(builder: OptionBuilder | str, *, outer: bool, wanted: Wanted | None = None) -> None:
    """Add ``builder``: its extensions go before the user's (``outer``: they see a call first
    and can refuse it before any other extension runs) or after the transport's.

    ``builder`` may be a ``"module:function"`` name, imported the first time a Client's
    options want it (``wanted(options)``; None: every Client), so that registering a
    built-in imports none of it: ``mcpclient.plugins`` registers every built-in this way
    when ``mcpclient`` is imported, and the client core imports no plug-in.
    """
    (_OUTER if outer else _INNER).append(_Registered(builder, wanted))


def gather(extensions: Sequence[Extension], transport: Transport, options: Mapping[str, Any]) -> list[Extension]:
    """The extensions of a Client: the outer built-ins its ``options`` stand for (telemetry, the
    tool lock, the policy gate, output validation), the user's, then the inner built-ins
    (keep-alive, MCP Apps, skills, tasks, the header mirroring, the result cache)."""
    gathered: list[Extension] = []
    options = {**options, "transport": transport}
    for registered in _OUTER:
        gathered += registered.build(options, gathered)
    gathered += extensions
    for registered in _INNER:
        gathered += registered.build(options, gathered)
    return gathered


def compose(middleware: Sequence[Middleware], terminal: Next) -> Next:
    """``terminal`` wrapped in ``middleware``, the first outermost."""
    call = terminal
    for mw in reversed(middleware):
        call = _link(mw, call)
    return call


def _link(mw: Middleware, inner: Next) -> Next:
    def next_(message: Message) -> Any:
        return mw(message, inner)

    return next_


def merge_meta(params: dict[str, Any] | None, meta: Any) -> dict[str, Any] | None:
    """``params`` with ``meta``'s keys added to its ``_meta`` (a copy; keys already there win)."""
    if not meta:
        return params
    params = dict(params or {})
    params["_meta"] = {**meta, **(params.get("_meta") or {})}
    return params


def message_options(options: CallOptions) -> Options:
    """A call's options as middleware sees them (``max_total``: what is left of the call's)."""
    return Options(
        timeout=options.timeout, max_total=options.remaining(), on_progress=options.on_progress,
        cancel=options.cancel, meta=options.meta, on_sent=options.on_sent, headers=options.headers,
        resendable=options.resendable, retry=options.retry, attempt=options.attempt, on_input=options.on_input,
    )


def call_options(options: Options) -> CallOptions:
    """A message's options as the call goes on with them, below the middleware (the way back
    of ``message_options``; ``max_total`` counted from now)."""
    return CallOptions(
        options.timeout, max_total=options.max_total, on_progress=options.on_progress, cancel=options.cancel,
        meta=options.meta, on_sent=options.on_sent, headers=options.headers, resendable=options.resendable,
        retry=options.retry, attempt=options.attempt, on_input=options.on_input,
    )


class Seam:
    """Middleware, extensions and custom handlers of one Client (they outlive a restart)."""

    def __init__(
        self,
        middleware: Iterable[Middleware],
        extensions: Iterable[Extension],
        *,
        reserved_requests: Collection[str],
        reserved_notifications: Collection[str],
        declared: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.extensions: tuple[Extension, ...] = _extensions(extensions)
        #: What the transport declares as data (``About.extensions``: an auth
        #: grant that is an MCP extension), advertised under ``capabilities.extensions``.
        self.declared: dict[str, dict[str, Any]] = {name: dict(settings) for name, settings in (declared or {}).items()}
        users = tuple(middleware)
        #: The middleware, outermost first (the user's, then the extensions'); empty when there is none.
        self.middleware: tuple[Middleware, ...] = _chain("a middleware", users, self.extensions, _middleware)
        #: The extensions with a ``result`` hook of their own (not the base class's no-op).
        self._results: tuple[Extension, ...] = tuple(
            ext for ext in self.extensions if type(ext).result is not Extension.result
        )
        #: Those hooks by method, as ``results_for`` found them (see ``Extension.result_methods``).
        self._results_by_method: dict[str, tuple[Callable[[Call, Any], Any], ...]] = {}
        #: The methods an extension asked for later (``want_results``), by ``id`` of the extension.
        self._wanted: dict[int, frozenset[str]] = {}
        #: The extensions' middleware around whole calls (``Extension.call_middleware``),
        #: outermost first; empty when there is none.
        self.call_middleware: tuple[Middleware, ...] = _chain("a call middleware", (), self.extensions,
                                                              _call_middleware)
        #: Everything a received message passes, outermost first: for one message a call
        #: is the message, so the call middleware goes around the rest.
        self._receiving: tuple[Middleware, ...] = (*self.call_middleware, *self.middleware)
        #: Whether the next call may skip every middleware: it then takes the path with no
        #: chain. Asked once per call, so it is made here as the cheapest check that says so.
        self.idle: Callable[[], bool] = _idle_test(self.extensions, users)
        #: No middleware at all: every call takes the path with no chain, without asking ``idle``.
        self.bare = not self._receiving
        #: Whether an extension needs the lists' change notices (the modern era's listen stream).
        self.wants_list_changes = any(ext.wants_list_changes() for ext in self.extensions)
        self._reserved_requests = frozenset(reserved_requests)
        self._reserved_notifications = frozenset(reserved_notifications)
        self._requests: dict[str, RequestHandler] = {}
        self._notifications: dict[str, NotificationHandler] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._closers: list[Callable[[], None]] = []
        self._closed = False
        for ext in self.extensions:
            self._claim_handlers(ext)
        #: The hooks of ``tools/call`` results, read by every ``call_tool`` (empty: it builds no
        #: ``Call``); replaced whole when an extension wants more (``want_results``).
        self.tool_results = self.results_for("tools/call")

    def _claim_handlers(self, ext: Extension) -> None:
        """The custom server requests and notifications ``ext`` takes (``claim_request``)."""
        for method, request_handler in ext.request_handlers().items():
            self.claim_request(method, request_handler)
        for method, notification_handler in ext.notification_handlers().items():
            self.claim_notification(method, notification_handler)

    # -- the chains -----------------------------------------------------------------------------

    def chain(self, terminal: Next) -> Next | None:
        """The send chain ending in ``terminal``; None when there is no middleware."""
        return compose(self.middleware, terminal) if self.middleware else None

    def receiving_requests(
        self, handler: Callable[[str, dict[str, Any], CancelToken], Any]
    ) -> Callable[[str, dict[str, Any], CancelToken], Any]:
        """The engine's server-request handler with the receive middleware around it (the
        call middleware outermost)."""
        if not self._receiving:
            return handler

        def terminal(message: Message) -> Any:
            token = message.options.cancel
            assert isinstance(token, CancelToken)
            return handler(message.method, message.params or {}, token)

        chain = compose(self._receiving, terminal)

        def on_request(method: str, params: dict[str, Any], token: CancelToken) -> Any:
            return chain(Message(direction="receive", kind="request", method=method, params=params,
                                 options=Options(cancel=token)))

        return on_request

    def receiving_notifications(
        self, handler: Callable[[str, dict[str, Any]], None]
    ) -> Callable[[str, dict[str, Any]], None]:
        """The engine's notification handler with the receive middleware around it."""
        if not self._receiving:
            return handler

        def terminal(message: Message) -> None:
            handler(message.method, message.params or {})

        chain = compose(self._receiving, terminal)

        def on_notification(method: str, params: dict[str, Any]) -> None:
            if method in NOT_MESSAGES:
                handler(method, params)
                return
            chain(Message(direction="receive", kind="notification", method=method, params=params))

        return on_notification

    # -- custom handlers ------------------------------------------------------------------------

    def claim_request(self, method: str, fn: RequestHandler) -> None:
        """Answer the server request ``method`` with ``fn(params, token)``.

        Raises ``ValueError`` if the method is the client's own or was claimed already.
        """
        self._claim(method, fn, self._requests, self._reserved_requests, "server request")

    def claim_notification(self, method: str, fn: NotificationHandler) -> None:
        """Give the notification ``method`` to ``fn(params)`` (same rules as ``claim_request``)."""
        self._claim(method, fn, self._notifications, self._reserved_notifications, "notification")

    def _claim(self, method: str, fn: Any, table: dict[str, Any], reserved: frozenset[str], what: str) -> None:
        check_claim(method, fn, reserved, what)
        with self._lock:
            if method in table:
                raise ValueError(f"the {what} {method!r} has a handler already; one handler per method")
            table[method] = fn

    def request_handler(self, method: str) -> RequestHandler | None:
        return self._requests.get(method)

    def notification_handler(self, method: str) -> NotificationHandler | None:
        return self._notifications.get(method)

    def answer(self, method: str, params: dict[str, Any], token: CancelToken) -> Any:
        """The result of a custom server request; -32601 when nobody claimed ``method``."""
        fn = self._requests.get(method)
        if fn is None:
            raise method_not_found(method, "this client does not handle it")
        result = fn(params, token)
        if result is None:
            return {}
        if not isinstance(result, dict):
            raise TypeError(f"the handler for {method!r} returned {type(result).__name__}; expected a dict")
        return result

    # -- what the extensions advertise ------------------------------------------------------------

    def capabilities(self, caps: dict[str, Any]) -> dict[str, Any]:
        """``caps`` with every extension's capabilities and ``extensions`` entry merged in.

        A capability the client's own handlers declare (sampling, elicitation, roots) keeps
        their value; the first extension to declare any other key wins.
        """
        if not self.extensions and not self.declared:
            return caps
        merged = dict(caps)
        entries = dict(merged.get("extensions") or {})
        for identifier, settings in self.declared.items():
            entries[identifier] = dict(settings)
        for ext in self.extensions:
            for key, value in ext.capabilities().items():
                if key != "extensions":
                    merged.setdefault(key, value)  # what a built-in handler backs is declared as it says
            if ext.identifier:
                entries[ext.identifier] = ext.settings()
        if entries:
            merged["extensions"] = entries
        return merged

    # -- the features the Client's own methods delegate to ------------------------------------------

    def feature(self, interface: Callable[..., F], missing: str) -> F:
        """The first extension that implements ``interface`` (one of ``mcpclient._client.features``).

        A ``Client`` method that belongs to a feature calls the feature through this, so the
        client knows the interface and never the extension's class. Raises ``MCPError``
        saying ``missing`` (how to turn the feature on) when no extension implements it.
        (``interface`` is typed as a callable because mypy allows no abstract class as ``type[F]``.)
        """
        found = self.find(interface)
        if found is None:
            raise MCPError(missing)
        return found

    def find(self, interface: Callable[..., F]) -> F | None:
        """The first extension that implements ``interface``, or None (see ``feature``)."""
        kind = cast(type, interface)
        for ext in self.extensions:
            if isinstance(ext, kind):
                return cast(F, ext)
        return None

    # -- the hooks ---------------------------------------------------------------------------------

    def bind(self, session: Session) -> None:
        for ext in self.extensions:
            ext.bind(session)

    def opened(self, session: Session) -> None:
        for ext in self.extensions:
            ext.opened(session)

    def results_for(self, method: str) -> tuple[Callable[[Call, Any], Any], ...]:
        """The ``result`` hooks that take ``method``'s results, in extension order (empty: a
        call of it builds no ``Call``)."""
        table = self._results_by_method  # first: a table made before a want_results is dropped whole
        hooks = table.get(method)
        if hooks is None:
            hooks = tuple(ext.result for ext in self._results if ext.result_methods is None
                          or method in ext.result_methods or method in self._wanted.get(id(ext), ()))
            table[method] = hooks  # the same tuple whoever races to make it
        return hooks

    def want_results(self, extension: Extension, methods: Collection[str]) -> None:
        """From the next call on, give ``extension``'s ``result`` hook the results of
        ``methods`` too, besides its ``result_methods`` (see ``Session.want_results``)."""
        if not any(ext is extension for ext in self._results):
            raise ValueError(f"{extension!r} is not an extension of this client with a result hook")
        with self._lock:
            wanted = self._wanted.get(id(extension), frozenset())
            if wanted.issuperset(methods):
                return
            self._wanted[id(extension)] = wanted | frozenset(methods)
            self._results_by_method = {}  # a new table: a reader holding the old one sees it whole
            self.tool_results = self.results_for("tools/call")


    def run(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the seam's small pool (made on first use), logging what it raises."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mcpclient-extension")
            pool = self._pool
        pool.submit(_logged, work)

    def on_close(self, fn: Callable[[], None]) -> None:
        with self._lock:
            self._closers.append(fn)

    def close(self) -> None:
        """Run the closers and every extension's ``close``; nothing they raise gets out."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            closers, self._closers = self._closers, []
            pool, self._pool = self._pool, None
        for fn in closers:
            _logged(fn)
        for ext in self.extensions:
            _logged(ext.close)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _extensions(extensions: Iterable[Extension]) -> tuple[Extension, ...]:
    """``extensions`` as a tuple; ``TypeError`` for one that is not an ``Extension``."""
    checked = tuple(extensions)
    for ext in checked:
        if not isinstance(ext, Extension):
            raise TypeError(f"extensions must be mcpclient.extensions.Extension instances, got {ext!r}")
    return checked


def _chain(
    what: str, first: Sequence[Middleware], extensions: Sequence[Extension],
    brought: Callable[[Extension], Sequence[Middleware]],
) -> tuple[Middleware, ...]:
    """``first``, then what each extension brings (``brought(ext)``), each of which must be
    callable as ``mw(message, next)`` (``TypeError``)."""
    chain = (*first, *(mw for ext in extensions for mw in brought(ext)))
    for mw in chain:
        if not callable(mw):
            raise TypeError(f"{what} must be callable as mw(message, next), got {mw!r}")
    return chain


def _middleware(ext: Extension) -> Sequence[Middleware]:
    return ext.middleware()


def _call_middleware(ext: Extension) -> Sequence[Middleware]:
    return ext.call_middleware()


def _idle_test(extensions: Sequence[Extension], users: Sequence[Middleware]) -> Callable[[], bool]:
    """Whether the next call may skip every middleware: each extension that brings some says it
    is idle (each overrides ``Extension.idle``), and the user gave none (``users``)."""
    bringing = tuple(ext for ext in extensions if ext.middleware() or ext.call_middleware())
    if users or any(type(ext).idle is Extension.idle for ext in bringing):
        return _never
    if not bringing:
        return _always
    return bringing[0].idle if len(bringing) == 1 else functools.partial(_all_idle, bringing)


def through(hooks: Sequence[Callable[[Call, Any], Any]], call: Call, value: Any) -> Any:
    """``value`` through ``hooks`` in order (what ``Seam.results_for(call.method)`` gave)."""
    for hook in hooks:
        value = hook(call, value)
    return value


def _never() -> bool:
    return False


def _always() -> bool:
    return True


def _all_idle(idlers: tuple[Extension, ...]) -> bool:
    for ext in idlers:
        if not ext.idle():
            return False
    return True


def _logged(fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception:
        log.exception("an extension's work raised")
