"""Recorded sessions: record a real server's session to a file, replay it offline as a transport.

A recording is JSON Lines: a header (what was recorded), then one line per message with its
direction (``send``: client to server, ``recv``: server to client), the seconds since the
start, and the message, redacted before it is written. Recording and replaying happen at the
``Transport`` boundary, so the code under test (and the whole client above the transport)
runs unchanged, in either era, whatever the recorded target's transport was.

Replay follows the recording's causes: a server message is given to the client once the
client message recorded just before it has been matched (and, for a reply, its request),
in the recorded order. A client message matches a
recorded one of the same method whose params are equal after the ignored fields are taken
out (see ``Matcher``); request ids are rewritten both ways, so a replay does not depend on
the ids the client happens to pick. A request that matches nothing is answered with an error
carrying a diff against the closest recorded one, and is a failure ``verify()`` reports.
"""

from __future__ import annotations

import difflib
import json
import queue
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence, Union

from .._core.exceptions import ConnectionClosed
from .._core.redact import REDACTED, Redactor
from ..transports.base import PLAIN, ConcurrentSends, Peer, SendOptions, Transport, capabilities
from ..transports.http import StreamableHTTPTransport
from ..transports.stdio import StdioTransport

__all__ = ["MODES", "Matcher", "RecordingTransport", "ReplayTransport", "recorded"]

#: ``once``: record when the file does not exist, else replay; ``none``: replay only (a
#: missing file is an error); ``all``: record again, replacing the file.
MODES = ("once", "none", "all")
FORMAT = 1
#: Keys whose values are credentials wherever they appear (compared lowercased, without - and _).
SECRET_KEYS = frozenset({
    "authorization", "proxyauthorization", "cookie", "setcookie", "token", "accesstoken", "refreshtoken",
    "idtoken", "apikey", "xapikey", "password", "passwd", "secret", "clientsecret", "credentials",
    "privatekey", "sessiontoken", "bearer",
})
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}")
#: What differs between two runs of the same code and so is left out of matching.
DEFAULT_IGNORE: tuple[tuple[str, ...], ...] = (
    ("params", "_meta", "traceparent"), ("params", "_meta", "tracestate"), ("params", "_meta", "baggage"),
    ("params", "_meta", "progressToken"), ("params", "_meta", "io.modelcontextprotocol/clientInfo"),
    ("params", "clientInfo"), ("params", "requestId"),
)

Target = Union[str, Sequence[str], Transport, Callable[[], Transport]]
Path_ = Union[str, "Path"]


def _secret_key(key: str) -> bool:
    name = key.lower().replace("-", "").replace("_", "")
    return name in SECRET_KEYS or (name.endswith("token") and name != "progresstoken") or name.endswith(
        ("secret", "password", "apikey")
    )


