"""The public seam: middleware around every message, and extensions that plug into a Client.

Two ways in, both given to the ``Client``::

    Client(transport, middleware=[log_calls], extensions=[MyVendorExtension()])

**Middleware** is a plain function ``mw(message, next)`` around one ``Message``: it returns
what ``next(message)`` returns (the result dict of a request, None for a notification),
possibly changed, or raises to refuse the message. The same shape serves both directions:

- ``"send"``: every request and notification the client sends (the built-in calls, the
  opening's ``initialize``/``server/discover``, ``Client.request``/``notify``, an
  extension's own requests). It runs on the caller's thread; each input-required round and
  each re-send after a broken reply stream is a message of its own. Refuse with an
  ``MCPError`` subclass: the caller gets it.
- ``"receive"``: every request and notification the server sends, the requests inside a
  2026-07-28 input-required round too. It runs on a dispatch thread, never the reader thread
  (an input round's requests: on the thread of the call that got them). Raising ``RPCError`` from a request's middleware makes
  the error reply; a notification's middleware that raises only drops that notification
  (with a log line).

Progress notices and replies are not messages: progress goes to the call's ``on_progress``,
a reply to its caller. ``Client(middleware=[a, b])`` makes ``a`` the outermost in both
directions (it sees the message first and the result last); extensions' middleware sits
inside the user's list, in extension order. The era's ``_meta`` keys and the engine's
``progressToken`` are added inside the innermost middleware, so no middleware can override
them. Middleware must be thread-safe: calls from many threads run it at once. A client with
no middleware builds no chain at all.

An **Extension** (subclass ``Extension``, override what you need) declares what it advertises
(``identifier`` and ``settings`` under ``capabilities.extensions``, other ``capabilities``),
brings middleware, handles custom notifications and server requests, and hears of the
connection's life (``bind``, ``opened``, ``close``) and of each typed result (``result``).
It talks to the server through the ``Session`` it is given, never through the Client.
See docs/extending.md.
"""

from __future__ import annotations

import abc
import threading
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Collection, Iterator, Literal, Mapping, Sequence, TypeVar

import attrs

from ._core.cancel import CancelToken
from ._core.credentials import Credentials
from ._core.exceptions import ProtocolError, RPCError
from ._core.options import ProgressCallback
from ._core.retry import Retry
from ._core.timeouts import DEFAULT_TIMEOUT
from ._core.waiting import Job, Lifetime, Signal, Until, WaitLock
from ._protocol.eras.modern import PROTOCOL_VERSION_KEY
from ._protocol.eras.named import era_named
from ._protocol.reads import resource_not_found, walk_pages
from ._protocol.wire import structure, structure_list

if TYPE_CHECKING:
    from ._protocol.eras.base import Era

__all__ = [
    "PROTOCOL_VERSION_KEY",
    "Call",
    "Extension",
    "Job",
    "Message",
    "Middleware",
    "Next",
    "NotificationHandler",
    "Options",
    "RequestHandler",
    "Session",
    "Signal",
    "Until",
    "WaitLock",
    "until_of",
]


M = TypeVar("M")


@attrs.frozen(kw_only=True)
class Options:
    """The options that travel with one message.

    For a ``"send"`` message: ``timeout`` is the round's timeout in seconds, already resolved
    (None: no limit), ``max_total`` caps what is left of the whole call, ``on_progress`` and
    ``cancel`` are the caller's, and ``meta`` holds extra ``_meta`` keys (the caller's
    ``meta=``, or what a middleware adds with ``Message.with_meta``); ``on_sent(request_id)``
    is told the JSON-RPC id of each request sent for it, before it is written. ``headers`` and
    ``resendable`` travel on down to the transport with the message (``Message.with_headers``):
    headers for this one message (an HTTP transport sends them with its POST; stdio has none),
    and whether it changes nothing on the server, so that a transport may send it again after
    an attempt that broke before any reply (the client sets it for the methods that change
    nothing and the tools annotated ``readOnlyHint``/``idempotentHint``). ``retry`` is the
    call's ``mcpclient.Retry`` (None: the client's), and ``attempt`` says which send of the
    round this message is: 1, then 2, 3... for each attempt the ``Retry`` makes (each a
    message of its own, with a new request id). ``on_input`` says who answers a 2026-07-28
    input round: "answer" (the client's handlers, within the call) or "return" (the round's
    result ends the call: ``call_tool(on_input="return")``). For a ``"receive"`` request,
    ``timeout`` is None and ``cancel`` is the handler's ``CancelToken``.
    """

    timeout: float | None = None
    max_total: float | None = None
    on_progress: ProgressCallback | None = None
    cancel: CancelToken | threading.Event | None = None
    meta: Mapping[str, Any] | None = None
    on_sent: Callable[[Any], None] | None = None
    headers: Mapping[str, str] | None = None
    resendable: bool = False
    retry: Retry | None = None
    attempt: int = 1
    on_input: str = "answer"


