"""Recorded sessions: record a real server's session to a file (replayed by ``_replay``).

A recording is JSON Lines: a header (what was recorded), then one line per message with its
direction (``send``: client to server, ``recv``: server to client), the seconds since the
start, and the message, redacted before it is written. Recording and replaying happen at the
``Transport`` boundary, so the code under test (and the whole client above the transport)
runs unchanged, in either era, whatever the recorded target's transport was.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, Union
from urllib.parse import urlsplit, urlunsplit

import attrs

from .._core.credentials import Credentials
from .._core.redact import REDACTED
from .._core.text import inert_json
from ..transports.base import PLAIN, About, ExchangeTransport, SendOptions, Transport
from ..transports.http import StreamableHTTPTransport
from ..transports.stdio import StdioTransport

__all__ = ["FORMAT", "MODES", "Matcher", "RecordingTransport", "read_recording", "recording_lines"]

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
    """Removes credentials from messages: secret-named keys, bearer values, and every credential
    the recorded transport sends (its ``Credentials``: headers, the URL's user info and query,
    the auth object's tokens as sent, a stdio server's environment), with the user's ``secrets``."""

    def __init__(self, credentials: Credentials, secrets: Iterable[str] = ()) -> None:
        self._credentials = credentials
        self._secrets = Credentials()  # the user's own words, on no channel: kept off the transport's account
        self._secrets.hide(*secrets)

    def scrub(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: REDACTED if isinstance(k, str) and _secret_key(k) and v else self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(item) for item in value]
        if isinstance(value, str):
            text = self._secrets.redactor.redact(self._credentials.redactor.redact(value))
            return _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
        return value


def _describe(target: Target, scrubber: _Scrubber) -> dict[str, Any]:
    """What the header line says was recorded: no environment, headers, URL user info or query."""
    if isinstance(target, str):
        parts = urlsplit(target)
        shown = urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))
        return {"kind": "http", "target": scrubber.scrub(shown)}
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


class RecordingTransport(ExchangeTransport):
    """Passes every message through to ``inner`` and appends it, redacted, to ``path``.

    An ``ExchangeTransport`` like HTTP, whose ``send`` may block until its reply, and whose
    messages' options it passes on: sends to an inner transport that is not one (stdio) are
    serialized here, within their timeout. It reads nothing inline: every message goes
    through ``receive``, and so into the recording.
    """

    def __init__(self, inner: Transport, path: Path_, *, secrets: Iterable[str] = (), target: Target | None = None) -> None:
        self.inner = inner
        self.path = Path(path)
        self._scrubber = _Scrubber(inner.about.credentials, secrets)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")
        self._lock = threading.Lock()
        self._exchanges = inner if isinstance(inner, ExchangeTransport) else None
        self._send_lock = None if self._exchanges is not None else threading.Lock()
        self._start = time.monotonic()
        header = {"mcpclient_recording": FORMAT, **_describe(inner if target is None else target, self._scrubber)}
        self._write(header)

    def __repr__(self) -> str:
        return f"<RecordingTransport {self.path.name!r} of {self.inner!r}>"

    def _write(self, entry: dict[str, Any]) -> None:
        with self._lock:
            if not self._file.closed:
                # inert: a line break only between entries (no raw U+2028 or U+0085, which
                # str.splitlines takes for one), no lone surrogate UTF-8 cannot write
                self._file.write(inert_json(json.dumps(entry, ensure_ascii=False, sort_keys=True)) + "\n")
                self._file.flush()

    def _log(self, direction: str, message: Any) -> None:
        self._write({"dir": direction, "t": round(time.monotonic() - self._start, 4), "message": self._scrubber.scrub(message)})

    def send(self, message: dict[str, Any], *, timeout: float | None = None, options: SendOptions = PLAIN) -> None:
        """Record ``message`` and pass it, with its ``options``, to the inner transport."""
        exchanges = self._exchanges
        if exchanges is not None:
            self._log("send", message)
            exchanges.send(message, timeout=timeout, options=options)
            return
        lock = self._send_lock
        assert lock is not None
        if not lock.acquire(timeout=-1 if timeout is None else timeout):
            raise TimeoutError("another message was still being written")
        try:
            self._log("send", message)  # in the order the messages are written
            self.inner.send(message, timeout=timeout)
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
        if self._exchanges is not None:
            self._exchanges.abandon(request_id)

    def renew(self, request_id: Any, deadline: float | None) -> None:
        if self._exchanges is not None:
            self._exchanges.renew(request_id, deadline)

    def set_protocol(self, era: str, version: str) -> None:
        if self._exchanges is not None:
            self._exchanges.set_protocol(era, version)

    @property
    def about(self) -> About:
        """The inner transport's, without its ``server_key``: the era this process remembered
        for the server is not used while recording, so every recording holds the era probe a
        fresh process would send."""
        return attrs.evolve(self.inner.about, server_key=None)

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


#: The header's fields and the types they must have (besides the format number).
_HEADER_TYPES = {"kind": "a string", "target": "a string or a list of strings"}


def _header_problem(header: Any) -> str | None:
    if not isinstance(header, dict) or type(header.get("mcpclient_recording")) is not int \
            or header["mcpclient_recording"] != FORMAT:
        return f"is not an mcpclient recording (format {FORMAT})"
    target = header.get("target")
    valid = {"kind": isinstance(header.get("kind"), str),
             "target": isinstance(target, str) or (isinstance(target, list) and all(isinstance(p, str) for p in target))}
    for key, ok in valid.items():
        if not ok:
            shown = "missing" if key not in header else f"a {type(header[key]).__name__}"
            return f"has a header whose {key!r} must be {_HEADER_TYPES[key]} (it is {shown})"
    return None


def recording_lines(path: Path_) -> list[tuple[int, str]]:
    """The lines of the file at ``path`` that are not blank, each with its number."""
    text = Path(path).read_text(encoding="utf-8")
    return [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip(" \t\r")]


def read_recording(path: Path_) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """The header and the events (``("send" | "recv", message)``) of the recording at ``path``.

    Lines are split at ``\\n`` only (a JSON string may hold U+2028 raw, which
    ``str.splitlines`` takes for a line break); blank lines are skipped. Raises ``ValueError``
    naming the file (and the line) when it is not a recording of this format, a line is not
    JSON, the header's fields have the wrong types (``kind`` a string, ``target`` a string or
    a list of strings) or an event has no ``dir`` of ``send`` or ``recv`` and ``message`` object.
    """
    path = Path(path)
    lines = recording_lines(path)
    entries = []
    for number, line in lines:
        try:
            entries.append(json.loads(line))
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"{path} line {number} is not JSON: {exc}") from None
    problem = _header_problem(entries[0] if entries else None)
    if problem is not None:
        raise ValueError(f"{path} {problem}")
    events: list[tuple[str, dict[str, Any]]] = []
    for (number, _), entry in zip(lines[1:], entries[1:]):
        if not isinstance(entry, dict) or entry.get("dir") not in ("send", "recv") or not isinstance(entry.get("message"), dict):
            raise ValueError(f"{path} line {number} is no event: it needs \"dir\" (\"send\" or \"recv\") and a \"message\" object")
        events.append((entry["dir"], entry["message"]))
    return entries[0], events
