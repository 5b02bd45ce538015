"""OpenTelemetry as a built-in extension of the seam: ``Plugins(telemetry=...)`` adds one.

``TelemetryExtension`` reports every call with the OpenTelemetry observer (``otel.py``, which
is imported only when telemetry is on, so an installation without ``opentelemetry-api``
never imports OpenTelemetry):

- its **call middleware** (``Extension.call_middleware``) makes the CLIENT span of each
  request and notification the client sends, around the whole call (every input round, a
  re-send), puts the trace context in the request's ``_meta``, learns each round's request
  id (``Options.on_sent``) and makes each progress notice an event; for a request the
  server sends it makes the SERVER span, outside every middleware;
- its **middleware** adds each round's events to the call's span: an input-required round,
  each attempt after the first (``mcp.retry``: a ``Retry``'s, or the re-send after a broken
  reply stream, with its number and what ended the attempt before it);
- ``opened`` and ``close`` bound the session-duration metric; ``bind`` makes the observer of
  each connection (a restart gives a new one).

The extension sits first of the built-ins (``mcpclient.plugins`` registers its builder
before the others), and the call middleware runs outside every middleware anyway: a call's
span includes what the policy gate, the cache and the user's middleware do. With the API
installed and nothing configured to record or propagate (``OTelObserver.idle``), the
extension says it is ``idle`` and a call builds no chain for it at all.

With ``telemetry="auto"`` (the default) the extension waits to be needed: OpenTelemetry is not
imported, and no observer made, until the application has imported the API itself (a provider
can be installed, and a span or baggage be current, only then), so a process that never uses
OpenTelemetry pays for it neither at the first connect nor on any call.
"""

from __future__ import annotations

import contextvars
import importlib.util
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

import attrs

from .._core.exceptions import MCPError, RPCError
from ..extensions import Extension, Message, Middleware, Next, Session

if TYPE_CHECKING:
    from .otel import OTelObserver, _Seen

__all__ = ["Telemetry", "TelemetryExtension", "TelemetryOption", "telemetry_extensions"]


@attrs.frozen
class Telemetry:
    """How a Client reports its calls with OpenTelemetry (the ``otel`` extra).

    ``tracer_provider``, ``meter_provider`` and ``propagator`` default to OpenTelemetry's
    globals, so an application that configured the SDK needs nothing here.
    ``record_content`` adds tool arguments and results to tool-call spans
    (``gen_ai.tool.call.arguments``/``.result``): off by default, as they may hold secrets.
    """

    tracer_provider: Any = None
    meter_provider: Any = None
    propagator: Any = None
    record_content: bool = False


#: ``Plugins(telemetry=...)``: "auto" (on when ``opentelemetry-api`` is installed), True,
#: False, or a ``Telemetry``.
TelemetryOption = Union[str, bool, Telemetry]

#: The observed call running in this context, for the middleware's round events.
_current: contextvars.ContextVar[_Seen | None] = contextvars.ContextVar("mcpclient_telemetry_call", default=None)

_available: bool | None = None
_available_lock = threading.Lock()


def _api_installed() -> bool:
    """Whether ``opentelemetry-api`` can be imported; looked up once per process."""
    global _available
    with _available_lock:
        if _available is None:
            try:
                _available = importlib.util.find_spec("opentelemetry.trace") is not None
            except (ImportError, ValueError):
                _available = False
        return _available


def _config(option: Any) -> Telemetry | None:
    """The ``Telemetry`` that ``option`` asks for, or None (off, or "auto" without the API)."""
    if option is False or (option == "auto" and not _api_installed()):
        return None
    if option is True or option == "auto":
        return Telemetry()
    if isinstance(option, Telemetry):
        return option
    raise ValueError(f"telemetry must be 'auto', True, False or a Telemetry, got {option!r}")


#: The module whose presence says the application uses OpenTelemetry's API.
_API = "opentelemetry.trace"


