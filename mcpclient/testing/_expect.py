"""What a FakeServer records, what a test expects of it, and the report when they differ."""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Union

from attrs import field, frozen

__all__ = ["Call", "Expectation", "describe_calls"]

ArgumentsMatcher = Union[Mapping[str, Any], Callable[[Mapping[str, Any]], bool], None]


@frozen(kw_only=True)
class Call:
    """One request the fake server received, in arrival order.

    ``method`` is the JSON-RPC method and ``params`` its parameters as sent. For
    ``tools/call`` and ``prompts/get``, ``name`` and ``arguments`` are filled; for
    ``resources/read``, ``name`` is the URI. ``known`` is False when the request named a
    tool, prompt or resource the fake server does not have.
    """

    method: str
    params: dict[str, Any] = field(factory=dict)
    name: str | None = None
    arguments: dict[str, Any] | None = None
    known: bool = True

    def __str__(self) -> str:
        text = self.method
        if self.name is not None:
            text += f" {self.name}"
        if self.arguments is not None:
            text += f"({_json(self.arguments)})"
        if not self.known:
            text += "  <- not registered"
        return text


class Expectation:
    """A call the test says must happen: ``times`` calls (None: at least one) that match.

    ``arguments`` is None (any), a mapping (equal), or a predicate on the arguments.
    """

    def __init__(self, method: str, name: str | None, arguments: ArgumentsMatcher, times: int | None) -> None:
        if times is not None and times < 0:
            raise ValueError("times must be a count (or None for 'at least once')")
        self.method = method
        self.name = name
        self.arguments = arguments
        self.times = times

    def matches(self, call: Call) -> bool:
        if call.method != self.method or (self.name is not None and call.name != self.name):
            return False
        if self.arguments is None:
            return True
        args = call.arguments or {}
        if callable(self.arguments):
            try:
                return bool(self.arguments(args))
            except Exception:
                return False
        return dict(args) == dict(self.arguments)

    def count(self, calls: list[Call]) -> int:
        return sum(1 for c in calls if self.matches(c))

    def met(self, calls: list[Call]) -> bool:
        n = self.count(calls)
        return n >= 1 if self.times is None else n == self.times

    def __str__(self) -> str:
        text = self.method if self.name is None else f"{self.method} {self.name}"
        if self.arguments is None:
            text += "(any arguments)"
        elif callable(self.arguments):
            text += f"(arguments matching {getattr(self.arguments, '__name__', 'a predicate')})"
        else:
            text += f"({_json(self.arguments)})"
        return text

    def describe(self, calls: list[Call]) -> str:
        wanted = "at least once" if self.times is None else f"{self.times} time{'s' * (self.times != 1)}"
        return f"expected {self} {wanted}, got {self.count(calls)}"

    def __repr__(self) -> str:
        return f"<Expectation {self}>"


def describe_calls(calls: list[Call]) -> str:
    """The calls a fake server received, one per line (handshake and pings left out)."""
    shown = [c for c in calls if c.method not in ("initialize", "ping", "server/discover")]
    if not shown:
        return "  (no calls)"
    return "\n".join(f"  {c}" for c in shown)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(value)
