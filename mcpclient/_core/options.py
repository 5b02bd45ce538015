"""The options of one call: made once where the call starts, read by every layer on the way down.

``Client`` makes a ``CallOptions`` for each call; ``Calls``, the ``Conversation`` and the
engine read it and pass it on as one value. It is the private, cheap sibling of the public
``extensions.Options`` that middleware sees: the same fields, read the same way (a plain
class with slots: an attrs frozen instance costs about five times as much to make, on every
call), and ``deadline``, the end of the whole call, so that each input round and re-send ends
by it without being told again.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Mapping

from .cancel import Cancel

if TYPE_CHECKING:
    from .retry import Retry

__all__ = ["NO_OPTIONS", "CallOptions", "ProgressCallback"]

#: ``on_progress(progress, total, message)``, run on a dispatch thread.
ProgressCallback = Callable[[float, "float | None", "str | None"], None]


class CallOptions:
    """The options of one call (see ``extensions.Options`` for what each field means).

    ``timeout`` bounds each round's wait for its reply (renewed by progress); ``max_total``
    caps the whole call, which must so be over by ``deadline`` (``time.monotonic()``), counted
    from when the value was made; None: no cap. ``cancel`` ends the call from another thread;
    ``on_progress``, ``on_sent``, ``meta``, ``headers`` and ``resendable`` are the call's.
    ``retry`` is the call's ``Retry`` (None: the client's); ``attempt``
    counts the sends of one round (1 for the first; a retry's copy says which it is).
    ``on_input`` says who answers the server's input rounds: "answer" (the handlers, within
    the call) or "return" (an input round ends the call, for the caller to resume).
    Never changed once made: ``resending()`` and ``attempting()`` give marked copies.
    """

    __slots__ = ("timeout", "max_total", "deadline", "on_progress", "cancel", "meta", "on_sent", "headers",
                 "resendable", "retry", "attempt", "on_input")

    def __init__(
        self,
        timeout: float | None = None,
        *,
        max_total: float | None = None,
        on_progress: ProgressCallback | None = None,
        cancel: Cancel | None = None,
        meta: Mapping[str, Any] | None = None,
        on_sent: Callable[[Any], None] | None = None,
        headers: Mapping[str, str] | None = None,
        resendable: bool = False,
        retry: Retry | None = None,
        attempt: int = 1,
        on_input: str = "answer",
    ) -> None:
        self.timeout = timeout
        self.max_total = max_total
        self.deadline = None if max_total is None else time.monotonic() + max_total
        self.on_progress = on_progress
        self.cancel = cancel
        self.meta = meta
        self.on_sent = on_sent
        self.headers = headers
        self.resendable = resendable
        self.retry = retry
        self.attempt = attempt
        self.on_input = on_input

    def remaining(self) -> float | None:
        """Seconds left of ``max_total`` (never below zero); None without a cap."""
        deadline = self.deadline
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def resending(self) -> CallOptions:
        """These options, marked as those of a call that changes nothing on the server (it may
        be sent again after an attempt that broke before any reply)."""
        if self.resendable:
            return self
        marked = self._copy()
        marked.resendable = True
        return marked

    def retrying(self, retry: Retry) -> CallOptions:
        """These options with ``retry`` as the call's ``Retry`` (the client's, for a call
        that brought none)."""
        marked = self._copy()
        marked.retry = retry
        return marked

    def attempting(self, attempt: int, left: float | None) -> CallOptions:
        """These options for attempt ``attempt`` of a round, within ``left`` more seconds (the
        call's time that is left; None: no cap): the timeout and the cap at most that."""
        marked = self._copy()
        marked.attempt = attempt
        if left is not None:
            marked.timeout = left if self.timeout is None else min(self.timeout, left)
            end = time.monotonic() + left
            marked.deadline = end if self.deadline is None else min(self.deadline, end)
            marked.max_total = left if self.max_total is None else min(self.max_total, left)
        return marked

    def _copy(self) -> CallOptions:
        copied = object.__new__(CallOptions)
        for name in CallOptions.__slots__:
            object.__setattr__(copied, name, getattr(self, name))
        return copied

    def __repr__(self) -> str:
        given = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__
                          if name not in ("deadline", "attempt") and getattr(self, name) not in (None, False, "answer"))
        return f"CallOptions({given})"


#: A call with no options: no timeout, nothing else (never changed, as none is).
NO_OPTIONS = CallOptions()
