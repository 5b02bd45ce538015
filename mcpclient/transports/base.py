"""The transport boundary: move one JSON-RPC message each way, and nothing else.

``Transport`` declares what the engine and the session may ask of every transport: three
methods to implement, and hooks with defaults that do nothing. What only some transports can
do is a small interface of its own, declared by inheriting it, which the engine checks with
``isinstance`` through ``capabilities`` (once, when it starts): ``ConcurrentSends``,
``InlineReads``, ``SpinReads`` and ``BatchedWrites``. Nobody above this module probes a
transport with ``getattr`` or tests its class.
"""

from __future__ import annotations

import abc
import json
import re
from typing import Any, Callable, Hashable, Mapping

import attrs

from .._core import bounded as _bounded
from .._core.credentials import Credentials
from .._core.exceptions import MCPError, ProtocolError

__all__ = [
    "LEGACY", "MODERN", "NOTHING", "PLAIN", "RESENDABLE", "BatchedWrites", "Capabilities", "ConcurrentSends",
    "ExtensionSource", "Failure", "InlineReads", "Peer", "SendOptions", "SpinReads", "Transport", "capabilities", "decode_message",
    "encode_message",
]

#: The two protocol eras, as ``set_protocol`` names them: the ``initialize`` handshake with
#: sessions (2024-11-05 to 2025-11-25), and ``server/discover`` without them (2026-07-28).
LEGACY, MODERN = "legacy", "modern"


class _Nothing:
    """The type of ``NOTHING``: ``receive_within`` found no whole message in time."""

    def __repr__(self) -> str:
        return "NOTHING"


NOTHING: Any = _Nothing()


@attrs.frozen
class Failure:
    """What ``receive()`` returns when the transport failed one request, not the connection.

    The HTTP transports read each reply on their own threads; when that reading breaks (a
    stream ended before the reply, a bad event) the caller waiting for ``request_id`` must get
    ``error``, and only that caller. The engine fails that one call with it.
    """

    request_id: Any
    error: MCPError


@attrs.frozen(kw_only=True)
class SendOptions:
    """What travels down with one outgoing message besides the message (``Transport.deliver``).

    ``headers``: transport headers for this one message (HTTP sends them with its POST; the
    modern era's ``Mcp-Method``/``Mcp-Name``/``Mcp-Param-*`` come this way, set by whoever
    knows them, so a transport never reads the era or the tools from what it carries).
    ``resendable``: the message changes nothing on the server, so a transport may send it
    again when an attempt broke before any reply (a kept-alive connection the server was
    closing); when false, such a break is an error saying the message may have run.
    A transport that has no use for one of them ignores it.
    """

    headers: Mapping[str, str] | None = None
    resendable: bool = False


#: No options: what ``send`` stands for.
PLAIN = SendOptions()
#: A message that changes nothing (``_methods.CHANGE_NOTHING``, a read-only tool), no headers.
RESENDABLE = SendOptions(resendable=True)


class ExtensionSource(abc.ABC):
    """Something a transport is given (an auth object) that declares MCP extensions for the
    Client it ends up in.

    ``mcpclient.auth.OAuth`` is one: the client credentials grant is the MCP extension
    ``io.modelcontextprotocol/oauth-client-credentials``, which a client using it declares.
    The HTTP transports pass what their ``auth`` declares on through
    ``Transport.declared_extensions()``. Declarations are data (identifier to settings), so
    neither the transport nor the auth object knows the seam.
    """

    @abc.abstractmethod
    def declared_extensions(self) -> Mapping[str, Mapping[str, Any]]:
        """The ``capabilities.extensions`` entries to declare: identifier to settings."""


@attrs.frozen
class Peer:
    """What a transport shows of the other end, for telemetry (read-only).

    ``network`` is ``"pipe"``, ``"tcp"`` or ``"inproc"`` (OpenTelemetry's names); ``protocol``
    the application protocol over it (``"http"``); ``address``/``port`` the server's;
    ``session_id`` the MCP session id while there is one. None where a transport has nothing
    to say.
    """

    network: str | None = None
    protocol: str | None = None
    address: str | None = None
    port: int | None = None
    session_id: str | None = None