class TelemetryExtension(Extension):
    """Spans, trace context and the two client metrics of one Client (see the module).

    ``dormant`` (what ``telemetry="auto"`` makes): no OpenTelemetry import and no observer
    until the application has imported the API; then the next call, server request or
    ``close()`` makes the observer, with the session's start as it was.
    """

    def __init__(self, config: Telemetry, *, dormant: bool = False) -> None:
        self.config = config
        self._otel: Any = None if dormant else _load_observer()
        self._session: Session | None = None
        self._opened: tuple[float, str] | None = None  # when the session opened, and its version
        self._lock = threading.Lock()
        #: The observer of the connection bound last (None before ``bind``, and while dormant).
        self.observer: OTelObserver | None = None

    def bind(self, session: Session) -> None:
        with self._lock:
            self._session = session
            self._opened = None
            self.observer = None
        if self._otel is not None or _API in sys.modules:
            self._observe_now()

    def opened(self, session: Session) -> None:
        with self._lock:
            self._opened = (time.monotonic(), session.protocol_version)
            observer = self.observer
        if observer is not None:
            observer.session_started(session.protocol_version)

    def close(self) -> None:
        observer = self._observer()
        if observer is not None:
            observer.session_ended(self._session.ended if self._session is not None else None)

    def idle(self) -> bool:
        """Nothing to record nor to propagate now (``OTelObserver.idle``): calls skip the
        middleware, as a client without telemetry does. Dormant, only the API's presence is
        looked at."""
        observer = self.observer
        if observer is None:
            if _API not in sys.modules:
                return True
            observer = self._observe_now()
        return observer is None or observer.idle()

    def _observer(self) -> OTelObserver | None:
        """The observer, made now if the application has taken OpenTelemetry up since."""
        observer = self.observer
        if observer is None and _API in sys.modules:
            observer = self._observe_now()
        return observer

    def _observe_now(self) -> OTelObserver | None:
        """Make the observer of the bound connection (once), importing OpenTelemetry."""
        with self._lock:
            session = self._session
            if self.observer is not None or session is None:
                return self.observer
            if self._otel is None:
                self._otel = _load_observer()
            config = self.config
            observer: OTelObserver = self._otel.OTelObserver(
                tracer_provider=config.tracer_provider, meter_provider=config.meter_provider,
                propagator=config.propagator, record_content=config.record_content, peer=lambda: session.peer,
            )
            if self._opened is not None:
                observer.session_started(self._opened[1], started=self._opened[0])
            self.observer = observer
            return observer

    def call_middleware(self) -> Sequence[Middleware]:
        return (self._observe,)

    def middleware(self) -> Sequence[Middleware]:
        return (self._rounds,)

    def _observe(self, message: Message, next_: Next) -> Any:
        observer = self._observer()
        if observer is None:
            return next_(message)
        if message.direction == "receive":
            return self._serve(observer, message, next_) if message.kind == "request" else next_(message)
        if observer.idle():
            return next_(message)
        session = self._session
        version = session.protocol_version if session is not None else ""
        with observer.client_call(message.method, message.params, version) as seen:
            options = message.options
            on_sent, on_progress = options.on_sent, options.on_progress
            changes: dict[str, Any] = {"on_sent": seen.sent if on_sent is None else _both(seen.sent, on_sent)}
            if on_progress is not None:
                changes["on_progress"] = _progress_events(seen, on_progress)
            params = message.params or {}
            injected = seen.inject(params)
            message = message.replace(
                params=injected if injected is not params else message.params, options=attrs.evolve(options, **changes),
            )
            token = _current.set(seen)
            try:
                result = next_(message)
            finally:
                _current.reset(token)
            if isinstance(result, dict):
                seen.finished(result)
            return result

    @staticmethod
    def _serve(observer: OTelObserver, message: Message, next_: Next) -> Any:
        with observer.server_call(message.method, message.params or {}) as seen:
            result = next_(message)
            if isinstance(result, dict):
                seen.finished(result)
            return result

    @staticmethod
    def _rounds(message: Message, next_: Next) -> Any:
        seen = _current.get()
        if seen is None or message.direction != "send" or message.kind != "request":
            return next_(message)
        attempt = message.options.attempt
        if attempt > 1:  # a Retry's attempt, or the re-send after a broken reply stream
            retried: dict[str, Any] = {"mcp.request.attempt": attempt}
            failed = seen.last_failure
            if failed is not None:  # what ended the attempt before it
                retried["error.type"] = str(failed.code) if isinstance(failed, RPCError) else type(failed).__qualname__
                retried["exception.message"] = str(failed)
            seen.event("mcp.retry", retried)
        try:
            result = next_(message)
        except MCPError as exc:
            seen.last_failure = exc
            raise
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            seen.event("mcp.input_required", _input_round(result.get("inputRequests")))
        return result


def _progress_events(seen: _Seen, on_progress: Any) -> Any:
    """The caller's progress callback, with each notice also an event on the call's span."""

    def observed(progress: float, total: float | None, message: str | None) -> None:
        attributes: dict[str, Any] = {"mcp.progress": progress}
        if total is not None:
            attributes["mcp.progress.total"] = total
        if message is not None:
            attributes["mcp.progress.message"] = message
        seen.event("mcp.progress", attributes)
        on_progress(progress, total, message)

    return observed


def _input_round(requests: Any) -> dict[str, Any]:
    """The attributes of an input-required round's event: which methods the server asked for."""
    if not isinstance(requests, dict):
        return {}
    methods = [r.get("method") for r in requests.values() if isinstance(r, dict)]
    return {"mcp.input_required.methods": [m for m in methods if isinstance(m, str)]}


def _both(first: Any, second: Any) -> Any:
    def both(request_id: Any) -> None:
        first(request_id)
        second(request_id)

    return both


def _load_observer() -> Any:
    """The observer's module, which imports OpenTelemetry."""
    try:
        from . import otel
    except ImportError as exc:  # asked for explicitly without the extra installed
        raise ImportError("telemetry needs opentelemetry-api: pip install 'mcpclient[otel]'") from exc
    return otel


def telemetry_extensions(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """``telemetry=`` ("auto", True, False or a ``Telemetry``): a ``TelemetryExtension`` when on,
    dormant for "auto" (see the module's docstring)."""
    option = options.get("telemetry", "auto")
    config = _config(option)
    return () if config is None else (TelemetryExtension(config, dormant=option == "auto"),)
