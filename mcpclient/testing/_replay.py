"""Replaying a recording as a transport, offline, with faults injected where asked.

Replay follows the recording's causes: a server message is given to the client once the
client message recorded just before it has been matched (and, for a reply, its request),
in the recorded order. A client message matches a recorded one of the same method whose
params are equal after the ignored fields are taken out (see ``Matcher``); request ids are
rewritten both ways, so a replay does not depend on the ids the client happens to pick. A
request that matches nothing is answered with an error carrying a diff against the closest
recorded one, and is a failure ``verify()`` reports. ``faults=`` (``Fault``) break the
replay at chosen requests.
"""

from __future__ import annotations

import difflib
import json
import queue
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .._build.open import credentials_of
from .._core.credentials import Credentials
from .._core.exceptions import ConnectionClosed, HTTPStatusError, StreamInterrupted
from ..transports.base import About, Failure, Transport
from ._faults import Fault, FaultPlan
from ._recording import MODES, Matcher, Path_, RecordingTransport, Target, _open, _Scrubber, read_recording

__all__ = ["PROBE", "ReplayTransport", "recorded"]

_CLOSED = object()
_DEAD = object()

#: The era probe's method (see ``ReplayTransport``).
PROBE = "server/discover"


class ReplayTransport(Transport):
    """Plays a recording back: answers the client as the recorded server did, offline.

    ``strict`` (the default): ``verify()`` also fails when recorded client messages were
    never sent, as ``responses`` fails on an unused response (but for those a fault made
    unreachable). ``faults``: ``Fault``s to inject (see ``mcpclient.testing.Fault``).
    """

    def __init__(self, path: Path_, *, matcher: Matcher | None = None, secrets: Iterable[str] = (), strict: bool = True,
                 faults: Iterable[Fault] = (), credentials: Credentials | None = None) -> None:
        self.path = Path(path)
        self.header, self.events = read_recording(self.path)
        self.matcher = matcher or Matcher()
        self.strict = strict
        #: What the recorded client sent (``recorded`` makes it from the target and its
        #: options, as the recording transport did): live messages are scrubbed with it.
        self._credentials = credentials if credentials is not None else Credentials()
        self._about = About(credentials=self._credentials)
        self._scrubber = _Scrubber(self._credentials, secrets)
        self._plan = FaultPlan(faults)
        self._matched: set[int] = set()
        self._excused: set[int] = set()  # recorded client messages a fault made unreachable
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
        self._dead = False
        self._corrupt: set[Any] = set()  # recorded ids whose replies a fault makes malformed
        self._timers: list[threading.Timer] = []
        self.failures: list[str] = []

    def __repr__(self) -> str:
        return f"<ReplayTransport {self.path.name!r} {len(self._matched)}/{self._client_count()} matched>"

    @property
    def about(self) -> About:
        """What the recorded client sent as its credentials, as ``recorded`` was told (none by
        default)."""
        return self._about

    @property
    def faults_struck(self) -> list[Fault]:
        """The faults that struck so far, in order."""
        return list(self._plan.struck)

    def _client_count(self) -> int:
        return sum(1 for direction, _ in self.events if direction == "send")

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        live = self._scrubber.scrub(message)
        with self._lock:
            if self._dead:
                raise ConnectionClosed("the server died (a replayed fault)")
            index = self._find(live)
            if index is None:
                index = self._again(live)
                if index is None:
                    self._mismatch(live)
                return
            recorded = self.events[index][1]
            fault = self._plan.strike(live["method"]) if "method" in live and "id" in live else None
            if fault is not None and self._refuse(fault, index, live):
                return
            self._matched.add(index)
            if "method" in live and "id" in live:
                self._ids[recorded.get("id")] = live["id"]
                if fault is not None and fault.kind == "malformed":
                    self._corrupt.add(recorded.get("id"))
            released = self._release()
        if fault is not None and fault.kind == "latency" and released:
            self._later(fault.seconds, released)
        else:
            for item in released:
                self._inbox.put(item)

    def _refuse(self, fault: Fault, index: int, live: dict[str, Any]) -> bool:
        """Play a fault that keeps the struck request from its answer; whether it did."""
        if fault.kind == "death":
            self._dead = True
            self._excused.update(i for i in range(index, len(self.events)) if i not in self._matched)
            self._inbox.put(_DEAD)
            return True
        if fault.kind == "drop":  # not matched: the copy the client may send is answered
            self._inbox.put(Failure(live["id"], StreamInterrupted(
                f"the connection broke before the reply to {live['method']!r} (a replayed fault: {fault})")))
            return True
        if fault.kind == "lost_session":
            self._excused.add(index)
            raise HTTPStatusError(f"the server lost the new session at once as well (a replayed fault: {fault})",
                                  status_code=404)
        return False

    def _later(self, seconds: float, messages: list[Any]) -> None:
        def deliver() -> None:
            for item in messages:
                self._inbox.put(item)

        timer = threading.Timer(seconds, deliver)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

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

    def _again(self, live: dict[str, Any]) -> int | None:
        """After an ``expire`` fault: a request asked again is answered again, as recorded."""
        if not self._plan.expired or "method" not in live or "id" not in live:
            return None
        for index in sorted(self._matched):
            direction, recorded = self.events[index]
            if recorded.get("method") == live.get("method") and "id" in recorded and self.matcher(live, recorded):
                self._plan.answered += 1
                self._ids[recorded["id"]] = live["id"]
                for d, message in self.events:
                    if d == "recv" and "method" not in message and message.get("id") == recorded["id"]:
                        self._inbox.put(self._rewrite(message))
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

    def _release(self) -> list[Any]:
        """The server's messages whose causes have been matched, in recorded order."""
        released = []
        for index in sorted(self._waiting):
            if all(need in self._matched for need in self._waiting[index]):
                del self._waiting[index]
                released.append(self._rewrite(self.events[index][1]))
        return released

    def _rewrite(self, message: dict[str, Any]) -> dict[str, Any]:
        if "method" not in message and message.get("id") in self._ids:
            recorded_id = message["id"]
            message = {**message, "id": self._ids[recorded_id]}
            if recorded_id in self._corrupt and "result" in message:
                self._corrupt.discard(recorded_id)
                return {**message, "result": "a malformed result (a replayed fault)"}
            if self._plan.expired and isinstance(message.get("result"), dict):
                return {**message, "result": {**message["result"], "ttlMs": 0}}
            return message
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
        if item is _DEAD:
            self._inbox.put(_DEAD)
            raise ConnectionClosed("the server died (a replayed fault)")
        return item

    def close(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._inbox.put(_CLOSED)

    def _legacy(self) -> bool:
        """Whether the recorded session opened with the legacy ``initialize`` handshake."""
        return any(d == "send" and m.get("method") == "initialize" for d, m in self.events)

    def unused(self) -> list[dict[str, Any]]:
        """The recorded client messages no client message matched (but for those a fault
        made unreachable).

        A recorded era probe of a legacy server is not counted: whether a client sends it
        depends on what its process already knows of the server, not on the code under test.
        """
        legacy = self._legacy()
        return [m for i, (d, m) in enumerate(self.events)
                if d == "send" and i not in self._matched and i not in self._excused
                and not (legacy and m.get("method") == PROBE)]

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
    faults: Iterable[Fault] = (),
    **transport_options: Any,
) -> RecordingTransport | ReplayTransport:
    """A transport that records a session with ``target`` to ``path``, or replays ``path``.

    ``target`` is a stdio command (a list), an HTTP URL (Streamable HTTP) or a transport (or
    a function making one); ``transport_options`` go to the transport made for it (``env``,
    ``headers``, ...). ``mode`` is one of ``MODES``. ``secrets`` are strings redacted from
    the recording besides what is found by name (credential keys, bearer values) and every
    credential the target's transport sends (its ``Credentials``: headers, the URL's user info
    and query, tokens as sent, a stdio server's ``env`` values); ``ignore`` and ``match`` configure the ``Matcher``. ``faults``
    (``Fault``s) are injected into a replay; a recording with faults is refused.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    path = Path(path)
    faults = list(faults)
    secrets = list(secrets)
    if mode == "all" or (mode == "once" and not path.exists()):
        if target is None:
            raise ValueError(f"no recording at {path} and no target to record it from")
        if faults:
            raise ValueError("faults are injected into a replay: record first, then replay with faults=")
        return RecordingTransport(_open(target, transport_options), path, secrets=secrets, target=target)
    if not path.exists():
        raise FileNotFoundError(f"no recording at {path} (mode {mode!r} replays only)")
    credentials = credentials_of(target, transport_options) if target is not None else None
    return ReplayTransport(path, matcher=Matcher(ignore, match), secrets=secrets, strict=strict, faults=faults,
                           credentials=credentials)