@attrs.frozen(kw_only=True)
class Message:
    """One JSON-RPC request or notification, as middleware sees it (immutable: ``replace``)."""

    direction: Literal["send", "receive"]
    kind: Literal["request", "notification"]
    method: str
    params: dict[str, Any] | None
    options: Options = Options()

    def replace(self, **changes: Any) -> Message:
        """A copy with ``changes`` (any field, ``options=`` too)."""
        return attrs.evolve(self, **changes)

    def with_meta(self, **keys: Any) -> Message:
        """A copy whose request carries ``keys`` in its ``_meta`` too (the era's keys still win)."""
        return attrs.evolve(self, options=attrs.evolve(self.options, meta={**(self.options.meta or {}), **keys}))

    def within(self, seconds: float | None) -> Message:
        """A copy whose request must end within ``seconds`` (its ``timeout`` and ``max_total``
        at most that; None: unchanged): what a middleware that waited passes on, so the request
        gets only what is left of the call's time (``Until.remaining()``)."""
        if seconds is None:
            return self
        options = self.options
        return attrs.evolve(self, options=attrs.evolve(
            options, timeout=seconds if options.timeout is None else min(options.timeout, seconds),
            max_total=seconds if options.max_total is None else min(options.max_total, seconds)))

    def with_headers(self, headers: Mapping[str, str]) -> Message:
        """A copy that carries ``headers`` down to the transport too (over those it had)."""
        return attrs.evolve(
            self, options=attrs.evolve(self.options, headers={**(self.options.headers or {}), **headers})
        )


#: What a middleware calls to pass a message on; returns the result (None for a notification).
Next = Callable[[Message], Any]
#: ``mw(message, next)``: see the module's docstring.
Middleware = Callable[[Message, Next], Any]
#: A custom notification's handler: ``fn(params)``, on a dispatch thread.
NotificationHandler = Callable[[dict[str, Any]], None]
#: A custom server request's handler: ``fn(params, cancel_token)`` returns the result dict
#: (None answers ``{}``), or raises ``RPCError`` for an error reply; on a dispatch thread.
RequestHandler = Callable[[dict[str, Any], CancelToken], Any]


@attrs.frozen(kw_only=True)
class Call:
    """The public call a typed result came from (what ``Extension.result`` is told).

    ``method`` is the MCP method (``tools/call``, ``resources/read``, ``prompts/get``,
    ``completion/complete``, or a custom one of ``Client.request``), ``params`` what the
    caller gave, ``name`` the tool or prompt name or the resource URI (None otherwise),
    ``arguments`` the tool or prompt arguments.
    """

    method: str
    params: Mapping[str, Any] | None = None
    name: str | None = None
    arguments: Mapping[str, Any] | None = None


def until_of(options: Options | None, ends: Sequence[Lifetime] = (), *, what: str = "the wait") -> Until:
    """The ``Until`` of a call made with ``options``: its time (the nearer of ``timeout`` and
    ``max_total``, counted from now; neither: no limit), its ``cancel``, and ``ends``.
    An extension asks its session instead (``Session.until``), which adds the connection's end."""
    if options is None:
        return Until(ends=ends, what=what)
    limits = [t for t in (options.timeout, options.max_total) if t is not None]
    return Until(min(limits) if limits else None, cancel=options.cancel, ends=ends, what=what)


