"""The OpenTelemetry observer: spans, trace context in ``_meta``, and the two client metrics.

Follows the OpenTelemetry semantic conventions for MCP (status Development; the revision is
named in docs/observability.md). Imported by the telemetry extension (``telemetry.py``) only
when a Client turns telemetry on, so an installation without ``opentelemetry-api`` never
reaches this module. It knows nothing of the Client nor of the seam: the extension tells it
each call, each server request and the session's start and end.

- A CLIENT span per request or notification the client sends, named ``{method} {target}``
  (the tool or prompt name), current while the call runs, so the trace context injected into
  ``params._meta`` (``traceparent``, ``tracestate``, ``baggage``, by the configured
  propagator) makes it the server span's parent.
- A SERVER span per request the server sends us (sampling, elicitation, roots, ping), whose
  parent is the context the server put in that request's ``_meta``.
- ``mcp.client.operation.duration`` per call and ``mcp.client.session.duration`` per session.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
import weakref
from typing import Any, Callable, Iterator

from opentelemetry import baggage, context, metrics, propagate, trace
from opentelemetry.metrics import Histogram
from opentelemetry.trace import Span, SpanKind, StatusCode

from .._core.exceptions import RequestTimeout, RPCError
from .._core.version import __version__
from ..transports.base import Peer

__all__ = ["OTelObserver", "network_attributes", "session_label"]

#: The bucket boundaries the conventions give for both duration histograms (seconds).
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
#: Methods whose ``uri`` parameter is the resource they are about.
RESOURCE_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
#: The span attributes that the operation-duration metric carries too (low cardinality).
METRIC_KEYS = frozenset({
    "mcp.method.name", "error.type", "gen_ai.tool.name", "gen_ai.prompt.name", "rpc.response.status_code",
    "gen_ai.operation.name", "mcp.protocol.version", "network.transport", "network.protocol.name",
    "server.address", "server.port",
})
# Whether a provider is installed, read cheaply (see OTelObserver.idle): OpenTelemetry's own
# globals, None until an application installs one. get_tracer_provider() and
# get_meter_provider() say it too, but each costs two environment look-ups that raise KeyError,
# on every call. Should a release rename these, no call is ever taken for idle.
try:
    from opentelemetry.metrics import _internal as _metrics_state
    from opentelemetry.metrics._internal import _ProxyMeterProvider

    _unset = (trace._TRACER_PROVIDER, _metrics_state._METER_PROVIDER)  # AttributeError if renamed
    _PROVIDER_GLOBALS = True
except (ImportError, AttributeError):
    _PROVIDER_GLOBALS = False
SESSION_KEYS = frozenset({
    "error.type", "mcp.protocol.version", "network.transport", "network.protocol.name", "server.address", "server.port",
})


# The two histograms, made once per meter provider (None: the global one) and shared by every
# client: the API's proxy meter provider keeps each meter it hands out, and each proxy meter
# each instrument made on it, so instruments made per client would grow the process forever.
_made: weakref.WeakKeyDictionary[Any, tuple[Histogram, Histogram]] = weakref.WeakKeyDictionary()
_made_global: tuple[Histogram, Histogram] | None = None
_made_lock = threading.Lock()


def _instruments(provider: metrics.MeterProvider | None) -> tuple[Histogram, Histogram]:
    """The operation- and session-duration histograms of ``provider``, made on first use."""
    global _made_global
    with _made_lock:
        try:
            made = _made_global if provider is None else _made.get(provider)
        except TypeError:  # a provider that cannot be weakly referenced: the caller keeps it
            return _make_instruments(provider)
        if made is None:
            made = _make_instruments(provider)
            if provider is None:
                _made_global = made
            else:
                _made[provider] = made
        return made


def _make_instruments(provider: metrics.MeterProvider | None) -> tuple[Histogram, Histogram]:
    meter = metrics.get_meter("mcpclient", __version__, meter_provider=provider)
    operations = meter.create_histogram(
        "mcp.client.operation.duration", unit="s",
        description="The duration of an MCP request or notification, from sending it to its answer.",
        explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
    )
    sessions = meter.create_histogram(
        "mcp.client.session.duration", unit="s",
        description="The duration of an MCP session, from its opening to its end.",
        explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
    )
    return operations, sessions


def network_attributes(peer: Peer | None) -> dict[str, Any]:
    """``network.transport``, ``network.protocol.name`` and ``server.address``/``server.port``,
    from what a transport shows of its peer (``About.peer``); a transport that shows
    nothing (a test double, a replay) gets none."""
    if peer is None:
        return {}
    found: dict[str, Any] = {}
    if peer.network is not None:
        found["network.transport"] = peer.network
    if peer.protocol is not None:
        found["network.protocol.name"] = peer.protocol
    if peer.address is not None:
        found["server.address"] = peer.address
        if peer.port is not None:
            found["server.port"] = peer.port
    return found


def session_label(session_id: str) -> str:
    """What a span says of an MCP session: a digest of its id, never the id. Whoever holds the
    id speaks in the session (``SessionState`` keeps it like a cookie), and spans go to
    collectors many people read; the digest still names one session in every span of it."""
    return "sha256:" + hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()[:32]


class OTelObserver:
    """The spans and metrics of one connection; ``peer()`` reads what its transport shows.

    The providers and propagator default to OpenTelemetry's globals (see ``Telemetry``).
    """

    def __init__(
        self, *, tracer_provider: Any, meter_provider: Any, propagator: Any, record_content: bool,
        peer: Callable[[], Peer | None],
    ) -> None:
        self._tracer = trace.get_tracer("mcpclient", __version__, tracer_provider=tracer_provider)
        self._operations, self._sessions = _instruments(meter_provider)
        self._propagator = propagator
        self.record_content = record_content
        self._peer = peer
        self._network = network_attributes(peer())
        self._lock = threading.Lock()
        self._session_start: float | None = None
        self._version = ""
        # Only OpenTelemetry's own proxies can be "nothing installed": a provider or propagator
        # given here, or installed before this client, always records or injects.
        self._may_idle = (
            _PROVIDER_GLOBALS
            and tracer_provider is None
            and meter_provider is None
            and propagator is None
            and isinstance(self._tracer, trace.ProxyTracer)
            and isinstance(metrics.get_meter_provider(), _ProxyMeterProvider)
        )

    def idle(self) -> bool:
        """Whether observing a client call now would record nothing and send nothing.

        True while no tracer provider and no meter provider is installed (OpenTelemetry's
        proxies stand in, whose spans and histograms are no-ops) and the current context has
        no valid span and no baggage (so the propagator has nothing to put in ``_meta``): the
        session then skips ``client_call``, about 100k instructions a call with
        ``opentelemetry-api`` installed and not configured. Asked per call, because the
        application may install its providers at any time; the proxies then delegate to them.
        """
        if not self._may_idle or trace._TRACER_PROVIDER is not None or _metrics_state._METER_PROVIDER is not None:
            return False
        current = context.get_current()
        if not current:  # nothing in the context at all: the usual case
            return True
        return not trace.get_current_span(current).get_span_context().is_valid and not baggage.get_all(current)

    def _session_id(self) -> str | None:
        """The MCP session id, while the transport has one (Streamable HTTP, legacy era)."""
        peer = self._peer()
        return peer.session_id if peer is not None else None

    def _inject(self, carrier: dict[str, Any]) -> None:
        (self._propagator or propagate.get_global_textmap()).inject(carrier)

    # -- client calls -----------------------------------------------------------------------

    def _attributes(self, method: str, version: str | None) -> dict[str, Any]:
        """What every span of this session carries: the method, the peer, the version, the session."""
        attributes: dict[str, Any] = {"mcp.method.name": method, **self._network}
        if version:
            attributes["mcp.protocol.version"] = version
        session = self._session_id()
        if session:
            attributes["mcp.session.id"] = session_label(session)
        return attributes

    @contextlib.contextmanager
    def _span(self, name: str, method: str, kind: SpanKind, attributes: dict[str, Any], *,
              parent: context.Context | None = None,
              ended: Callable[[_Seen], None] | None = None) -> Iterator[_Seen]:
        """A span with its outcome recorded by ``_Seen`` (an exception marks it failed), then
        ``ended(seen)`` once the outcome is known, whatever it was."""
        with self._tracer.start_as_current_span(
            name, context=parent, kind=kind, attributes=attributes,
            record_exception=False, set_status_on_exception=False,
        ) as span:
            seen = _Seen(self, span, method)
            try:
                yield seen
            except BaseException as exc:
                seen.failed(exc)
                raise
            finally:
                if ended is not None:
                    ended(seen)

    @contextlib.contextmanager
    def client_call(self, method: str, params: dict[str, Any] | None, version: str) -> Iterator[_Seen]:
        params = params or {}
        attributes = self._attributes(method, version)
        name = params.get("name")
        target = name if isinstance(name, str) and method in ("tools/call", "prompts/get") else None
        if method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
            if target:
                attributes["gen_ai.tool.name"] = target
            if self.record_content:
                attributes["gen_ai.tool.call.arguments"] = _json(params.get("arguments") or {})
        elif method == "prompts/get" and target:
            attributes["gen_ai.prompt.name"] = target
        uri = params.get("uri")
        if method in RESOURCE_METHODS and isinstance(uri, str):
            attributes["mcp.resource.uri"] = uri
        start = time.monotonic()

        def measured(seen: _Seen) -> None:
            metric = {k: v for k, v in attributes.items() if k in METRIC_KEYS}
            metric.update(seen.errors)
            self._operations.record(time.monotonic() - start, metric)

        with self._span(f"{method} {target}" if target else method, method, SpanKind.CLIENT, attributes,
                        ended=measured) as seen:
            yield seen

    # -- server requests --------------------------------------------------------------------

    @contextlib.contextmanager
    def server_call(self, method: str, params: dict[str, Any]) -> Iterator[_Seen]:
        meta = params.get("_meta")
        parent = None
        if isinstance(meta, dict) and meta:
            extracted = (self._propagator or propagate.get_global_textmap()).extract(meta)
            if trace.get_current_span(extracted).get_span_context().is_valid:
                parent = extracted
        with self._span(method, method, SpanKind.SERVER, self._attributes(method, self._version),
                        parent=parent) as seen:
            yield seen

    # -- the session ------------------------------------------------------------------------

    def session_started(self, version: str, started: float | None = None) -> None:
        """The session opened (at ``started``, a ``time.monotonic()``; None: now)."""
        with self._lock:
            self._session_start = time.monotonic() if started is None else started
            self._version = version

    def session_ended(self, error: BaseException | None) -> None:
        with self._lock:
            start, self._session_start = self._session_start, None
        if start is None:
            return
        metric = {k: v for k, v in self._network.items() if k in SESSION_KEYS}
        if self._version:
            metric["mcp.protocol.version"] = self._version
        if error is not None:
            metric["error.type"] = _error_type(error)
        self._sessions.record(time.monotonic() - start, metric)


class _Seen:
    """One observed call: its span, and what went wrong (for the metric's attributes)."""

    __slots__ = ("_observer", "span", "method", "errors", "last_failure")

    def __init__(self, observer: OTelObserver, span: Span, method: str) -> None:
        self._observer = observer
        self.span = span
        self.method = method
        self.errors: dict[str, str] = {}
        #: What ended the call's last attempt that failed (the next one's ``mcp.retry`` says it).
        self.last_failure: BaseException | None = None

    def inject(self, params: dict[str, Any]) -> dict[str, Any]:
        carrier: dict[str, Any] = {}
        self._observer._inject(carrier)  # this span is the current one
        if not carrier:
            return params  # no recording span: nothing to send, and no empty _meta either
        meta = params.get("_meta")
        return {**params, "_meta": {**(meta if isinstance(meta, dict) else {}), **carrier}}

    def sent(self, request_id: Any) -> None:
        self.span.set_attribute("jsonrpc.request.id", str(request_id))

    def event(self, name: str, attributes: dict[str, Any]) -> None:
        self.span.add_event(name, attributes)

    def finished(self, result: dict[str, Any]) -> None:
        if self.method != "tools/call":
            return
        if result.get("isError") is True:
            self._error("tool_error", None)
        elif self._observer.record_content:
            output = result.get("structuredContent")
            self.span.set_attribute("gen_ai.tool.call.result", _json(output if output is not None else result.get("content")))

    def failed(self, exc: BaseException) -> None:
        if isinstance(exc, RPCError):
            code = str(exc.code)
            self.span.set_attribute("rpc.response.status_code", code)
            self.errors["rpc.response.status_code"] = code
            self._error(code, exc.message)
            return
        self._error(_error_type(exc), str(exc))
        if not isinstance(exc, RequestTimeout):
            self.span.record_exception(exc)

    def _error(self, kind: str, message: str | None) -> None:
        self.errors["error.type"] = kind
        self.span.set_attribute("error.type", kind)
        self.span.set_status(StatusCode.ERROR, message)


def _error_type(exc: BaseException) -> str:
    if isinstance(exc, RPCError):
        return str(exc.code)
    if isinstance(exc, RequestTimeout):
        return "timeout"
    return type(exc).__qualname__


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)
