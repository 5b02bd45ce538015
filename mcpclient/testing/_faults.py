"""Faults a replay injects at chosen points: ``Fault.drop(after=3)``, ``Fault.latency(2.0)``, ...

A ``Fault`` names what goes wrong and where: the request it strikes is the first one, after
``after`` requests were answered from the recording (``initialize`` counts; the era probe a
legacy recording lacks does not), whose method is ``method`` (any, when None). Each fault
strikes once, where it is; ``expire`` holds from its point on. ``ReplayTransport`` plays them
(``recorded(path, faults=[...])``); what each does to the client is in docs/testing.md.
"""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["KINDS", "Fault", "FaultPlan"]

#: The kinds of fault, each made by the ``Fault`` class method of that name.
KINDS = ("latency", "drop", "death", "lost_session", "expire", "malformed")


@attrs.frozen(kw_only=True)
class Fault:
    """One fault of a replay; make one with a class method (``Fault.drop(after=3)``)."""

    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    after: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    method: str | None = None
    seconds: float = 0.0

    @classmethod
    def latency(cls, seconds: float, *, after: int = 0, method: str | None = None) -> Fault:
        """The server's answer to the struck request comes ``seconds`` late (and what the
        request made it send before the answer: notifications, server requests)."""
        if not seconds >= 0:
            raise ValueError(f"latency takes seconds >= 0, got {seconds!r}")
        return cls(kind="latency", seconds=float(seconds), after=after, method=method)

    @classmethod
    def drop(cls, *, after: int = 0, method: str | None = None) -> Fault:
        """The connection carrying the struck request's reply breaks before the reply (an HTTP
        stream cut): that call fails with ``StreamInterrupted``; the client sends it again
        once if it changes nothing, and the recording answers the copy."""
        return cls(kind="drop", after=after, method=method)

    @classmethod
    def death(cls, *, after: int = 0, method: str | None = None) -> Fault:
        """The server dies on the struck request: pending calls fail with ``ConnectionClosed``,
        and so does every call after."""
        return cls(kind="death", after=after, method=method)

    @classmethod
    def lost_session(cls, *, after: int = 0, method: str | None = None) -> Fault:
        """The server answers the struck request HTTP 404 (it lost the session) and the new
        session the transport starts is lost at once as well: the call fails with
        ``HTTPStatusError`` (status 404); the calls after it are answered."""
        return cls(kind="lost_session", after=after, method=method)

    @classmethod
    def expire(cls, *, after: int = 0, method: str | None = None) -> Fault:
        """From the struck request on, results come already expired (``ttlMs`` 0), so a client
        with a cache must ask again; the recording answers a request asked again."""
        return cls(kind="expire", after=after, method=method)

    @classmethod
    def malformed(cls, *, after: int = 0, method: str | None = None) -> Fault:
        """The reply to the struck request is malformed (its result is not an object): the
        call fails with ``ProtocolError``."""
        return cls(kind="malformed", after=after, method=method)

    def __str__(self) -> str:
        where = f"after {self.after} request(s)" + (f", on {self.method}" if self.method else "")
        what = f"latency {self.seconds:g} s" if self.kind == "latency" else self.kind.replace("_", " ")
        return f"{what} {where}"


class FaultPlan:
    """Which fault strikes which request of one replay; not thread-safe (the replay's lock)."""

    def __init__(self, faults: Any) -> None:
        self.waiting: list[Fault] = list(faults)
        for fault in self.waiting:
            if not isinstance(fault, Fault):
                raise TypeError(f"faults= takes Fault objects (Fault.drop(after=3), ...), got {fault!r}")
        self.answered = 0
        #: Whether an ``expire`` fault struck: results are expired from then on.
        self.expired = False
        self.struck: list[Fault] = []

    def strike(self, method: str) -> Fault | None:
        """The fault that strikes the request ``method`` about to be answered, if any."""
        found = next((f for f in self.waiting if self.answered >= f.after and f.method in (None, method)), None)
        if found is not None:
            self.waiting.remove(found)
            self.struck.append(found)
            self.expired = self.expired or found.kind == "expire"
        if found is None or found.kind not in ("drop", "lost_session"):
            self.answered += 1  # a refused request is answered later, or never
        return found