#: What a session that knows no transport says the client sends (``Session.credentials``).
_UNKNOWN = Credentials.unknown("a session without a transport")


class Session(abc.ABC):
    """What an extension may ask of the connection it is bound to (not the Client).

    ``request`` and ``notify`` go through the client's middleware and the era's decoration,
    as any call does; ``options.timeout`` bounds the request (None: no limit).
    """

    @abc.abstractmethod
    def request(self, method: str, params: dict[str, Any] | None = None, *, options: Options) -> dict[str, Any]:
        """Send a request and return its result dict; raises what a client call raises."""

    @abc.abstractmethod
    def notify(self, method: str, params: dict[str, Any] | None = None, *, options: Options) -> None:
        """Send a notification."""

    @property
    @abc.abstractmethod
    def server_capabilities(self) -> Mapping[str, Any]:
        """The server's capabilities; empty until opened."""

    @property
    @abc.abstractmethod
    def server_info(self) -> Any:
        """The server's ``Implementation``, or None until opened."""

    @property
    @abc.abstractmethod
    def protocol_version(self) -> str:
        """The protocol version in use; "" until opened."""

    @property
    @abc.abstractmethod
    def era(self) -> str | None:
        """"legacy" or "modern" once opened; None before."""

    @property
    @abc.abstractmethod
    def is_open(self) -> bool:
        """Whether the client is open (initialized and not closed)."""

    @property
    def server_identity(self) -> str | None:
        """Names the server this session talks to, the same in every process (a stdio
        server's command, arguments, environment and directory as a digest; an HTTP
        server's origin and path, and a digest of its URL's query), with no credentials in it; None when the transport names
        none. For keys of what is kept about a server (``mcpclient.cache``)."""
        return None

    @property
    def server_directory(self) -> str | None:
        """The absolute directory the server resolves a relative path in, when the client
        knows it: a stdio server's working directory (the ``cwd`` it was started with, else
        the client's at that moment); None for a server elsewhere (HTTP), whose directory the
        client cannot know. For judging the paths a call sends (``mcpclient.policy.Under``)."""
        return None

    @property
    def credentials(self) -> Credentials:
        """Every credential the client sends, on every channel, and whom its results belong
        to (the transport's ``mcpclient.transports.Credentials``), read afresh: for what must
        keep one user's data from another (the result cache) or hide secrets from a text. A
        session that knows no transport cannot tell (``Credentials.unknown``)."""
        return _UNKNOWN

    @property
    def peer(self) -> Any:
        """What the transport shows of the server: its ``mcpclient.transports.base.Peer``
        (network, protocol, address, port, the MCP session id while there is one), read
        afresh each time; None when the session has no transport to ask."""
        return None

    @property
    def ended(self) -> BaseException | None:
        """Why the connection ended on its own (the server exited, a stream broke), once it
        has; None while it runs, and when the client closed it."""
        return None

    def until(self, options: Options | None = None, *, what: str = "the wait") -> Until:
        """The one way a plug-in waits: an ``Until`` (``mcpclient._core.waiting``) that ends
        at the earliest of the call's deadline (``options``' ``timeout`` or ``max_total``, the
        nearer, counted from now), its ``cancel``, the client's ``close()`` and the
        connection's death, raising ``RequestTimeout``, ``RequestCancelled``,
        ``ClientClosedError`` or ``ConnectionClosed``. No ``options``: only the connection's
        end bounds it (narrow it with ``.within(seconds)``). ``what`` names the wait in its
        errors. A middleware passes its message's options (``session.until(message.options)``);
        see docs/extending.md. A session that knows no connection gives the call's bounds only."""
        return until_of(options, what=what)

    @property
    def timeout(self) -> float | None:
        """The client's timeout of a call that gives none (``Client.timeout``, read afresh, so
        a change is seen), in seconds; None: no limit. A session that knows no client gives
        the library's default."""
        return DEFAULT_TIMEOUT

    def answer_inputs(
        self, requests: Mapping[str, Any], cancel: CancelToken | threading.Event | None = None, *,
        asker: str, advice: str = "",
    ) -> dict[str, Any]:
        """Answer a server's ``inputRequests`` (a map of key to server request: elicitation,
        sampling, roots, a custom method claimed with ``on_request``) with the client's
        handlers, through the receive middleware; the responses by key, for a request's
        ``inputResponses`` (the 2026 tasks extension's ``tasks/update``).

        ``cancel`` cancels the handlers' tokens; ``asker`` names what asked ("task 't-1'") and
        ``advice`` ends the error. Raises ``ProtocolError`` for a malformed request or one no
        handler can answer. A session that knows no client's handlers answers none.
        """
        raise ProtocolError(f"{asker} needs input from this client, which this session cannot give{advice}")

    def listen(self, key: str, value: Any) -> None:
        """Ask the server's ``subscriptions/listen`` stream (2026-07-28) for ``key: value`` in
        its ``notifications`` filter, beside the client's own keys (the list changes and
        resource subscriptions, which an extension may not set); an empty value withdraws it.
        The client holds the stream and reopens it with the new filter; the notifications it
        brings reach the extension's ``notification_handlers``. Nothing happens in the legacy
        era, whose servers need no stream. A session without a stream ignores it."""

    def listening(self, key: str) -> Any:
        """What the server acknowledged for ``key`` (``notifications/subscriptions/acknowledged``)
        on the stream open now: None until it has, while the stream is being reopened or is
        lost, in the legacy era, and for a key the server left out. Read it afresh: a
        stream that ends takes its acknowledgement with it."""
        return None

    # -- what a plug-in needs of the protocol, so that it imports none of it ------------------------

    def pages(self, method: str, params: dict[str, Any] | None = None, *, options: Options) -> Iterator[dict[str, Any]]:
        """Each page of the listing ``method`` (``tasks/list``, ``skills/list``...), first to
        last, as result dicts: ``options.timeout`` bounds the whole listing (not each page), and
        ``options.meta`` goes with every page's request. ``params`` go with every page too, the
        ``cursor`` added. Raises ``ProtocolError`` for a server that repeats a cursor or never
        stops, and what ``request`` raises."""

        def fetch(cursor: dict[str, Any] | None, left: float | None) -> dict[str, Any]:
            return self.request(method, {**(params or {}), **(cursor or {})} or None,
                                options=attrs.evolve(options, timeout=left))

        return walk_pages(method, options.timeout, fetch)

    def read_resource(self, uri: str, *, options: Options) -> dict[str, Any]:
        """``resources/read`` of ``uri``: the result dict. Raises ``ResourceNotFound`` (an
        ``RPCError``) when the server says it has no such resource, in each way servers say
        it, and what ``request`` raises."""
        try:
            return self.request("resources/read", {"uri": uri}, options=options)
        except RPCError as exc:
            raise resource_not_found(exc, uri) from None

    def structure(self, data: Any, kind: type[M]) -> M:
        """``data`` (a wire dict from a result) as the model ``kind`` of ``mcpclient.types``
        (``ToolResult``, ``ToolDef``, ``ResourceContents``...), as the client's own calls type
        their results; ``ProtocolError`` for data that does not fit."""
        return structure(data, kind)

    def structure_list(self, items: Any, kind: type[M]) -> list[M]:
        """``items`` (a list of wire dicts) as a list of the model ``kind``; see ``structure``."""
        return structure_list(items, kind)

    @property
    def era_rules(self) -> type[Era]:
        """The rules of this session's era that a plug-in reads (the task rules:
        ``require_tasks``, ``task_params``, ``task_state``, ``blocking_task_result``,
        ``tools_declare_task_support``), from the era's class by ``era``. ``MCPError`` before
        the session is open."""
        return era_named(self.era)

    def want_results(self, extension: Extension, methods: Collection[str]) -> None:
        """From the next call on, give ``extension``'s ``result`` hook the results of
        ``methods`` too, besides its ``result_methods``: for an extension that learns it needs
        them (output validation, once a listed tool declares an ``outputSchema``), so that
        until then a call of those methods builds nothing for it. ``ValueError`` for an
        extension that is not this client's or has no ``result`` hook. A session that knows
        no client ignores it."""

    @abc.abstractmethod
    def run(self, work: Callable[[], None]) -> None:
        """Run ``work`` on a worker thread of this client (never the caller's); errors are logged."""

    @abc.abstractmethod
    def on_close(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` when the client closes (before its connection ends)."""

    @abc.abstractmethod
    def abort(self, reason: str) -> None:
        """End the connection: pending and later calls fail with ``ConnectionClosed(reason)``.

        For an extension that finds the connection unusable (a keep-alive ping that failed);
        the Client stays open until closed, and its calls say why they cannot be made.
        """


class Extension:
    """Base class of an extension: every hook does nothing until overridden.

    ``identifier`` (a reverse-DNS name, SEP-2133) puts ``settings()`` under
    ``capabilities.extensions[identifier]`` in both eras; ``capabilities()`` adds other
    client capability keys it backs. Hooks run on the thread of whatever triggered them and
    must not raise (what ``close`` raises is logged and dropped).
    """

    identifier: str | None = None
    #: The methods whose results ``result`` is given (``"tools/call"``, ``"tools/list"``...);
    #: None: every call's. A client none of whose extensions takes a method's results builds
    #: nothing for that method's calls, so naming them keeps the other calls as cheap as
    #: with no extension.
    result_methods: ClassVar[Collection[str] | None] = None

    def settings(self) -> dict[str, Any]:
        """What is advertised under ``capabilities.extensions[identifier]``."""
        return {}

    def capabilities(self) -> dict[str, Any]:
        """Other client capability keys this extension backs (merged into the declared ones)."""
        return {}

    def middleware(self) -> Sequence[Middleware]:
        """Middleware of this extension, inside the user's (see the module's docstring)."""
        return ()

    def call_middleware(self) -> Sequence[Middleware]:
        """Middleware around a whole call rather than each of its messages.

        Same shape as ``middleware()``. For a request the client sends, the message is the
        call's first and ``next`` sends all of it (every input-required round, a re-send
        after a broken reply stream: each a message for ``middleware()``) and returns the
        final result; for anything else (a notification, a server request) it is the one
        message. It runs outside every ``middleware()``, the user's too, in extension
        order: for what times or traces a call as its caller sees it (the built-in
        telemetry). A client none of whose extensions has any builds no such chain.
        """
        return ()

    def notification_handlers(self) -> Mapping[str, NotificationHandler]:
        """Custom notifications this extension takes, by method."""
        return {}

    def request_handlers(self) -> Mapping[str, RequestHandler]:
        """Custom server requests this extension answers, by method."""
        return {}

    def idle(self) -> bool:
        """Whether this extension's middleware and call middleware would pass every message of
        the next call straight through (telemetry with nothing to record or propagate).

        Asked once per call, on the caller's thread, only of extensions that bring
        middleware; keep it cheap. When the client has no middleware of its own and every
        extension that brings any is idle, the call builds no chain at all (the fast path).
        """
        return False

    def wants_list_changes(self) -> bool:
        """Whether this extension needs the server's ``notifications/*/list_changed`` (its
        middleware sees them): the 2026-07-28 era sends them only to a listen stream that
        asks, which the Client then holds; the legacy era sends them anyway. Asked once."""
        return False

    def bind(self, session: Session) -> None:
        """Given the session once per connection (again after the client restarts a server)."""

    def opened(self, session: Session) -> None:
        """The handshake is done: the server's capabilities and era are known."""

    def result(self, call: Call, value: Any) -> Any:
        """The typed result of a public call (a ``ToolResult``...); return it, or a replacement.

        Unlike the other hooks it may raise an ``MCPError`` to fail the call with it (output
        validation's ``OutputValidationError``). Every whole tool list passes here too, the
        ones the client makes for a call of its own (``Call(method="tools/list")``). Only the
        methods of ``result_methods`` come here, when it is set.
        """
        return value

    def close(self) -> None:
        """The client is closing."""