class _Scrubber:
    """Removes credentials from messages: secret-named keys, bearer values, the user's secrets."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._redactor = Redactor()
        self._redactor.add(*secrets, permanent=True)

    def add(self, *secrets: str) -> None:
        self._redactor.add(*secrets, permanent=True)

    def scrub(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: REDACTED if isinstance(k, str) and _secret_key(k) and v else self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(item) for item in value]
        if isinstance(value, str):
            return _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", self._redactor.redact(value))
        return value


def _describe(target: Target, scrubber: _Scrubber) -> dict[str, Any]:
    """What the header line says was recorded: no environment, headers or URL query."""
    if isinstance(target, str):
        return {"kind": "http", "target": scrubber.scrub(target.split("?", 1)[0].split("#", 1)[0])}
    if isinstance(target, (list, tuple)):
        return {"kind": "stdio", "target": scrubber.scrub([str(part) for part in target])}
    return {"kind": "transport", "target": type(target).__name__}


def _open(target: Target, options: Mapping[str, Any]) -> Transport:
    if isinstance(target, Transport):
        return target
    if isinstance(target, str):
        return StreamableHTTPTransport(target, **options)
    if callable(target):
        return target()
    return StdioTransport(list(target), **options)


class RecordingTransport(Transport, ConcurrentSends):
    """Passes every message through to ``inner`` and appends it, redacted, to ``path``.

    ``ConcurrentSends`` like HTTP, whose ``send`` may block until its reply: sends to an inner
    transport that is not (stdio) are serialized here, within their timeout.
    """

    def __init__(self, inner: Transport, path: Path_, *, secrets: Iterable[str] = (), target: Target | None = None) -> None:
        self.inner = inner
        self.path = Path(path)
        self._scrubber = _Scrubber(secrets)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")
        self._lock = threading.Lock()
        self._send_lock = None if capabilities(inner).concurrent_sends else threading.Lock()
        self._start = time.monotonic()
        header = {"mcpclient_recording": FORMAT, **_describe(inner if target is None else target, self._scrubber)}
        self._write(header)

    def __repr__(self) -> str:
        return f"<RecordingTransport {self.path.name!r} of {self.inner!r}>"

    def _write(self, entry: dict[str, Any]) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
                self._file.flush()

    def _log(self, direction: str, message: Any) -> None:
        self._write({"dir": direction, "t": round(time.monotonic() - self._start, 4), "message": self._scrubber.scrub(message)})

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        self.deliver(message, PLAIN, timeout=timeout)

    def deliver(self, message: dict[str, Any], options: SendOptions, *, timeout: float | None = None) -> None:
        """Record ``message`` and pass it, with its ``options``, to the inner transport."""
        lock = self._send_lock
        if lock is None:
            self._log("send", message)
            self.inner.deliver(message, options, timeout=timeout)
            return
        if not lock.acquire(timeout=-1 if timeout is None else timeout):
            raise TimeoutError("another message was still being written")
        try:
            self._log("send", message)  # in the order the messages are written
            self.inner.deliver(message, options, timeout=timeout)
        finally:
            lock.release()

    def receive(self) -> Any:
        message = self.inner.receive()
        for item in message if isinstance(message, list) else [message]:
            self._log("recv", item)
        return message

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            with self._lock:
                self._file.close()

    # The rest of the contract is the inner transport's: recording changes none of it.
    def abandon(self, request_id: Any) -> None:
        self.inner.abandon(request_id)

    def set_protocol(self, era: str, version: str) -> None:
        self.inner.set_protocol(era, version)

    def last_words(self) -> str:
        return self.inner.last_words()

    def hold_side_output(self) -> None:
        self.inner.hold_side_output()

    def release_side_output(self, refused: str | None = None) -> None:
        self.inner.release_side_output(refused)

    @property
    def server_key(self) -> Hashable | None:
        """None: the era this process remembered for the server is not used while recording,
        so every recording holds the era probe a fresh process would send."""
        return None

    @property
    def peer(self) -> Peer:
        return self.inner.peer

    def verify(self) -> None:
        """Nothing to check while recording (the pytest fixture calls it for every mode)."""


class Matcher:
    """Whether a client message matches a recorded one.

    ``ignore`` names fields left out of the comparison, each a tuple of keys or a string
    with ``/`` between keys (``"params/arguments/now"``), besides ``DEFAULT_IGNORE`` (trace
    context, progress tokens, client info, cancelled request ids). ``match(live, recorded)``,
    if given, must also return true: a custom rule for what the field comparison cannot say.
    """

    def __init__(self, ignore: Iterable[str | Sequence[str]] = (), match: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None) -> None:
        paths = [tuple(p.split("/")) if isinstance(p, str) else tuple(p) for p in ignore]
        self.ignore: tuple[tuple[str, ...], ...] = DEFAULT_IGNORE + tuple(paths)
        self.match = match

    def normal(self, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` without its id, jsonrpc tag and ignored fields."""
        kept = {k: v for k, v in message.items() if k not in ("id", "jsonrpc")}
        for path in self.ignore:
            kept = _without(kept, path)
        return kept

    def __call__(self, live: dict[str, Any], recorded: dict[str, Any]) -> bool:
        if self.normal(live) != self.normal(recorded):
            return False
        return self.match is None or bool(self.match(live, recorded))


