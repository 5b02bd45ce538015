"""Time budgets: the "not given" timeout sentinel, the client's default, and ``Deadline``."""

from __future__ import annotations

import time
from typing import Any

__all__ = ["DEFAULT", "DEFAULT_TIMEOUT", "Deadline", "Timeouts"]

#: The timeout of every call unless the client or the call says otherwise, in seconds.
DEFAULT_TIMEOUT = 60.0


class _Default:
    def __repr__(self) -> str:
        return "<default>"

    def __reduce__(self) -> str:
        return "DEFAULT"  # unpickled as the one DEFAULT (compared with ``is``)


#: "Not given": use the client's timeout. (None means "no limit".)
DEFAULT: Any = _Default()


class Timeouts:
    """The client's default timeout, shared by reference with every feature and ``Task``.

    ``Client.timeout`` may be changed at any time; a handle made earlier (a ``Task``) must
    see the new value, so the features hold this object rather than a copy of the number.
    """

    __slots__ = ("default",)

    def __init__(self, default: float | None) -> None:
        self.default = default

    def resolve(self, timeout: float | None) -> float | None:
        """``timeout`` itself, or the client's default when it is ``DEFAULT``."""
        return self.default if timeout is DEFAULT else timeout


class Deadline:
    """One time budget spread over several steps (the pages of a list, the rounds of a call).

    ``None`` is no limit: ``remaining()`` is then ``None`` too, which every blocking call
    takes for "wait as long as it takes".
    """

    __slots__ = ("_end",)

    def __init__(self, timeout: float | None) -> None:
        self._end = None if timeout is None else time.monotonic() + timeout

    def remaining(self) -> float | None:
        """Seconds left (never below zero), or ``None`` without a limit."""
        return None if self._end is None else max(0.0, self._end - time.monotonic())

    @property
    def expired(self) -> bool:
        return self._end is not None and time.monotonic() >= self._end