class Transport(abc.ABC):
    """Moves JSON-RPC messages between a ``Client`` and one server.

    A transport is read by one thread at a time (``receive``, or ``receive_within`` of an
    ``InlineReads`` one) and written by writers (``send``/``deliver``), one at a time unless
    it is ``ConcurrentSends``.

    Implement three methods:

    - ``send(message, timeout=None)``: deliver one message (a JSON-able ``dict``). Should not
      block past ``timeout`` seconds when given. Raise ``TransportError`` (or
      ``ConnectionClosed``) on failure. A message with options of its own (``SendOptions``:
      headers, whether it may be re-sent) comes through ``deliver`` instead, whose default
      calls ``send``.
    - ``receive()``: block until the next message arrives and return it decoded (a ``dict``,
      or a ``list`` for a JSON-RPC batch), or a ``Failure`` for one request that failed.
      Raise ``ProtocolError`` for one malformed message (the client logs and skips it) and
      ``ConnectionClosed`` when no more can come.
    - ``close()``: release everything; it must unblock a thread waiting in ``receive`` and must
      be safe to call more than once.

    A subclass (or wrapper) that wraps ``send`` to see what goes out wraps ``deliver`` too,
    where a transport overrides it (HTTP, SSE): the messages with options go there.

    The rest has defaults that suit a transport with nothing more to say (a test double):
    ``deliver``, ``abandon``, ``renew``, ``deliver_replies_to``, ``reopen``, ``set_protocol``,
    ``last_words``, ``server_key``, ``peer``, ``credentials`` and ``extensions``. What a transport can do
    besides, it declares by inheriting an interface of this module (``capabilities``).
    """

    @abc.abstractmethod
    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        """Deliver one JSON-RPC message to the server."""

    def deliver(self, message: dict[str, Any], options: SendOptions, *, timeout: float | None = None) -> None:
        """Deliver one message with its ``options`` (``SendOptions``), as httpx passes a
        request's ``extensions`` down to its transport.

        The engine calls it instead of ``send`` for a message that has options; the default
        sends the message and ignores them. A transport that uses them (HTTP: the headers of
        the POST, and whether a broken attempt may be re-sent) overrides this, and a wrapper
        of another transport passes it on. Same contract as ``send`` otherwise.
        """
        self.send(message, timeout=timeout)

    @abc.abstractmethod
    def receive(self) -> Any:
        """Return the next decoded message from the server, or a ``Failure``."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection; unblock ``receive``; idempotent."""

    def abandon(self, request_id: Any) -> None:
        """The request ``request_id`` was cancelled: stop any work in flight for it.

        A transport whose ``send`` may still be blocked on it (an HTTP exchange) ends that
        work; ending a request's stream is also how a stateless or 2026-07-28 server learns of
        the cancel. Called from another thread; must not block. The default does nothing.
        """

    def deliver_replies_to(self, route: Callable[[dict[str, Any]], bool]) -> None:
        """Replies may be handed to ``route(reply)`` on the thread that read them.

        The engine calls it once, before its reader thread starts. A transport that reads a
        request's reply on the thread that sent the request (HTTP: the POST's own response)
        may pass the reply to ``route`` instead of queueing it for ``receive``: the waiting
        caller then wakes at once, without the trip through the reader thread (two thread
        switches a call). ``route`` returns False when the reply is not one it can take (an
        id no call waits for): queue it for ``receive`` then, as before. Only a reply that
        nothing of the same response came before may go this way, so that the notifications
        a server sends ahead of a reply still reach their handlers first. The default ignores
        it: everything goes through ``receive``.
        """

    def renew(self, request_id: Any, deadline: float | None) -> None:
        """Progress renewed the idle timeout of ``request_id``: its new deadline (monotonic).

        A transport that bounds a whole exchange by the call's deadline (HTTP) moves that
        bound, so a stream kept alive by progress is not cut at the first idle timeout.
        Called from the reader thread; must not block. The default does nothing.
        """

    def reopen(self) -> Transport | None:
        """A new, unused transport to the same server, or None if this kind cannot make one.

        The client calls it when the era probe's ``server/discover`` ended the connection (old
        servers exit on an unknown method), to go straight to ``initialize`` on a fresh one.
        The default is None: the error is raised as it is.
        """
        return None

    def declared_extensions(self) -> Mapping[str, Mapping[str, Any]]:
        """The MCP extensions this transport's configuration declares for its Client (what its
        auth object's grant is, say), as ``capabilities.extensions`` entries: identifier to
        settings. Data, so that a transport knows nothing of the seam; the Client declares them
        beside its own extensions'. None by default."""
        return {}

    def set_protocol(self, era: str, version: str) -> None:
        """The session found the era (``"legacy"`` or ``"modern"``) and negotiated ``version``.

        Called once per session by ``Session.open``: for the legacy era after the
        ``initialize`` reply and before ``notifications/initialized``, for the modern era after
        ``server/discover``. This is how a transport learns what it needs (HTTP: the
        ``MCP-Protocol-Version`` header, whether there are sessions and a GET stream); it never
        reads the protocol from the messages it carries. The default ignores it.
        """

    def resume_session(
        self, session_id: str, version: str, replay_initialize: dict[str, Any] | None, *, timeout: float | None
    ) -> None:
        """Take up a legacy session the server already knows, instead of a handshake
        (``Client(resume=...)``): send ``session_id`` and ``MCP-Protocol-Version: version``
        from now on. When the server no longer knows it, raise ``SessionLost``, or, given
        ``replay_initialize`` (the params of an ``initialize``), start a new session with it
        and go on. Only transports with sessions (Streamable HTTP) can; the default raises
        ``ValueError``.
        """
        raise ValueError(f"{type(self).__name__} has no sessions to resume: resume= needs a Streamable HTTP transport")

    def last_words(self) -> str:
        """What the server said besides its messages, for an error that could otherwise say
        only that no reply came (a stdio server's last stderr lines); "" by default."""
        return ""

    def hold_side_output(self) -> None:
        """Hold what the server says besides its messages (a stdio server's stderr) until
        ``release_side_output``: the client does while its era probe is out. ``last_words``
        still sees what is held. Nothing by default."""

    def release_side_output(self, refused: str | None = None) -> None:
        """Pass the held side output on, in order, and stop holding; with ``refused`` (the
        method of a probe the server refused), without the server's complaint about that
        request (see docs/transports.md). Nothing by default, or when nothing is held."""

    @property
    def server_key(self) -> Hashable | None:
        """Identifies the server for the client's per-server era cache; None: not cached."""
        return None

    @property
    def peer(self) -> Peer:
        """The other end, as telemetry describes it (``Peer``); empty by default."""
        return Peer()

    @property
    def server_directory(self) -> str | None:
        """The absolute directory the server resolves relative paths in, when this transport
        knows it (a stdio server's working directory); None by default: a server elsewhere."""
        return None

    @property
    def credentials(self) -> Credentials:
        """Every credential this transport sends, channel by channel (``Credentials``): the one
        account the redaction of errors, the result cache and recordings ask.

        By default the transport is taken to send credentials nobody can tell in advance
        (``Credentials.unknown``), so the result cache keeps nothing of a legacy server as
        shared: a transport that sends none says so with ``Credentials()``, and one that sends
        some enters them (a header, ``env``...).
        """
        return _UNKNOWN

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