def _without(value: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    head, rest = path[0], path[1:]
    if head not in value:
        return value
    if not rest:
        return {k: v for k, v in value.items() if k != head}
    inner = value[head]
    if not isinstance(inner, dict):
        return value
    return {**value, head: _without(inner, rest)}


_CLOSED = object()


#: The era probe's method (see ``ReplayTransport``).
PROBE = "server/discover"


class ReplayTransport(Transport):
    """Plays a recording back: answers the client as the recorded server did, offline.

    ``strict`` (the default): ``verify()`` also fails when recorded client messages were
    never sent, as ``responses`` fails on an unused response.
    """

    def __init__(self, path: Path_, *, matcher: Matcher | None = None, secrets: Iterable[str] = (), strict: bool = True) -> None:
        self.path = Path(path)
        lines = self.path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0]) if lines else {}
        if header.get("mcpclient_recording") != FORMAT:
            raise ValueError(f"{self.path} is not an mcpclient recording (format {FORMAT})")
        self.header = header
        self.events: list[tuple[str, dict[str, Any]]] = [(e["dir"], e["message"]) for e in map(json.loads, lines[1:]) if e]
        self.matcher = matcher or Matcher()
        self.strict = strict
        self._scrubber = _Scrubber(secrets)
        self._matched: set[int] = set()
        self._ids: dict[Any, Any] = {}  # recorded request id -> the live one
        # Each server message waits for the client message just before it (and a reply for
        # its request): the indices of those, by the server message's index.
        self._waiting: dict[int, tuple[int, ...]] = {}
        last: int | None = None
        request_at: dict[Any, int] = {}
        for index, (direction, message) in enumerate(self.events):
            if direction == "send":
                last = index
                if "method" in message and "id" in message:
                    request_at[message["id"]] = index
                continue
            needs: tuple[int, ...] = () if last is None else (last,)
            if "method" not in message and message.get("id") in request_at:
                needs += (request_at[message["id"]],)
            self._waiting[index] = needs
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._lock = threading.Lock()
        self.failures: list[str] = []

    def __repr__(self) -> str:
        return f"<ReplayTransport {self.path.name!r} {len(self._matched)}/{self._client_count()} matched>"

    def _client_count(self) -> int:
        return sum(1 for direction, _ in self.events if direction == "send")

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        live = self._scrubber.scrub(message)
        with self._lock:
            index = self._find(live)
            if index is None:
                self._mismatch(live)
            else:
                self._matched.add(index)
                recorded = self.events[index][1]
                if "method" in live and "id" in live:
                    self._ids[recorded.get("id")] = live["id"]
                self._release()

    def _find(self, live: dict[str, Any]) -> int | None:
        is_reply = "method" not in live
        for index, (direction, recorded) in enumerate(self.events):
            if direction != "send" or index in self._matched:
                continue
            if is_reply:
                if "method" not in recorded and recorded.get("id") == live.get("id") and self.matcher(live, recorded):
                    return index
            elif recorded.get("method") == live.get("method") and ("id" in recorded) == ("id" in live):
                if self.matcher(live, recorded):
                    return index
        return None

    def _mismatch(self, live: dict[str, Any]) -> None:
        method = live.get("method")
        candidates = [m for d, m in (self.events[i] for i in range(len(self.events)) if i not in self._matched)
                      if d == "send" and m.get("method") == method]
        what = f"{method!r}" if method else f"the reply to server request {live.get('id')!r}"
        if candidates:
            closest = max(candidates, key=lambda m: difflib.SequenceMatcher(None, _dump(self.matcher.normal(m)), _dump(self.matcher.normal(live))).ratio())
            diff = "\n".join(difflib.unified_diff(
                _dump(self.matcher.normal(closest)).splitlines(), _dump(self.matcher.normal(live)).splitlines(),
                "recorded", "sent", lineterm="",
            ))
            text = f"{self.path.name}: {what} does not match the recording:\n{diff}"
        else:
            if method == PROBE and "id" in live and self._legacy():
                # The era probe: a recording made where the era was already known lacks it.
                # The recorded server is legacy, so answer as a legacy server does.
                self._inbox.put({"jsonrpc": "2.0", "id": live["id"],
                                 "error": {"code": -32601, "message": f"Method not found: {PROBE}"}})
                return
            text = f"{self.path.name}: {what} is not in the recording (no unused {method or 'reply'} recorded)"
        self.failures.append(text)
        if method is not None and "id" in live:
            self._inbox.put({"jsonrpc": "2.0", "id": live["id"], "error": {"code": -32603, "message": f"replay: {text}"}})

    def _release(self) -> None:
        """Hand over, in recorded order, the server's messages whose causes have been matched."""
        for index in sorted(self._waiting):
            if all(need in self._matched for need in self._waiting[index]):
                del self._waiting[index]
                self._inbox.put(self._rewrite(self.events[index][1]))

    def _rewrite(self, message: dict[str, Any]) -> dict[str, Any]:
        if "method" not in message and message.get("id") in self._ids:
            return {**message, "id": self._ids[message["id"]]}
        params = message.get("params")
        if message.get("method") == "notifications/progress" and isinstance(params, dict):
            token = params.get("progressToken")
            if token in self._ids:
                return {**message, "params": {**params, "progressToken": self._ids[token]}}
        return message

    def receive(self) -> Any:
        item = self._inbox.get()
        if item is _CLOSED:
            self._inbox.put(_CLOSED)
            raise ConnectionClosed("the replay was closed")
        return item

    def close(self) -> None:
        self._inbox.put(_CLOSED)

    def _legacy(self) -> bool:
        """Whether the recorded session opened with the legacy ``initialize`` handshake."""
        return any(d == "send" and m.get("method") == "initialize" for d, m in self.events)

    def unused(self) -> list[dict[str, Any]]:
        """The recorded client messages no client message matched.

        A recorded era probe of a legacy server is not counted: whether a client sends it
        depends on what its process already knows of the server, not on the code under test.
        """
        legacy = self._legacy()
        return [m for i, (d, m) in enumerate(self.events)
                if d == "send" and i not in self._matched and not (legacy and m.get("method") == PROBE)]

    def verify(self) -> None:
        """Raise ``AssertionError`` for every mismatch and (strict) every unused recorded message."""
        problems = list(self.failures)
        if self.strict:
            problems += [f"{self.path.name}: recorded but never sent: {_dump(m)}" for m in self.unused()]
        if problems:
            raise AssertionError("\n".join(problems))


