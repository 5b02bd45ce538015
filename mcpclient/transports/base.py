"""The transport boundary: move one JSON-RPC message each way, and nothing else.

``Transport`` is what every transport is: ``send``, ``receive`` and ``close``, and ``about``,
what it says of its server as data (the default says nothing). A transport of your own
implements the three methods and is done (docs/transports.md).

What only stdio does, and what only HTTP does, is one small interface each, declared by
inheriting it:

- ``PipeTransport`` (stdio): a caller may read its own reply (``receive_within``), a writer
  may carry other threads' requests (``frame``, ``write_frames``), and the server can be
  started again (``reopen``).
- ``ExchangeTransport`` (Streamable HTTP, HTTP+SSE): each message is an exchange of its own,
  sent from many threads at once with its options; a cancel ends it (``abandon``), progress
  moves its bound (``renew``), its reply may wake its caller on the thread that read it
  (``deliver_replies_to``), and the session follows the era (``set_protocol``,
  ``resume_session``).

The engine and the conversation ask ``isinstance`` once, when they are made. Nobody above this
module probes a transport with ``getattr`` or tests its class.
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
    "LEGACY", "MODERN", "NOTHING", "PLAIN", "RESENDABLE", "About", "ExchangeTransport", "ExtensionSource", "Failure",
    "Peer", "PipeTransport", "SendOptions", "SideOutput", "Transport", "decode_message", "encode_message",
    "reads_inline", "writes_batched",
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
    """What travels down with one outgoing message besides the message
    (``ExchangeTransport.send``'s ``options``).

    ``headers``: transport headers for this one message (HTTP sends them with its POST; the
    modern era's ``Mcp-Method``/``Mcp-Name``/``Mcp-Param-*`` come this way, set by whoever
    knows them, so a transport never reads the era or the tools from what it carries).
    ``resendable``: the message changes nothing on the server, so a transport may send it
    again when an attempt broke before any reply (a kept-alive connection the server was
    closing); when false, such a break is an error saying the message may have run.
    """

    headers: Mapping[str, str] | None = None
    resendable: bool = False


#: No options: what a plain ``send`` stands for.
PLAIN = SendOptions()
#: A message that changes nothing (``_methods.CHANGE_NOTHING``, a read-only tool), no headers.
RESENDABLE = SendOptions(resendable=True)


class ExtensionSource(abc.ABC):
    """Something a transport is given (an auth object) that declares MCP extensions for the
    Client it ends up in.

    ``mcpclient.auth.OAuth`` is one: the client credentials grant is the MCP extension
    ``io.modelcontextprotocol/oauth-client-credentials``, which a client using it declares.
    The HTTP transports pass what their ``auth`` declares on in ``About.extensions``.
    Declarations are data (identifier to settings), so neither the transport nor the auth
    object knows the seam.
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


class SideOutput(abc.ABC):
    """What a server says besides its messages (a stdio server's stderr), as the opening asks
    it (``About.side_output``).

    The client holds it while its era probe is out (``hold``). When the server refused the
    probe, it is released without the server's complaint about it
    (``release(refused="server/discover")``); otherwise as it came (``release()``). A timeout
    of the opening quotes ``last_words()``. See docs/transports.md, "Protocol eras".
    """

    @abc.abstractmethod
    def hold(self) -> None:
        """Hold what comes from now on, until ``release``; ``last_words`` still sees it."""

    @abc.abstractmethod
    def release(self, refused: str | None = None) -> None:
        """Pass on what was held, in order, and stop holding; with ``refused`` (the method of
        a request the server refused), without its complaint about it. Nothing when nothing
        is held."""

    @abc.abstractmethod
    def last_words(self) -> str:
        """The last lines, credentials redacted, for an error that could otherwise say only
        that no reply came."""


#: What a transport that does not say what it sends sends.
_UNKNOWN = Credentials.unknown()


@attrs.frozen(kw_only=True, eq=False)
class About:
    """What a transport says of its server and of what it sends (``Transport.about``): data,
    which the Client and its plug-ins read, so a transport never learns who reads it.

    - ``server_key``: names the server (hashable), for the era remembered per server and the
      result cache's keys; None: nothing is remembered.
    - ``peer``: the other end, as telemetry names it (``Peer``).
    - ``credentials``: every credential the transport sends, channel by channel
      (``Credentials``): the one account that redaction, the result cache and recordings
      ask. The default (``Credentials.unknown()``) fails closed: the cache keeps nothing of a
      legacy server as shared. A transport that sends none says ``Credentials()``.
    - ``directory``: the absolute directory the server resolves relative paths in (a stdio
      server's working directory), for the policy gate; None: not known.
    - ``extensions``: the MCP extensions the transport's configuration declares for its Client
      (what its auth object's grant is: ``ExtensionSource``), as ``capabilities.extensions``
      entries.
    - ``side_output``: what the server says besides its messages (``SideOutput``), or None.
    """

    server_key: Hashable | None = None
    peer: Peer = Peer()
    credentials: Credentials = _UNKNOWN
    directory: str | None = None
    extensions: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    side_output: SideOutput | None = None


#: What a transport that says nothing of itself says.
_NOTHING_KNOWN = About()


class Transport(abc.ABC):
    """Moves JSON-RPC messages between a ``Client`` and one server.

    Implement three methods:

    - ``send(message, *, timeout=None)``: deliver one message (a JSON-able ``dict``), within
      ``timeout`` seconds when given. Raise ``TransportError`` or ``ConnectionClosed`` on
      failure. The engine calls it from one thread at a time.
    - ``receive()``: block until the next message arrives and return it decoded (a ``dict``,
      or a ``list`` for a JSON-RPC batch), or a ``Failure`` for one request that failed.
      Raise ``ProtocolError`` for one malformed message (the client logs and skips it) and
      ``ConnectionClosed`` when no more can come. One thread at a time reads.
    - ``close()``: release everything. It must unblock a thread waiting in ``receive`` and be
      safe to call more than once.

    ``about`` says what the transport knows of its server (``About``); by default nothing.
    What only stdio or only HTTP does is ``PipeTransport`` or ``ExchangeTransport``.
    """

    @abc.abstractmethod
    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        """Deliver one JSON-RPC message to the server."""

    @abc.abstractmethod
    def receive(self) -> Any:
        """Return the next decoded message from the server, or a ``Failure``."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection; unblock ``receive``; idempotent."""

    @property
    def about(self) -> About:
        """What this transport says of its server and of what it sends (``About``)."""
        return _NOTHING_KNOWN

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class PipeTransport(Transport):
    """A transport over the pipes of a server this process runs (stdio).

    With one pipe each way, the engine saves thread switches:

    - ``receive_within(timeout, spin=0.0)``: a caller reads its own reply while no other
      thread reads (the engine makes sure one thread at a time does).
    - ``frame(message)`` and ``write_frames(frames)``: a request sent while another thread
      writes is framed on its own thread and written by that writer, several in one write.

    ``reopen()`` starts the server again: the client does when the era probe killed it.

    A subclass that wraps ``receive`` (to record what arrives, say) and not ``receive_within``
    has inline reads turned off, and one that wraps ``send`` and not ``write_frames`` batched
    writes (``reads_inline``, ``writes_batched``): so it keeps seeing every message.
    """

    #: Set to False on a transport, before its Client is made, to turn spinning off for it.
    spin_reads: bool = True

    @abc.abstractmethod
    def receive_within(self, timeout: float, spin: float = 0.0) -> Any:
        """Like ``receive``, but return ``NOTHING`` once ``timeout`` seconds pass without a
        whole message; a partial one stays buffered for the next call. For up to ``spin``
        seconds of ``timeout``, look for the message without sleeping before waiting for it
        (a fast server's reply is caught without a process wake-up)."""

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

    def reopen(self) -> PipeTransport | None:
        """A new, unused transport to the same server (the command started again), or None
        when this one cannot make one; the error is then raised as it is."""
        return None


class ExchangeTransport(Transport):
    """A transport whose every message is an exchange of its own, a request and its reply
    (Streamable HTTP, HTTP+SSE).

    ``send`` may block until the reply arrives, so the engine calls it from many threads at
    once (a wrapper of such a transport must allow that too), and it takes the message's
    ``options`` (``SendOptions``: headers, whether it may be re-sent), as httpx passes a
    request's ``extensions`` down to its transport. A wrapper passes them on. The rest has
    defaults that do nothing.
    """

    @abc.abstractmethod
    def send(self, message: dict[str, Any], *, timeout: float | None = None, options: SendOptions = PLAIN) -> None:
        """Deliver one message with its ``options``; the contract of ``Transport.send``."""

    def abandon(self, request_id: Any) -> None:
        """The request ``request_id`` was cancelled or timed out: end its exchange, whatever
        its phase. Ending a request's stream is also how a stateless or 2026-07-28 server
        learns of the cancel. Called from another thread; must not block."""

    def renew(self, request_id: Any, deadline: float | None) -> None:
        """Progress moved the deadline of ``request_id`` (monotonic): move its exchange's, so
        a stream kept alive by progress is not cut at the first idle timeout. Called from the
        reader thread; must not block."""

    def deliver_replies_to(self, route: Callable[[dict[str, Any]], bool]) -> None:
        """Replies may be handed to ``route(reply)`` on the thread that read them.

        The engine calls it once, before its reader thread starts. A reply read on the thread
        that sent its request (a POST's own response) may go to ``route`` instead of
        ``receive``: its caller then wakes at once, without a trip through the reader thread.
        ``route`` returns False for a reply it cannot take (an id no call waits for): queue it
        for ``receive`` then. Only a reply that nothing of the same response came before may go
        this way, so that the notifications a server sends ahead of a reply reach their
        handlers first.
        """

    def set_protocol(self, era: str, version: str) -> None:
        """The session found the era (``LEGACY`` or ``MODERN``) and negotiated ``version``.

        Called once per session: for the legacy era after the ``initialize`` reply and before
        ``notifications/initialized``, for the modern era after ``server/discover``. HTTP sends
        ``MCP-Protocol-Version`` from it and opens its GET stream; a transport never reads the
        protocol from the messages it carries.
        """

    def resume_session(
        self, session_id: str, version: str, replay_initialize: dict[str, Any] | None, *, timeout: float | None
    ) -> None:
        """Take up a legacy session the server already knows, instead of a handshake
        (``Client(resume=...)``): send ``session_id`` and ``MCP-Protocol-Version: version``
        from now on. When the server no longer knows it, raise ``SessionLost``, or, given
        ``replay_initialize`` (the params of an ``initialize``), start a new session with it
        and go on. Raises ``ValueError`` by default: no sessions to resume.
        """
        raise ValueError(f"{type(self).__name__} has no sessions to resume: resume= needs a Streamable HTTP transport")


def reads_inline(cls: type[PipeTransport]) -> bool:
    """Whether the engine may read a transport of ``cls`` through ``receive_within``: not when
    a subclass wraps ``receive`` without it, which inline reads would go around."""
    return issubclass(_definer(cls, "receive_within"), _definer(cls, "receive"))


def writes_batched(cls: type[PipeTransport]) -> bool:
    """Whether the engine may hand requests to ``write_frames`` for a transport of ``cls``:
    not when a subclass wraps ``send`` without it, which batched writes would go around."""
    return issubclass(_definer(cls, "write_frames"), _definer(cls, "send"))


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