#: What a transport that does not say what it sends sends (``Transport.credentials``).
_UNKNOWN = Credentials.unknown()


class ConcurrentSends(abc.ABC):
    """A transport whose ``send``/``deliver`` may be called from several threads at once.

    Without it the engine calls them from one thread at a time. A transport whose ``send`` may
    block until its reply arrives (HTTP reads a POST's reply there), or that wraps one, must
    be one: else one call's send would hold back every other message, including a handler's
    answer to a server request that call is waiting on. Declares nothing to implement.
    """


class InlineReads(abc.ABC):
    """A transport a caller may read its own reply from (stdio), saving the hand-off through
    the reader thread: the engine makes sure one thread at a time reads, through ``receive``
    or ``receive_within``."""

    @abc.abstractmethod
    def receive_within(self, timeout: float, spin: float = 0.0) -> Any:
        """Like ``receive``, but return ``NOTHING`` once ``timeout`` seconds pass without a
        whole message; a partial one stays buffered for the next call. ``spin`` is passed only
        to a ``SpinReads`` transport: for up to that many seconds of ``timeout``, look for the
        message without sleeping before waiting for it."""


class SpinReads(InlineReads):
    """An ``InlineReads`` transport whose ``receive_within`` takes ``spin`` (stdio): a call
    waiting alone for a reply that came fast last time looks for it without sleeping, which
    saves a process wake-up. Declares nothing more to implement."""

    #: Set to False on a transport, before its Client is made, to turn spinning off for it.
    spin_reads: bool = True


