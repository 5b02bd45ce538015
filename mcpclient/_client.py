"""The blocking MCP client."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Hashable, Mapping, Sequence, TypeVar

from . import types as t
from ._cache import ResultCache, freshness
from ._eras import modern
from ._exceptions import CapabilityError, ClientClosedError, MCPError, ProtocolError, RPCError
from ._handlers import Handlers
from ._logging import LOG_LEVELS, LogRouter
from ._rpc.cancel import CancelToken
from ._rpc.engine import Engine, ProgressCallback
from ._session import LEGACY, MODERN, Session
from ._structured import OutputValidator
from ._subscriptions import Listener
from ._wire import structure, structure_list, unstructure
from .transports.base import Transport

__all__ = ["DEFAULT", "DEFAULT_TIMEOUT", "Client"]

log = logging.getLogger("mcpclient")

T = TypeVar("T")
Cancel = "CancelToken | threading.Event | None"

#: The timeout of every call unless the client or the call says otherwise, in seconds.
DEFAULT_TIMEOUT = 60.0
#: A server that keeps paginating past this many pages is treated as broken.
MAX_PAGES = 10_000
#: How long a legacy list result is cached (with cache=True) when the server announces changes.
LEGACY_CACHE_TTL = 3600.0


class _Default:
    def __repr__(self) -> str:
        return "<default>"


#: "Not given": use the client's timeout. (None means "no limit".)
DEFAULT: Any = _Default()

_UNOPENED, _OPEN, _CLOSED = "unopened", "open", "closed"

_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class Client:
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
        self.transport = transport
        self.timeout = timeout
        self.client_info = client_info or t.Implementation(name="mcpclient", version=_version())
        self._handlers = Handlers()
        self._state = _UNOPENED
        self._state_lock = threading.Lock()
        self._logs = LogRouter()
        self._resource_updated: Callable[[str], None] | None = None
        self._list_changed: Callable[[str], None] | None = None
        self._subscribed: set[str] = set()
        self._cache = ResultCache() if cache else None
        self._outputs = OutputValidator(output_validation)
        self._engine = Engine(
            transport,
            on_request=self._handlers.handle,
            on_notification=self._on_notification,
            max_dispatch=max_dispatch,
        )
        server_key: Hashable | None = getattr(transport, "server_key", None)
        self._session = Session(self._engine, self._handlers, self.client_info, protocol, server_key)
        self._listener = Listener(self._session)
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
            if self._state == _OPEN:
                return
            if self._state == _CLOSED:
                raise ClientClosedError()
            self._session.open(self._timeout(timeout))
            self._state = _OPEN
        if self._session.era == MODERN:
            self._update_listener()

    def close(self) -> None:
        """Close the client: idempotent, always returns within a few seconds.

        Pending calls fail with ``ClientClosedError``, running handlers see their CancelToken
        cancelled and get a short grace, and the transport is closed (a stdio server is asked
        to exit, then terminated).
        """
        self._state = _CLOSED
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

    def set_notification_handler(self, handler: Callable[[str, dict], None] | None) -> None:
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
        if self._state == _OPEN and self._session.era == LEGACY and self._handlers.roots is not None:
            try:
                self._session.notify("notifications/roots/list_changed", None, self._timeout(DEFAULT))
            except MCPError as exc:
                log.warning("could not tell the server that the roots changed: %s", exc)

    def _warn_if_late(self, what: str) -> None:
        if self._state == _OPEN and self._session.era == LEGACY:
            log.warning("%s set after initialize(): the server was not told this client supports it", what)

    # -- logging and change notifications ---------------------------------------------------

    def set_log_level(self, level: str, *, timeout: float | None = DEFAULT) -> None:
        """Ask the server for log messages at ``level`` and above ("debug" ... "emergency").

        Legacy servers get ``logging/setLevel``; modern ones get the level in every request's
        ``_meta``. Messages go to the ``mcpclient.server`` logger unless ``set_log_handler``
        installed a callback.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"level must be one of {LOG_LEVELS}, got {level!r}")
        if self._session.era == MODERN:
            self._session.log_level = level
            return
        self._require("logging", "logging/setLevel")
        self._call("logging/setLevel", {"level": level}, timeout)

    def set_log_handler(self, handler: Callable[[str, Any, str | None], None] | None) -> None:
        """Send server log messages to ``handler(level, data, logger)`` instead of logging."""
        self._logs.handler = handler

    def set_resource_updated_handler(self, handler: Callable[[str], None] | None) -> None:
        """Call ``handler(uri)`` when a subscribed resource changes."""
        self._resource_updated = handler

    def set_list_changed_handler(self, handler: Callable[[str], None] | None) -> None:
        """Call ``handler(kind)`` ("tools", "prompts" or "resources") when a list changes."""
        self._list_changed = handler
        self._update_listener()

    def subscribe_resource(self, uri: str, *, timeout: float | None = DEFAULT) -> None:
        """Get ``resources/updated`` notifications for ``uri`` (see set_resource_updated_handler)."""
        self._require_open()
        if self._session.era == LEGACY:
            self._require_subscribe()
            self._call("resources/subscribe", {"uri": uri}, timeout)
        self._subscribed.add(uri)
        self._update_listener()

    def unsubscribe_resource(self, uri: str, *, timeout: float | None = DEFAULT) -> None:
        """Stop notifications for ``uri``."""
        self._require_open()
        if self._session.era == LEGACY:
            self._require_subscribe()
            self._call("resources/unsubscribe", {"uri": uri}, timeout)
        self._subscribed.discard(uri)
        self._update_listener()

    def _require_subscribe(self) -> None:
        resources = self.server_capabilities.get("resources")
        if not (isinstance(resources, dict) and resources.get("subscribe")):
            raise CapabilityError("resources.subscribe", "resources/subscribe")

    def _update_listener(self) -> None:
        if self._state != _OPEN or self._session.era != MODERN:
            return
        caps = self.server_capabilities
        wants_lists = self._list_changed is not None or self._cache is not None
        self._listener.update(
            toolsListChanged=wants_lists and "tools" in caps,
            promptsListChanged=wants_lists and "prompts" in caps,
            resourcesListChanged=wants_lists and "resources" in caps,
            resourceSubscriptions=sorted(self._subscribed),
        )

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message":
            self._logs.route(params, self.server_info)
        elif method in _LIST_CHANGED:
            kind = _LIST_CHANGED[method]
            if self._cache is not None:
                self._cache.drop(kind)
            if self._list_changed is not None:
                self._list_changed(kind)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                if self._cache is not None:
                    self._cache.drop("read", uri)
                if self._resource_updated is not None:
                    self._resource_updated(uri)
        handler = self._handlers.notification
        if handler is not None:
            handler(method, params)

    # -- calls ------------------------------------------------------------------------------

    def _timeout(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is DEFAULT else timeout

    def _require_open(self) -> None:
        if self._state != _OPEN:
            if self._state == _CLOSED:
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
        if self._state == _OPEN and capability not in self.server_capabilities:
            raise CapabilityError(capability, method)

    def _paginate(
        self, method: str, key: str, cls: type[T], timeout: float | None, capability: str, cancel: Any = None
    ) -> list[T]:
        self._require(capability, method)
        cached = self._cache.get((capability,)) if self._cache is not None else None
        if cached is not None:
            return list(cached)
        pages: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        deadline = _Deadline(self._timeout(timeout))
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            result = self._call(method, params, deadline.remaining(), cancel=cancel)
            pages.append(result)
            cursor = result.get("nextCursor")
            if cursor is None or cursor == "":
                break
            if not isinstance(cursor, str) or cursor in seen:
                raise ProtocolError(f"the server repeated the {method!r} cursor {cursor!r}; stopping")
            seen.add(cursor)
        else:
            raise ProtocolError(f"the server paginated {method!r} past {MAX_PAGES} pages; stopping")
        items: list[T] = []
        for page in pages:
            items.extend(structure_list(page.get(key, []), cls))
        if self._cache is not None:
            self._store(capability, (capability,), pages, items)
        return items

    def _store(self, capability: str, key: tuple[Any, ...], pages: list[dict[str, Any]], value: Any) -> None:
        assert self._cache is not None
        caps = self.server_capabilities.get(capability)
        announces = isinstance(caps, dict) and bool(caps.get("listChanged") or caps.get("subscribe"))
        ttl, private = freshness(pages, LEGACY_CACHE_TTL if announces else None)
        if private:
            key = key + (getattr(self.transport, "credential_key", None),)
            if key[-1] is None:
                return  # no way to tell identities apart: do not keep private data
        self._cache.put(key, value, ttl)

    def ping(self, *, timeout: float | None = DEFAULT) -> None:
        """Check that the server answers (``ping``; ``server/discover`` in the modern era)."""
        self._call("server/discover" if self._session.era == MODERN else "ping", None, timeout)

    def list_tools(self, *, timeout: float | None = DEFAULT) -> list[t.ToolDef]:
        """Every tool the server offers, following pagination to the end."""
        tools = self._paginate("tools/list", "tools", t.ToolDef, timeout, "tools")
        note_tools = getattr(self.transport, "note_tools", None)
        if note_tools is not None:
            tools = note_tools(tools)  # the transport may drop tools it cannot call
        self._outputs.learn(tools)
        return tools

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        max_total: float | None = None,
        cancel: CancelToken | threading.Event | None = None,
    ) -> t.ToolResult:
        """Run a tool and return its ``ToolResult``.

        ``arguments`` is a JSON-able mapping (None sends ``{}``). A tool that fails reports
        ``is_error=True`` in the result rather than raising; call ``result.raise_for_error()``
        to raise ``ToolError`` instead.

        ``on_progress(progress, total, message)`` receives the server's progress reports; each
        one renews ``timeout`` (an idle timeout), while ``max_total`` caps the whole call.
        ``cancel`` (a ``CancelToken`` or ``threading.Event``) cancels the call from another
        thread: the server is told, and this call raises ``RequestCancelled``.
        """
        self._require("tools", "tools/call")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise TypeError(f"arguments must be a mapping, got {type(arguments).__name__}")
        params = {"name": name, "arguments": dict(arguments) if arguments else {}}
        options = dict(on_progress=on_progress, max_total=max_total, cancel=cancel)
        try:
            result = self._call("tools/call", params, timeout, **options)
        except RPCError as exc:
            if exc.code != modern.HEADER_MISMATCH:
                raise
            log.info("the server rejected the tool headers; refreshing the tool list and retrying once")
            self.list_tools(timeout=timeout)
            result = self._call("tools/call", params, timeout, **options)
        return self._outputs.check(name, structure(result, t.ToolResult))

    def list_resources(self, *, timeout: float | None = DEFAULT) -> list[t.Resource]:
        """Every resource the server lists, following pagination to the end."""
        return self._paginate("resources/list", "resources", t.Resource, timeout, "resources")

    def list_resource_templates(self, *, timeout: float | None = DEFAULT) -> list[t.ResourceTemplate]:
        """Every resource template, following pagination to the end."""
        return self._paginate(
            "resources/templates/list", "resourceTemplates", t.ResourceTemplate, timeout, "resources"
        )

    def read_resource(
        self,
        uri: str,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        cancel: CancelToken | threading.Event | None = None,
    ) -> list[t.ResourceContents]:
        """Read a resource: each entry has ``text`` or decoded ``blob`` bytes.

        Raises ``ResourceNotFound`` (an ``RPCError``) when the server has no such resource.
        """
        self._require("resources", "resources/read")
        key = ("read", uri)
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is not None:
            return list(cached)
        try:
            result = self._call("resources/read", {"uri": uri}, timeout, on_progress=on_progress, cancel=cancel)
        except RPCError as exc:
            raise _not_found(exc, uri) from None
        contents = structure_list(result.get("contents", []), t.ResourceContents)
        if self._cache is not None:
            self._store("resources", key, [result], contents)
        return contents

    def list_prompts(self, *, timeout: float | None = DEFAULT) -> list[t.Prompt]:
        """Every prompt the server offers, following pagination to the end."""
        return self._paginate("prompts/list", "prompts", t.Prompt, timeout, "prompts")

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        cancel: CancelToken | threading.Event | None = None,
    ) -> tuple[str | None, list[t.PromptMessage]]:
        """Render a prompt: return its description and messages."""
        self._require("prompts", "prompts/get")
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        result = self._call("prompts/get", params, timeout, on_progress=on_progress, cancel=cancel)
        messages = structure_list(result.get("messages", []), t.PromptMessage)
        description = result.get("description")
        return (description if isinstance(description, str) else None), messages

    def complete(
        self,
        ref: t.CompletionRef,
        arg_name: str,
        arg_value: str,
        *,
        context: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT,
    ) -> t.Completion:
        """Ask for completions of one argument of a prompt or resource template.

        ``context`` gives the values of arguments already filled in.
        """
        self._require("completions", "completion/complete")
        params: dict[str, Any] = {
            "ref": unstructure(ref),
            "argument": {"name": arg_name, "value": arg_value},
        }
        if context:
            params["context"] = {"arguments": dict(context)}
        result = self._call("completion/complete", params, timeout)
        completion = result.get("completion")
        if not isinstance(completion, dict):
            raise ProtocolError(f"the server's completion result has no completion object: {result!r:.200}")
        return structure(completion, t.Completion)


def _not_found(exc: RPCError, uri: str) -> RPCError:
    from ._exceptions import ResourceNotFound

    data = exc.data if isinstance(exc.data, dict) else {}
    if exc.code == RPCError.RESOURCE_NOT_FOUND or (exc.code == RPCError.INVALID_PARAMS and data.get("uri") == uri):
        return ResourceNotFound(exc.code, exc.message, exc.data, method=exc.method, request_id=exc.request_id)
    return exc


class _Deadline:
    """One time budget spread over several requests (the pages of a list)."""

    __slots__ = ("_end",)

    def __init__(self, timeout: float | None) -> None:
        self._end = None if timeout is None else time.monotonic() + timeout

    def remaining(self) -> float | None:
        return None if self._end is None else max(0.0, self._end - time.monotonic())


def _version() -> str:
    from . import __version__

    return __version__
