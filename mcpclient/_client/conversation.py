"""One connection's protocol state: which era and version, and the path every call takes.

Opening (``open``) finds the server's era: the ``initialize`` handshake (legacy) or
``server/discover`` (2026-07-28). It leaves a ``HandshakeResult`` in ``state`` and one ``Era``
object in ``era_strategy``, which from then on owns whatever differs between the eras (see
``_eras/base.py``). Every call then takes ``call``: the era decorates the request, and the
input-required loop (multi round-trip requests) is answered through the same handlers the
user installed for server requests.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, TypeGuard

import attrs

from .. import types as t
from .._core import bounded as _bounded
from .._core.exceptions import (
    CapabilityError,
    ConnectionClosed,
    HTTPStatusError,
    MCPError,
    ProtocolError,
    RequestTimeout,
    RPCError,
    StreamInterrupted,
    TransportError,
)
from .._core.methods import CHANGE_NOTHING
from .._core.options import CallOptions
from .._core.race import Finished, Race
from .._core.retry import Retry, resend, retry_deadline
from .._core.timeouts import Deadline
from .._core.waiting import Until
from .._protocol.eras import legacy, modern
from .._protocol.eras.base import Era, HandshakeResult
from .._rpc.engine import Engine
from ..extensions import Message
from ..transports.base import LEGACY, MODERN, ExchangeTransport, Transport
from .elicitation import url_elicitation_error
from .handlers import Handlers
from .seam import call_options, compose, merge_meta, message_options

if TYPE_CHECKING:
    from .discovery import Discoveries  # made by a Client whose cache= is a store

__all__ = ["PROTOCOLS", "Conversation", "identity", "remember_era"]

log = logging.getLogger("mcpclient")

#: What ``Client(protocol=...)`` accepts.
PROTOCOLS = ("auto", "legacy") + modern.MODERN_VERSIONS
#: How long ``server/discover`` is waited for alone: by a server remembered as modern before
#: ``initialize`` is sent too, and once ``initialize`` was refused. Otherwise discover may take
#: the whole opening's time (a dual-era server slow to start answers it first).
PROBE_TIMEOUT = 10.0
#: How long the probe waits for ``server/discover`` alone before sending ``initialize`` too, so
#: a server that never answers unknown methods costs about this much, not PROBE_TIMEOUT.
PROBE_GRACE = 1.0
#: How many input-required rounds one call may take before it is given up.
MAX_INPUT_ROUNDS = 16
#: Requests that change nothing on the server: re-sent once if their reply stream breaks, and
#: marked ``resendable`` for the transport (the protocol core's one list,
#: ``_methods.CHANGE_NOTHING``; a ``tools/call`` is one when its caller says so).
IDEMPOTENT_METHODS = CHANGE_NOTHING

#: What a resumed session does when the server no longer knows it (``on_session_lost``).
SESSION_LOST_CHOICES = ("raise", "reinitialize")

#: A client's life: created, then open (after initialize), then closed for good.
UNOPENED, OPEN, CLOSED = "unopened", "open", "closed"

# Which era each server spoke, by the transport's server_key, for the life of the process.
_era_cache: dict[Hashable, str] = {}
_era_cache_lock = threading.Lock()


class Conversation:
    """The client's side of its talk with one server: the era, the version, every call.

    Named apart from the three other sessions in sight: a ``requests.Session`` (the HTTP
    connection pool), the MCP session id a Streamable HTTP server hands out, and the legacy
    spec's "session" (the time between ``initialize`` and close), which this object spans.
    """

    def __init__(
        self,
        engine: Engine,
        handlers: Handlers,
        client_info: t.Implementation,
        protocol: str,
        transport: Transport,
        discoveries: Discoveries | None = None,
        resume: t.SessionState | Mapping[str, Any] | None = None,
        on_session_lost: str = "raise",
        retry: Retry | None = None,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
        if on_session_lost not in SESSION_LOST_CHOICES:
            raise ValueError(f"on_session_lost must be one of {SESSION_LOST_CHOICES}, got {on_session_lost!r}")
        if resume is not None and not isinstance(resume, t.SessionState):
            resume = t.SessionState.from_dict(dict(resume))
        if resume is not None and protocol not in ("auto", "legacy"):
            raise ValueError(f"resume= resumes a legacy session (protocol {resume.protocol_version}); "
                             f"protocol={protocol!r} asks for the 2026-07-28 era, which has no sessions")
        #: The saved session to resume instead of the handshake, and what to do once it is lost.
        self.resume = resume
        self.on_session_lost = on_session_lost
        self.engine = engine
        self.handlers = handlers
        self.client_info = client_info
        self.protocol = protocol
        self.transport = transport
        #: Told the era and version once they are known (``ExchangeTransport.set_protocol``).
        self._exchanges = transport if isinstance(transport, ExchangeTransport) else None
        self.server_key: Hashable | None = transport.about.server_key
        #: "legacy" or "modern", as the opening found it.
        self.era: str | None = None
        #: The era's rules, chosen once at the end of ``open`` (None until then).
        self.era_strategy: Era | None = None
        self.state: HandshakeResult | None = None
        #: The client capabilities the legacy handshake declared (fixed for the session).
        self.declared: dict[str, Any] = {}
        #: Whether the server's connection ended during the era probe (old SDKs exit on an
        #: unknown method): the client may then start it again and go straight to initialize.
        self.probe_killed = False
        #: Where eras and discover answers are remembered across processes (``cache=store``);
        #: None: only this process's memory, and the era alone.
        self.discoveries = discoveries
        #: Whether this opening took a remembered discover answer instead of asking.
        self.recalled = False
        self._discover_result: dict[str, Any] | None = None
        self._initialize_result: dict[str, Any] | None = None  # as the server sent it (session_state)
        # The chains of every call, built once: the middleware never changes for a client.
        seam = handlers.seam
        self._send = compose(seam.middleware, self._deliver)
        self._whole_call = compose(seam.call_middleware, self._call_message)
        #: The client's ``Retry`` for every call that brings none of its own (None: none; a
        #: change-nothing request whose reply stream broke is then sent once more).
        self.retry = retry

    # -- opening ----------------------------------------------------------------------------

    def open(self, timeout: float | None) -> None:
        """Find the server's era and version, and learn its capabilities.

        If it fails at any step (``notifications/initialized`` included), nothing it learned
        is kept: ``version`` and ``capabilities`` read as before it began. A server that does
        not answer in time is reported with what it said on the side (a stdio server's last
        stderr lines: one that serves HTTP instead of stdio says so there)."""
        try:
            self._open(timeout)
        except BaseException as exc:
            self.state = None
            self._initialize_result = None
            self.era = None
            self.era_strategy = None
            self.declared = {}
            side = self.transport.about.side_output
            said = side.last_words() if side is not None and isinstance(exc, RequestTimeout) else ""
            if not said or not isinstance(exc, RequestTimeout):
                raise
            raise RequestTimeout(
                f"{exc} (last lines of the server's stderr: {' | '.join(said.splitlines())})",
                method=exc.method, timeout=exc.timeout, delivered=exc.delivered,
            ) from exc

    def _open(self, timeout: float | None) -> None:
        self.recalled = False
        recalled = self.discoveries.recall(identity(self.server_key), self.transport.about.credentials) if (
            self.discoveries is not None and self.protocol == "auto") else None
        if self.resume is not None:
            self._resume(self.resume, timeout)
        elif self.protocol == "legacy":
            self._initialize(timeout)
        elif self.protocol != "auto":
            self._discover_forced(timeout)
        elif recalled is not None and recalled.discover is not None and recalled.version is not None:
            try:
                self._take_discover(recalled.discover, recalled.version, probing=False)
                self.recalled = True
                log.debug("the server's era and discover answer were remembered: no probe")
            except ProtocolError as exc:
                log.debug("the remembered discover answer is unusable (%s): probing", exc)
                self._forget()
                self._probe(timeout, grace=PROBE_GRACE)
        elif recalled is not None and recalled.era == LEGACY:
            self._initialize(timeout, may_be_modern=True)
        elif (cached := _cached_era(self.server_key)) == LEGACY:
            self._initialize(timeout, may_be_modern=True)
        else:  # a server known to be modern is given the whole PROBE_TIMEOUT to answer
            self._probe(timeout, grace=PROBE_TIMEOUT if cached == MODERN else PROBE_GRACE)
        # Only what the probe found says what the server speaks: a dual-era server asked for
        # legacy by an explicit protocol="legacy" must not be taken for legacy-only later.
        if self.protocol == "auto" and self.server_key is not None and self.era is not None:
            with _era_cache_lock:
                _era_cache[self.server_key] = self.era
            if self.discoveries is not None and not self.recalled:
                self.discoveries.remember(identity(self.server_key), self.era, self.version,
                                          self._discover_result if self.era == MODERN else None,
                                          self.transport.about.credentials)
        self.era_strategy = self._choose_era()

    def _probe(self, timeout: float | None, *, grace: float) -> None:
        """``server/discover`` first; ``initialize`` too when discover is still unanswered after
        ``PROBE_GRACE``; the first era to answer properly wins (see docs/transports.md).

        The server's side output is held meanwhile: a server that refuses the probe may
        complain about it there (the Python SDK 1.x logs a hundred-line validation error), and
        the complaint is left out when it is released (``_refused``)."""
        side = self.transport.about.side_output
        if side is None:
            self._race(timeout, grace=grace)
            return
        side.hold()
        try:
            self._race(timeout, grace=grace)
        finally:
            side.release()

    def _refused(self) -> None:
        """The server refused the probe: pass its side output on without its complaint."""
        side = self.transport.about.side_output
        if side is not None:
            side.release(refused="server/discover")

    def _race(self, timeout: float | None, *, grace: float) -> None:
        deadline = Deadline(timeout)  # the whole opening: the grace does not come on top of it
        probe = PROBE_TIMEOUT if timeout is None else min(timeout, PROBE_TIMEOUT)
        probe_deadline = Deadline(probe)
        version = modern.MODERN_VERSIONS[0]
        race = Race()
        # server/discover may take the whole opening's time: a dual-era server slow to start
        # (over PROBE_TIMEOUT) reads it first and answers it first, and initialize, sent after
        # the grace, is there to settle the era of a server that does not answer it.
        discover_id: list[Any] = []
        discover_params = {"_meta": modern.request_meta(version, self.client_info, self.handlers.capabilities())}
        self._enter(race, "server/discover", discover_params, deadline, on_sent=discover_id.append)
        first = race.next(min(grace, probe))
        if first is not None:
            self._after_discover(first, version, probe, deadline.remaining())
            return
        log.debug("no answer to server/discover within %ss: sending initialize as well", grace)
        self.declared = self.handlers.capabilities()
        self._enter(race, "initialize", legacy.initialize_params(self.client_info, self.declared), deadline)
        init_error = self._settle(race, version, probe_deadline, deadline, discover_id)
        if init_error is not None:
            self._no_era(init_error, timeout, deadline)

    def _enter(
        self, race: Race, method: str, params: dict[str, Any], deadline: Deadline,
        on_sent: Callable[[Any], None] | None = None,
    ) -> None:
        """Run the opening request ``method`` in ``race``, within what is left of ``deadline``;
        one with ``on_sent`` (server/discover) may be cancelled, initialize never is."""
        context = contextvars.copy_context()  # the caller's, for the spans of the probe's threads
        race.start(method, lambda token: context.run(
            self._open_request, method, params, CallOptions(deadline.remaining(), cancel=token, on_sent=on_sent),
            cancel_on_timeout=False,
        ), cancellable=on_sent is not None)

    def _settle(
        self, race: Race, version: str, probe: Deadline, deadline: Deadline, discover_id: list[Any]
    ) -> BaseException | None:
        """Both opening requests out: take the first era that answers properly (None), or
        return initialize's error once neither did."""
        init_error: BaseException | None = None
        discover: Finished | None = None
        while race.running:
            refused_first = init_error is not None and discover is None
            done = race.next(self._discover_wait(probe, discover_id) if refused_first else None)
            if done is None:
                race.abandon("initialize was refused and server/discover is unanswered")
                break
            if done.name != "initialize":
                discover = done
                if self._discover_ended(done, version):
                    return None  # a late initialize answer is ignored (its thread ends on its own)
            elif done.error is None and done.result is not None:
                self._initialize_answered(race, done, discover is None, discover_id, version, deadline)
                return None
            else:
                init_error = done.error
        return init_error

    def _discover_wait(self, probe: Deadline, discover_id: list[Any]) -> float | None:
        """How long server/discover is waited for once initialize was refused.

        Each attempt ends by its own timeout. Until PROBE_TIMEOUT only: a server reading its
        requests in order would have answered discover first. A reply already in is waited
        for: its thread may be back after initialize's, though the server answered it first.
        """
        if discover_id and self.engine.answered(discover_id[0]):
            return None
        return probe.remaining()

    def _initialize_answered(
        self, race: Race, done: Finished, first: bool, discover_id: list[Any], version: str, deadline: Deadline
    ) -> None:
        """initialize was answered (``first``: before server/discover ended): the server is
        legacy, unless its discover reply was in first after all."""
        if first and self._discover_came_first(race, discover_id, version):
            return  # initialize's answer is ignored, as when discover's thread is back first
        race.abandon("the server answered initialize")
        if first:
            log.debug("initialize answered first (%.2fs): the server is legacy", done.elapsed)
        assert done.result is not None
        self._finish_initialize(done.result, deadline.remaining())

    def _discover_ended(self, done: Finished, version: str) -> bool:
        """server/discover ended while initialize was out: whether its answer made the server
        modern. A refusal's complaint is left out; a server that died ends the opening."""
        if done.error is None and done.result is not None:
            if not self._took_discover(done.result, version):
                return False
            log.debug("server/discover answered after %.2fs: the server is modern", done.elapsed)
            return True
        if isinstance(done.error, RPCError):
            self._refused()
        elif _is_fatal(done.error):
            self.probe_killed = True
            raise done.error
        return False

    def _took_discover(self, result: dict[str, Any], version: str) -> bool:
        """Whether the probe's discover answer was usable (then taken: the server is modern)."""
        try:
            self._take_discover(result, version, probing=True)
        except ProtocolError as exc:
            log.debug("server/discover gave no usable answer (%s)", exc)
            return False
        return True

    def _no_era(self, init_error: BaseException, timeout: float | None, deadline: Deadline) -> None:
        """Neither era answered the probe properly: a modern-only server whose discover
        answer was unusable is asked again in a version it names; else initialize's error."""
        if _is_fatal(init_error):
            self.probe_killed = True
        supported = modern.supported_from_error(init_error) if isinstance(init_error, RPCError) else None
        other = modern.pick_version(supported) if supported else None
        if other:  # a modern-only server whose discover answer was unusable
            self._discover(other, deadline.remaining())
            return
        if isinstance(init_error, RequestTimeout) and timeout is not None:
            raise RequestTimeout(  # name the caller's timeout, not what was left of it for initialize
                f"no reply to 'server/discover' nor 'initialize' within {timeout:g}s",
                method="initialize", timeout=timeout, delivered=init_error.delivered,
            ) from init_error
        raise init_error

    def _discover_came_first(self, race: Race, discover_id: list[Any], version: str) -> bool:
        """After initialize's answer: whether the server answered server/discover before it,
        properly (then taken: the server is modern). Its reply may be in while its thread is
        not back yet, so the order of the threads does not decide the era."""
        if not discover_id or not self.engine.answered(discover_id[0]):
            return False
        done = race.next(None)  # discover's thread, with the reply it has: back at once
        if done is not None and isinstance(done.error, RPCError):
            self._refused()  # its complaint on the side is left out, as when it is back first
        if done is None or done.error is not None or done.result is None:
            return False
        if not self._took_discover(done.result, version):
            return False
        log.debug("server/discover was answered before initialize (%.2fs): the server is modern", done.elapsed)
        return True

    def _after_discover(self, done: Finished, version: str, probe: float, timeout: float | None) -> None:
        """The probe's answer came within the grace: modern, another version, or legacy."""
        try:
            if done.error is not None:
                raise done.error
            assert done.result is not None
            self._take_discover(done.result, version, probing=True)
            return
        except RPCError as exc:
            supported = modern.supported_from_error(exc)
            if supported is None and exc.code not in modern.MODERN_ERROR_CODES:
                log.debug("server/discover failed (%s): falling back to initialize", exc)
            elif supported is not None and (other := modern.pick_version(supported)):
                self._discover(other, timeout)
                return
            elif supported is not None and not any(v in legacy.SUPPORTED_VERSIONS for v in supported):
                raise ProtocolError(
                    f"the server supports protocol versions {supported}, none of which mcpclient speaks"
                ) from exc
        except ProtocolError as exc:
            # Some servers answer every unknown request with an empty result: not modern.
            log.debug("server/discover gave no usable answer (%s): falling back to initialize", exc)
        except RequestTimeout:
            log.debug("no answer to server/discover within %ss: falling back to initialize", probe)
        except (ConnectionClosed, TransportError) as exc:
            if _is_fatal(exc):
                self.probe_killed = True
                raise
            log.debug("server/discover was refused (%s): falling back to initialize", exc)
        self._refused()
        self._initialize(timeout, may_be_modern=True)

    def _discover_forced(self, timeout: float | None) -> None:
        """``server/discover`` for an explicit modern ``protocol``: a server that does not know
        the method speaks only the legacy era, which the caller must be told in words."""
        try:
            self._discover(self.protocol, timeout)
        except RPCError as exc:
            if exc.code != RPCError.METHOD_NOT_FOUND:
                raise
            raise ProtocolError(
                f"the server does not speak protocol {self.protocol} (it does not know server/discover: "
                f"{exc.message}); use protocol='auto' to find its era, or protocol='legacy'"
            ) from exc

    def _discover(self, version: str, timeout: float | None, *, probing: bool = False) -> None:
        params = {"_meta": modern.request_meta(version, self.client_info, self.handlers.capabilities())}
        result = self._open_request("server/discover", params, CallOptions(timeout), cancel_on_timeout=not probing)
        self._take_discover(result, version, probing=probing)

    def _take_discover(self, result: dict[str, Any], version: str, *, probing: bool) -> None:
        supported = result.get("supportedVersions")
        if probing and not isinstance(supported, list):
            raise ProtocolError("the server's server/discover result lists no supportedVersions")
        if isinstance(supported, list) and version not in supported:
            chosen = modern.pick_version([v for v in supported if isinstance(v, str)])
            if chosen is None:
                raise ProtocolError(f"the server supports {supported}, not {version}")
            version = chosen
        self.state = modern.read_discover_result(result, version)
        self._discover_result = result
        self.handlers.server = self.state.server_info
        self.era = MODERN
        if self._exchanges is not None:
            self._exchanges.set_protocol(MODERN, self.state.protocol_version)

    def _initialize(self, timeout: float | None, *, may_be_modern: bool = False) -> None:
        self.declared = self.handlers.capabilities()
        params = legacy.initialize_params(self.client_info, self.declared)
        try:
            result = self._open_request("initialize", params, CallOptions(timeout), cancel_on_timeout=False)
        except RPCError as exc:
            supported = modern.supported_from_error(exc)
            version = modern.pick_version(supported) if supported else None
            if may_be_modern and version:  # a modern-only server that missed the probe
                self._discover(version, timeout)
                return
            raise
        self._finish_initialize(result, timeout)

    def _finish_initialize(self, result: dict[str, Any], timeout: float | None) -> None:
        self.state = legacy.read_initialize_result(result)
        self._initialize_result = result
        self.handlers.server = self.state.server_info  # before initialized: the server may ask at once
        self.era = LEGACY
        if self._exchanges is not None:
            self._exchanges.set_protocol(LEGACY, self.state.protocol_version)
        self.notify("notifications/initialized", None, CallOptions(timeout))

    def _resume(self, saved: t.SessionState, timeout: float | None) -> None:
        """Take up a saved legacy session: no ``initialize``; what its answer said is the saved
        state's, and the transport sends the session id with the version it negotiated. With
        ``on_session_lost="reinitialize"`` the transport is given an ``initialize`` (asking for
        that version) to start a new session with once the server no longer knows this one."""
        result: dict[str, Any] = {
            "protocolVersion": saved.protocol_version, "capabilities": saved.capabilities,
            "serverInfo": saved.server_info,
        }
        if saved.instructions is not None:
            result["instructions"] = saved.instructions
        state = legacy.read_initialize_result(result)
        self.declared = self.handlers.capabilities()
        replay = None
        if self.on_session_lost == "reinitialize":
            replay = legacy.initialize_params(self.client_info, self.declared, saved.protocol_version)
        self.state, self._initialize_result = state, result
        self.handlers.server = state.server_info
        self.era = LEGACY
        if self._exchanges is None:
            raise ValueError(f"{type(self.transport).__name__} has no sessions to resume: resume= needs a "
                             "Streamable HTTP transport")
        self._exchanges.resume_session(saved.session_id, saved.protocol_version, replay, timeout=timeout)

    def session_state(self) -> t.SessionState | None:
        """The session to save for ``resume=``: None unless a legacy session with an id is open."""
        result, session_id = self._initialize_result, self.transport.about.peer.session_id
        if self.era != LEGACY or self.state is None or result is None or not session_id:
            return None
        info, instructions = result.get("serverInfo"), result.get("instructions")
        return t.SessionState(
            session_id=session_id, protocol_version=self.state.protocol_version,
            capabilities=dict(self.state.capabilities), server_info=dict(info) if isinstance(info, dict) else {},
            instructions=instructions if isinstance(instructions, str) else None,
        )

    def _open_request(
        self, method: str, params: dict[str, Any], options: CallOptions, *, cancel_on_timeout: bool
    ) -> dict[str, Any]:
        """A request of the opening (``initialize``, ``server/discover``), passed through the
        call middleware and the middleware like any call, each attempt of the client's
        ``Retry`` (if any) on its own."""
        if method in IDEMPOTENT_METHODS:  # server/discover: initialize may have run
            options = options.resending()
        retry = self.retry
        if retry is None or retry.attempts <= 1:
            return self._open_once(method, params, options, cancel_on_timeout)
        return self._retrying(retry, method, options, lambda again: self._open_once(
            method, params, again, cancel_on_timeout))

    def _open_once(
        self, method: str, params: dict[str, Any], options: CallOptions, cancel_on_timeout: bool
    ) -> dict[str, Any]:
        """One attempt of an opening request: each goes through the whole chain."""
        seam = self.handlers.seam
        if not seam.middleware and not seam.call_middleware:
            return self.engine.request(method, params, options, cancel_on_timeout=cancel_on_timeout)

        def deliver(message: Message) -> dict[str, Any]:
            return self.engine.request(
                message.method, merge_meta(message.params, message.options.meta) or {},
                call_options(message.options), cancel_on_timeout=cancel_on_timeout,
            )

        send = compose(seam.middleware, deliver)
        message = Message(direction="send", kind="request", method=method, params=params,
                          options=message_options(options))
        result: dict[str, Any] = compose(seam.call_middleware, send)(message)
        return result

    def _choose_era(self) -> Era:
        """The strategy for the era the opening found; the one place that tests which it is."""
        if self.era == MODERN:
            return modern.ModernEra(self.version, self.client_info, self.handlers.capabilities)
        return legacy.LegacyEra(self.version, self.declared)

    # -- calls ------------------------------------------------------------------------------

    @property
    def version(self) -> str:
        return self.state.protocol_version if self.state else ""

    @property
    def capabilities(self) -> dict[str, Any]:
        """The server's capabilities; empty until opened."""
        return self.state.capabilities if self.state else {}

    @property
    def strategy(self) -> Era:
        """The era's rules; ``MCPError`` until the session is open."""
        if self.era_strategy is None:
            raise MCPError("call initialize() first (or use the client in a with block)")
        return self.era_strategy

    def require(self, capability: str, method: str) -> None:
        """Raise ``CapabilityError`` if the server did not declare ``capability``."""
        state = self.state  # the capabilities property, without its call: on every call
        if state is None or capability not in state.capabilities:
            raise CapabilityError(capability, method)

    def call(self, method: str, params: dict[str, Any] | None, options: CallOptions) -> dict[str, Any]:
        """Send one logical request as the era wants it, answering every input round.

        ``options`` are the call's, read on the way down (``_core.options.CallOptions``):
        ``timeout`` bounds each round (renewed by progress), ``max_total`` all of them;
        ``on_sent(request_id)`` learns each round's id before it is written; ``meta`` adds keys
        to the request's ``_meta`` (under the era's keys, which win); ``resendable``: it changes
        nothing on the server although its method may (a tool annotated read-only), as the
        methods of ``IDEMPOTENT_METHODS`` do anyway; ``headers`` go down to the transport with
        each round (``SendOptions``). The call middleware sees the whole call; each round goes
        through the client's middleware as a message of its own.
        """
        if not options.resendable and method in IDEMPOTENT_METHODS:
            options = options.resending()
        if options.retry is None and self.retry is not None:  # the middleware sees the call's policy
            options = options.retrying(self.retry)
        try:
            seam = self.handlers.seam
            if seam.bare or seam.idle():  # no middleware, or only extensions' that have nothing to do now
                return self._call(method, params, options, middleware=False)
            if not seam.call_middleware:
                return self._call(method, params, options, middleware=bool(seam.middleware))
            message = Message(direction="send", kind="request", method=method, params=params,
                              options=message_options(options))
            result: dict[str, Any] = self._whole_call(message)
            return result
        except RPCError as exc:
            self._refused_version(exc)
            raise

    def _refused_version(self, exc: RPCError) -> None:
        """A call's error that says the server refused the protocol version: what is
        remembered of the server goes."""
        if self.discoveries is not None and modern.supported_from_error(exc) is not None:
            log.debug("the server refused the protocol version: forgetting its remembered era")
            self._forget()

    def _call_message(self, message: Message) -> dict[str, Any]:
        """The innermost step of the call chain: every round of the call ``message`` is."""
        return self._call(message.method, message.params, call_options(message.options),
                          middleware=bool(self.handlers.seam.middleware))

    def _forget(self) -> None:
        """The server said its era or versions changed: what is remembered of it goes."""
        remember_era(self.server_key, None)
        if self.discoveries is not None:
            self.discoveries.forget(identity(self.server_key))

    def _call(
        self, method: str, params: dict[str, Any] | None, options: CallOptions, *, middleware: bool
    ) -> dict[str, Any]:
        """Every round of one call: through the client's middleware when ``middleware`` (there
        is some, not all idle for this call), else straight to the engine, with the one
        ``options``."""
        # ``params`` is not copied: the era's decorate copies before it adds anything, and an
        # input round copies before it adds its answers.
        # With no chain, the caller's meta and the era decorate once, here.
        base = params if middleware else self._decorated(params, options.meta)
        sent = base or None
        # A Retry (the call's, else the client's: ``call`` put it there) sends each round as it
        # says; one of a single attempt sends it once, without even the re-send after a broken stream.
        retry = options.retry
        for _ in range(MAX_INPUT_ROUNDS + 1):
            try:
                if retry is not None or middleware:
                    result = self._round_through(retry, method, sent, options, middleware)
                else:
                    try:
                        result = self.engine.request(method, sent, options)
                    except StreamInterrupted as exc:
                        # No closure here: it would make cells of this function's variables
                        # on every call, the rounds that never break included.
                        result = self._resend(exc, method, options.resendable, self.engine.request, method, sent,
                                              options)
            except RPCError as exc:
                raise url_elicitation_error(exc, self.handlers.url_elicitations) from None
            if "resultType" not in result:  # the usual result: complete
                return result
            sent = self._next_round(method, base, result, options)
            if sent is None:
                return result
        raise ProtocolError(f"the server asked for input on {method!r} more than {MAX_INPUT_ROUNDS} times")

    def _round_through(
        self, retry: Retry | None, method: str, sent: dict[str, Any] | None, options: CallOptions, middleware: bool
    ) -> dict[str, Any]:
        """One round sent as a Retry says (through the middleware if ``middleware``), or as a
        message through the middleware."""
        if retry is not None:
            return self._round(retry, method, sent, options, middleware)
        return self._send_chained(Message(direction="send", kind="request", method=method, params=sent,
                                          options=message_options(options)))

    @staticmethod
    def _ends_call(method: str, result: dict[str, Any], options: CallOptions) -> bool:
        """Whether ``result``, not a plain one, ends the call: a task the caller waits for, or
        an input round the caller answers itself (``on_input="return"``). An unknown kind, or
        input asked where the method allows none, is the server's error."""
        kind = result.get("resultType", "complete")
        if kind == "complete" or (kind == "task" and method in modern.TASK_METHODS):
            return True  # a task is waited for by the caller (Calls, through the tasks feature)
        if kind != "input_required":
            raise ProtocolError(f"the server answered {method!r} with an unknown resultType {kind!r}")
        if method not in modern.INPUT_REQUIRED_METHODS:
            raise ProtocolError(f"the server asked for input on {method!r}, which does not allow it")
        return options.on_input == "return"  # the caller answers, later (Client.resume)

    def _next_round(
        self, method: str, base: dict[str, Any] | None, result: dict[str, Any], options: CallOptions
    ) -> dict[str, Any] | None:
        """The params of the call's next round, with the answers to the server's input
        requests; None when ``result`` ends the call (``_ends_call``)."""
        if self._ends_call(method, result, options):
            return None
        retry = dict(base or {})
        requests = result.get("inputRequests")
        if requests is not None:
            retry["inputResponses"] = self.handlers.answer_inputs(requests, options.cancel, repr(method))
        state = result.get("requestState")
        if state is not None:
            if not isinstance(state, str):
                raise ProtocolError(f"the server's requestState is not a string: {_bounded.excerpt(state, 100)}")
            retry["requestState"] = state
        return retry

    def _decorated(self, params: dict[str, Any] | None, meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """``params`` as the era sends them: the caller's ``meta`` under the era's keys."""
        if meta:
            params = merge_meta(params, meta)
        era = self.era_strategy
        return era.decorate(params or {}) if era is not None else params

    def _round(
        self, retry: Retry, method: str, sent: dict[str, Any] | None, options: CallOptions, middleware: bool
    ) -> dict[str, Any]:
        """One round of a call with a ``Retry``: each attempt is a request of its own and,
        with middleware, a message of its own."""
        if retry.attempts <= 1:
            return self._attempt(method, sent, options, middleware)
        return self._retrying(retry, method, options, lambda again: self._attempt(method, sent, again, middleware))

    def _attempt(
        self, method: str, sent: dict[str, Any] | None, options: CallOptions, middleware: bool
    ) -> dict[str, Any]:
        if middleware:
            result: dict[str, Any] = self._send(Message(direction="send", kind="request", method=method, params=sent,
                                                        options=message_options(options)))
            return result
        return self.engine.request(method, sent, options)

    def _retrying(
        self, retry: Retry, method: str, options: CallOptions, attempt: Callable[[CallOptions], dict[str, Any]]
    ) -> dict[str, Any]:
        """``attempt(options)``, and again as ``retry`` allows after a failure (``_core.retry``):
        every pause waits through an ``Until`` of the call's time (never past its timeout, nor
        its ``max_total``), its cancel, and the connection's life (``close()``, its death)."""
        started = time.monotonic()
        try:
            return attempt(options)
        except MCPError as exc:
            end = retry_deadline(retry, started, options.timeout, options.deadline)
            until = Until(deadline=end, cancel=options.cancel, ends=(self.engine.lifetime,), method=method,
                          what=f"the pause before {method!r} is sent again")
            return resend(retry, exc, lambda number, left: attempt(options.attempting(number, left)),
                          changes_nothing=options.resendable, until=until, what=repr(method))

    def _send_chained(self, message: Message) -> dict[str, Any]:
        """One round through the middleware; a re-send after a broken stream is a message too."""
        send = self._send
        try:
            result: dict[str, Any] = send(message)
        except StreamInterrupted as exc:
            again = message.replace(options=attrs.evolve(message.options, attempt=message.options.attempt + 1))
            return self._resend(exc, message.method, message.options.resendable, send, again)
        return result

    def _deliver(self, message: Message) -> dict[str, Any]:
        """The innermost step of the send chain: the caller's ``meta`` under the era's keys,
        then the engine (``options.on_sent`` learns the id)."""
        return self.engine.request(
            message.method, self._decorated(message.params, message.options.meta) or None,
            call_options(message.options),
        )

    def _resend(
        self, exc: StreamInterrupted, method: str, resendable: bool, again: Callable[..., dict[str, Any]],
        *args: Any, **kwargs: Any,
    ) -> dict[str, Any]:
        """A request whose reply stream broke, re-sent once (as a new request: ``again(*args,
        **kwargs)``) if it changes nothing."""
        if not resendable:
            raise exc
        log.info("the reply stream of %r broke (%s); sending it again", method, exc)
        return again(*args, **kwargs)

    def notify(self, method: str, params: dict[str, Any] | None, options: CallOptions) -> None:
        """Send a notification, through the call middleware and the middleware; ``options``'
        ``timeout`` bounds the write, ``meta`` and ``headers`` as for ``call``."""
        seam = self.handlers.seam
        message = Message(direction="send", kind="notification", method=method, params=params,
                          options=message_options(options))
        send = compose(seam.middleware, self._post)
        if seam.call_middleware:
            send = compose(seam.call_middleware, send)
        send(message)

    def _post(self, message: Message) -> None:
        self.engine.notify(message.method, merge_meta(message.params, message.options.meta),
                           call_options(message.options))


def remember_era(key: Hashable | None, era: str | None) -> None:
    """Record what a server speaks, so later clients for it skip the probe (None forgets it)."""
    if key is not None:
        with _era_cache_lock:
            if era is None:
                _era_cache.pop(key, None)
            else:
                _era_cache[key] = era


def identity(key: Hashable | None) -> str | None:
    """A transport's ``server_key`` as a string (``Session.server_identity``); None stays None."""
    if key is None:
        return None
    return "/".join(str(part) for part in key) if isinstance(key, tuple) else str(key)


def _cached_era(key: Hashable | None) -> str | None:
    if key is None:
        return None
    with _era_cache_lock:
        return _era_cache.get(key)


def _is_fatal(exc: BaseException | None) -> TypeGuard[ConnectionClosed]:
    """Whether an error during the probe means the server is gone (not just legacy)."""
    return isinstance(exc, ConnectionClosed) and not isinstance(exc, HTTPStatusError)