class BatchedWrites(abc.ABC):
    """A transport that writes several framed messages in one system call (stdio): a request
    sent while another thread is writing is handed to that writer."""

    @abc.abstractmethod
    def frame(self, message: dict[str, Any]) -> bytes | None:
        """``message`` as the bytes ``write_frames`` would write, or None when it is too big
        for one all-or-nothing write (then it goes through ``send``). Called from any thread."""

    @abc.abstractmethod
    def write_frames(self, frames: list[bytes]) -> int:
        """Write ``frames`` in order, each whole or not at all, as far as the transport takes
        them without waiting; return how many went out. Never blocks and never raises: what
        did not go out (the pipe is full, the connection failed) is sent again by its owner
        through ``send``, which reports the reason. Called by the thread that holds the write
        turn, right after that thread's own ``send``."""


@attrs.frozen
class Capabilities:
    """What the engine may do with a transport beyond the three methods (``capabilities``)."""

    concurrent_sends: bool = False
    inline_reads: bool = False
    spin_reads: bool = False
    batched_writes: bool = False


def capabilities(transport: Transport | type[Transport]) -> Capabilities:
    """The interfaces a transport (or its class) honours, as the engine reads them once.

    A class honours an interface it inherits, with one rule for subclasses that wrap what an
    interface goes around: ``BatchedWrites`` bypasses ``send`` and ``InlineReads`` bypasses
    ``receive``, so a subclass that overrides ``send`` (to record, say) without overriding
    ``write_frames`` too no longer batches, one that overrides ``receive`` without
    ``receive_within`` no longer reads inline, and one that overrides ``receive_within`` is
    given no ``spin`` (it may not take it) unless it declares ``SpinReads`` itself: each keeps
    seeing every message. For the transports written before these interfaces, a class
    attribute ``self_serializing``, ``inline_reads``, ``spin_reads`` or ``batched_writes`` set
    to True declares the interface (False: not), as it did.
    """
    if isinstance(transport, type):
        return _capabilities(transport)
    found = _capabilities(type(transport))
    if found.spin_reads and isinstance(transport, SpinReads) and not transport.spin_reads:
        return attrs.evolve(found, spin_reads=False)  # turned off on this one
    return found


#: The interfaces, each with the class attribute that declared it before they existed.
_LEGACY_FLAGS: tuple[tuple[type, str], ...] = (
    (ConcurrentSends, "self_serializing"),
    (InlineReads, "inline_reads"),
    (SpinReads, "spin_reads"),
    (BatchedWrites, "batched_writes"),
)


def _capabilities(cls: type) -> Capabilities:
    declared = {flag: _declaration(cls, interface, flag) for interface, flag in _LEGACY_FLAGS}
    send, receive, within = _definer(cls, "send"), _definer(cls, "receive"), _definer(cls, "receive_within")
    batched, inline, spin = declared["batched_writes"], declared["inline_reads"], declared["spin_reads"]
    reads_inline = inline is not None and (issubclass(within, receive) or issubclass(inline, receive))
    return Capabilities(
        concurrent_sends=declared["self_serializing"] is not None,
        batched_writes=batched is not None and (
            issubclass(_definer(cls, "write_frames"), send) or issubclass(batched, send)),
        inline_reads=reads_inline,
        spin_reads=reads_inline and spin is not None and issubclass(spin, within),
    )


