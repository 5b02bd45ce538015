"""What the session tells an observer about each call, and the choice of whether to observe.

The Conversation (client requests and notifications) and the engine's dispatch of server
requests call an ``Observer`` when there is one. There is one only when telemetry is on
(``Client(telemetry=...)``); otherwise the session holds ``None`` and a call costs one
``is None`` test. With telemetry on and nothing installed to record or propagate (the
OpenTelemetry API alone), ``Observer.idle`` says so and the call skips the observer too. This module imports nothing optional: the OpenTelemetry observer lives in
``_otel`` and is imported by ``make_observer`` the first time a client asks for it.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any, Callable, ContextManager, Protocol, Union

import attrs

from .transports.base import Transport

__all__ = ["Observation", "Observer", "Telemetry", "TelemetryOption", "make_observer"]


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


#: ``Client(telemetry=...)``: "auto" (on when ``opentelemetry-api`` is installed), True,
#: False, or a ``Telemetry``.
TelemetryOption = Union[str, bool, Telemetry]


class Observation(Protocol):
    """One call being observed: a client request or notification, or a server request."""

    def inject(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` with the trace context added to its ``_meta`` (a copy; the user's keys kept)."""

    def sent(self, request_id: Any) -> None:
        """The engine gave the request this id."""

    def event(self, name: str, attributes: dict[str, Any]) -> None:
        """Something worth seeing in the trace happened (progress, a retry, an input round)."""

    def finished(self, result: dict[str, Any]) -> None:
        """The call returned ``result`` (a tool's ``isError`` is judged here)."""


class Observer(Protocol):
    def idle(self) -> bool:
        """Whether a client call observed now would record and send nothing (then it is not)."""

    def client_call(self, method: str, params: dict[str, Any] | None, version: str) -> ContextManager[Observation]:
        """Observe one client request or notification; an exception leaving the block is its failure."""

    def server_call(self, method: str, params: dict[str, Any]) -> ContextManager[Observation]:
        """Observe one request the server sent, answered inside the block."""

    def session_started(self, version: str) -> None: ...

    def session_ended(self, error: BaseException | None) -> None: ...


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


def make_observer(option: TelemetryOption, transport: Transport) -> Observer | None:
    """The observer ``option`` asks for, or None (telemetry off, or "auto" without the API)."""
    if option is False or (option == "auto" and not _api_installed()):
        return None
    if option is True or option == "auto":
        config = Telemetry()
    elif isinstance(option, Telemetry):
        config = option
    else:
        raise ValueError(f"telemetry must be 'auto', True, False or a Telemetry, got {option!r}")
    try:
        from ._otel import OTelObserver
    except ImportError as exc:  # asked for explicitly without the extra installed
        raise ImportError("telemetry needs opentelemetry-api: pip install 'mcpclient[otel]'") from exc
    return OTelObserver(config, transport)


def wrap_handler(observer: Observer | None, handle: Callable[[str, dict[str, Any], Any], Any]) -> Callable[[str, dict[str, Any], Any], Any]:
    """The engine's server-request handler, observed when there is an observer."""
    if observer is None:
        return handle

    def observed(method: str, params: dict[str, Any], token: Any) -> Any:
        with observer.server_call(method, params) as seen:
            result = handle(method, params, token)
            if isinstance(result, dict):
                seen.finished(result)
            return result

    return observed