def _dump(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False)


def recorded(
    path: Path_,
    target: Target | None = None,
    *,
    mode: str = "once",
    secrets: Iterable[str] = (),
    ignore: Iterable[str | Sequence[str]] = (),
    match: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None,
    strict: bool = True,
    **transport_options: Any,
) -> RecordingTransport | ReplayTransport:
    """A transport that records a session with ``target`` to ``path``, or replays ``path``.

    ``target`` is a stdio command (a list), an HTTP URL (Streamable HTTP) or a transport (or
    a function making one); ``transport_options`` go to the transport made for it (``env``,
    ``headers``, ...). ``mode`` is one of ``MODES``. ``secrets`` are strings redacted from
    the recording besides what is found by name (credential keys, bearer values, the values
    of the ``headers`` given); ``ignore`` and ``match`` configure the ``Matcher``.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    path = Path(path)
    secrets = list(secrets)
    headers = transport_options.get("headers") or {}
    secrets += [str(v) for v in headers.values()] + [str(v).split(" ", 1)[-1] for v in headers.values()]
    if mode == "all" or (mode == "once" and not path.exists()):
        if target is None:
            raise ValueError(f"no recording at {path} and no target to record it from")
        return RecordingTransport(_open(target, transport_options), path, secrets=secrets, target=target)
    if not path.exists():
        raise FileNotFoundError(f"no recording at {path} (mode {mode!r} replays only)")
    return ReplayTransport(path, matcher=Matcher(ignore, match), secrets=secrets, strict=strict)