def _declaration(cls: type, interface: type, flag: str) -> type | None:
    """The nearest class of ``cls``'s that declares ``interface`` (inherits it straight from
    the interface, or sets ``flag`` to True); None when none does, or the nearest one that
    mentions it sets ``flag`` to False."""
    for klass in cls.__mro__:
        if not issubclass(klass, Transport):
            continue  # (the interfaces themselves, object)
        own = vars(klass)
        if flag in own:
            return klass if own[flag] else None
        if any(issubclass(base, interface) and not issubclass(base, Transport) for base in klass.__bases__):
            return klass
    return None


def _definer(cls: type, name: str) -> type:
    """The nearest class of ``cls``'s that defines ``name`` (``object`` when none does)."""
    return next((klass for klass in cls.__mro__ if name in vars(klass)), object)


_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# The C halves of ``json``, called directly: ``JSONEncoder.encode`` and ``json.loads`` add four
# Python frames, an encoding sniff and two regex matches around them, on every message.
try:
    from _json import encode_basestring as _encode_str
    from _json import make_encoder as _c_make_encoder
    from _json import make_scanner as _c_make_scanner
except ImportError:  # an interpreter built without the accelerator: json's Python halves
    _c_make_encoder = _scan = None  # type: ignore[assignment,misc]
else:
    _scan = _c_make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_default = _encoder.default
# What ``_encoder.encode`` does for a non-str, without the circularity table: so it holds no
# state between calls, and one encoder serves every thread. A circular value ends in a
# RecursionError, and encode_message then asks a checking encoder for the real error.
_fast_encode = (
    None if _c_make_encoder is None
    else _c_make_encoder(None, _default, _encode_str, None, ":", ",", False, False, False)
)
_whitespace_end = re.compile(r"[ \t\n\r]*").match  # json.decoder.WHITESPACE


def encode_message(message: Any) -> bytes:
    """Serialize one message as compact UTF-8 JSON (no trailing newline).

    Raises ``ValueError`` for a circular value or a NaN, ``TypeError`` for one JSON cannot
    hold, as ``json.dumps`` does.
    """
    if _fast_encode is None:  # an interpreter built without the _json accelerator
        return _encoder.encode(message).encode("utf-8")
    try:
        chunks = _fast_encode(message, 0)
    except RecursionError:
        # A circular value, or one nested too deep: encoded again with a circularity table
        # (a fresh one, so threads never share one), which raises what ``json.dumps`` raises.
        chunks = _c_make_encoder({}, _default, _encode_str, None, ":", ",", False, False, False)(message, 0)
    return "".join(chunks).encode("utf-8")


def decode_message(data: bytes | bytearray | str) -> Any:
    """Parse one message; a bad one raises ``ProtocolError`` with an excerpt of it.

    UTF-8 (the spec's encoding) is scanned directly; anything else the fast path cannot take
    (a byte-order mark, leading blanks, another encoding, an error) goes through
    ``json.loads``, whose result or error is the answer. A message nested too deep for
    ``json.loads`` is read with its containers past ``_bounded.MAX_DEPTH`` levels replaced
    by a string (``_bounded.loads_shallow``): its id and error still reach their caller.
    """
    if _scan is not None:
        text: str | None = None
        try:
            text = data if isinstance(data, str) else data.decode("utf-8", "surrogatepass")
            value, end = _scan(text, 0)
        except Exception:  # noqa: BLE001 - json.loads below gives the real answer
            pass
        else:
            if end == len(text) or _whitespace_end(text, end).end() == len(text):  # type: ignore[union-attr]
                return value
        del text  # json.loads decodes again: a long bad line is not held decoded twice
    try:
        return json.loads(data)
    except ValueError as exc:
        excerpt = bytes(data[:120]) if isinstance(data, bytearray) else data[:120]
        raise ProtocolError(f"the server sent invalid JSON ({exc}): {excerpt!r}") from exc
    except RecursionError as exc:
        too_deep = exc
    try:
        text = data if isinstance(data, str) else bytes(data).decode(json.detect_encoding(data), "surrogatepass")
        return _bounded.loads_shallow(text)
    except (ValueError, RecursionError) as exc:
        excerpt = bytes(data[:120]) if isinstance(data, bytearray) else data[:120]
        raise ProtocolError(
            f"the server sent invalid JSON ({too_deep}; cut at {_bounded.MAX_DEPTH} levels it is still "
            f"invalid: {exc}): {excerpt!r}"
        ) from exc
