"""The blocking MCP client."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Mapping, Sequence, TypeVar

from . import types as t
from ._eras import legacy
from ._exceptions import CapabilityError, ClientClosedError, MCPError, ProtocolError
from ._handlers import Handlers
from ._rpc.engine import Engine
from ._wire import structure, structure_list, unstructure
from .transports.base import Transport

__all__ = ["Client", "DEFAULT_TIMEOUT"]

log = logging.getLogger("mcpclient")

T = TypeVar("T")

#: The timeout of every call unless the client or the call says otherwise, in seconds.
DEFAULT_TIMEOUT = 60.0
#: A server that keeps paginating past this many pages is treated as broken.
MAX_PAGES = 10_000


class _Default:
    def __repr__(self) -> str:
        return "<default>"


#: "Not given": use the client's timeout. (None means "no limit".)
DEFAULT: Any = _Default()

_UNOPENED, _OPEN, _CLOSED = "unopened", "open", "closed"


class Client:
    """A blocking MCP client over one ``Transport``; safe to share between threads.

    Create it with a transport, then call ``initialize()`` (or use it as a context manager,
    which initializes on enter and closes on exit). A daemon reader thread pairs replies with
    calls; server requests and notifications run on a bounded pool of ``max_dispatch``
    threads, so a slow handler never delays replies.

    ``timeout`` (seconds) bounds every call that does not give its own; ``None`` means no
    limit. A call that times out raises ``RequestTimeout`` and the server is told to cancel.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        client_info: t.Implementation | None = None,
        max_dispatch: int = 16,
    ) -> None:
        self.transport = transport
        self.timeout = timeout
        self.client_info = client_info or t.Implementation(name="mcpclient", version=_version())
        self._handlers = Handlers()
        self._state = _UNOPENED
        self._state_lock = threading.Lock()
        self._handshake: legacy.HandshakeResult | None = None
        self._engine = Engine(
            transport,
            on_request=self._handlers.handle,
            on_notification=self._on_notification,
            max_dispatch=max_dispatch,
        )
        self._engine.start()

    # -- life cycle -------------------------------------------------------------------------

    def initialize(self, *, timeout: float | None = DEFAULT) -> None:
        """Perform the MCP handshake; a no-op once done.

        Sends ``initialize`` with the newest protocol version mcpclient speaks, accepts any
        version it supports, then sends ``notifications/initialized``. The client capabilities
        declared are those backed by the handlers and roots set so far.

        Raises ``ProtocolError`` if the server picks a version mcpclient does not speak,
        ``RequestTimeout``, ``RPCError``, ``ConnectionClosed`` or ``ClientClosedError``.
        """
        with self._state_lock:
            if self._state == _OPEN:
                return
            if self._state == _CLOSED:
                raise ClientClosedError()
            params = legacy.initialize_params(self.client_info, self._handlers.capabilities())
            result = self._engine.request(
                "initialize", params, timeout=self._timeout(timeout), cancel_on_timeout=False
            )
            self._handshake = legacy.read_initialize_result(result)
            self._engine.notify("notifications/initialized", timeout=self._timeout(timeout))
            self._state = _OPEN

    def close(self) -> None:
        """Close the client: idempotent, always returns within a few seconds.

        Pending calls fail with ``ClientClosedError``, running handlers see their CancelToken
        cancelled and get a short grace, and the transport is closed (a stdio server is asked
        to exit, then terminated).
        """
        self._state = _CLOSED
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
        """The negotiated protocol version; "" until ``initialize()`` succeeded."""
        return self._handshake.protocol_version if self._handshake else ""

    @property
    def server_info(self) -> t.Implementation | None:
        return self._handshake.server_info if self._handshake else None

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self._handshake.capabilities if self._handshake else {}

    @property
    def instructions(self) -> str | None:
        return self._handshake.instructions if self._handshake else None

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
        tells the server with ``notifications/roots/list_changed``.
        """
        self._handlers.set_roots(roots)
        if self._state == _OPEN and "roots" in self._declared_capabilities():
            try:
                self._engine.notify("notifications/roots/list_changed", timeout=self._timeout(DEFAULT))
            except MCPError as exc:
                log.warning("could not tell the server that the roots changed: %s", exc)

    def _declared_capabilities(self) -> dict[str, Any]:
        return self._handlers.capabilities()

    def _warn_if_late(self, what: str) -> None:
        if self._state == _OPEN:
            log.warning("%s set after initialize(): the server was not told this client supports it", what)

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        handler = self._handlers.notification
        if handler is not None:
            handler(method, params)

    # -- calls ------------------------------------------------------------------------------

    def _timeout(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is DEFAULT else timeout

    def _request(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> dict[str, Any]:
        if self._state != _OPEN:
            if self._state == _CLOSED:
                raise ClientClosedError()
            raise MCPError(f"call initialize() before {method!r} (or use the client in a with block)")
        return self._engine.request(method, params, timeout=self._timeout(timeout))

    def _require(self, capability: str, method: str) -> None:
        if self._state == _OPEN and capability not in self.server_capabilities:
            raise CapabilityError(capability, method)

    def _paginate(
        self, method: str, key: str, cls: type[T], timeout: float | None, capability: str
    ) -> list[T]:
        self._require(capability, method)
        items: list[T] = []
        cursor: str | None = None
        seen: set[str] = set()
        deadline = _Deadline(self._timeout(timeout))
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            result = self._request(method, params, deadline.remaining())
            items.extend(structure_list(result.get(key, []), cls))
            cursor = result.get("nextCursor")
            if cursor is None or cursor == "":
                return items
            if not isinstance(cursor, str) or cursor in seen:
                raise ProtocolError(f"the server repeated the {method!r} cursor {cursor!r}; stopping")
            seen.add(cursor)
        raise ProtocolError(f"the server paginated {method!r} past {MAX_PAGES} pages; stopping")

    def ping(self, *, timeout: float | None = DEFAULT) -> None:
        """Check that the server answers."""
        self._request("ping", None, timeout)

    def list_tools(self, *, timeout: float | None = DEFAULT) -> list[t.ToolDef]:
        """Every tool the server offers, following pagination to the end."""
        return self._paginate("tools/list", "tools", t.ToolDef, timeout, "tools")

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = DEFAULT
    ) -> t.ToolResult:
        """Run a tool and return its ``ToolResult``.

        ``arguments`` is a JSON-able mapping (None sends ``{}``). A tool that fails reports
        ``is_error=True`` in the result rather than raising; call ``result.raise_for_error()``
        to raise ``ToolError`` instead.
        """
        self._require("tools", "tools/call")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise TypeError(f"arguments must be a mapping, got {type(arguments).__name__}")
        params = {"name": name, "arguments": dict(arguments) if arguments else {}}
        return structure(self._request("tools/call", params, timeout), t.ToolResult)

    def list_resources(self, *, timeout: float | None = DEFAULT) -> list[t.Resource]:
        """Every resource the server lists, following pagination to the end."""
        return self._paginate("resources/list", "resources", t.Resource, timeout, "resources")

    def list_resource_templates(self, *, timeout: float | None = DEFAULT) -> list[t.ResourceTemplate]:
        """Every resource template, following pagination to the end."""
        return self._paginate(
            "resources/templates/list", "resourceTemplates", t.ResourceTemplate, timeout, "resources"
        )

    def read_resource(self, uri: str, *, timeout: float | None = DEFAULT) -> list[t.ResourceContents]:
        """Read a resource: each entry has ``text`` or decoded ``blob`` bytes."""
        self._require("resources", "resources/read")
        result = self._request("resources/read", {"uri": uri}, timeout)
        return structure_list(result.get("contents", []), t.ResourceContents)

    def list_prompts(self, *, timeout: float | None = DEFAULT) -> list[t.Prompt]:
        """Every prompt the server offers, following pagination to the end."""
        return self._paginate("prompts/list", "prompts", t.Prompt, timeout, "prompts")

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = DEFAULT,
    ) -> tuple[str | None, list[t.PromptMessage]]:
        """Render a prompt: return its description and messages."""
        self._require("prompts", "prompts/get")
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        result = self._request("prompts/get", params, timeout)
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
        result = self._request("completion/complete", params, timeout)
        completion = result.get("completion")
        if not isinstance(completion, dict):
            raise ProtocolError(f"the server's completion result has no completion object: {result!r:.200}")
        return structure(completion, t.Completion)


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
