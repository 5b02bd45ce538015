"""What is left of one call's time, for the requests a middleware sends on the call's behalf.

The policy gate and the tool lockfile list the server's tools in the middle of a
``tools/call`` (to learn a tool's hints, to compare a changed list). Those listings come out
of the call's own time: each page gets what is left, none starts once it is spent, and the
call goes on with the rest. So a call with ``timeout=2`` ends by its deadline however slow
the server's ``tools/list`` is.
"""

from __future__ import annotations

import attrs

from .._core.exceptions import RequestTimeout
from .._core.timeouts import Deadline
from ..extensions import Message, Options

__all__ = ["CallTime"]


class CallTime:
    """The deadline of the call whose ``options`` a middleware was given (its round's
    ``timeout`` or its ``max_total``, the nearer; neither: no limit)."""

    def __init__(self, options: Options) -> None:
        limits = [t for t in (options.timeout, options.max_total) if t is not None]
        self.options = options
        self._deadline = Deadline(min(limits) if limits else None)
        self.spent = False  # whether a request was sent on the call's behalf

    def remaining(self) -> float | None:
        """Seconds left (None: no limit)."""
        return self._deadline.remaining()

    def request_options(self, method: str) -> Options:
        """Options for one request sent on the call's behalf: what is left, the call's cancel.

        Raises ``RequestTimeout`` (nothing sent) when the call's time is spent.
        """
        left = self._deadline.remaining()
        if left is not None and left <= 0:
            raise RequestTimeout(f"the call's time ran out before {method} could be sent; nothing was sent",
                                 method=method, timeout=self.options.timeout)
        self.spent = True
        return Options(timeout=left, cancel=self.options.cancel)

    def passed_on(self, message: Message) -> Message:
        """``message`` with what is left of the call's time, once requests were sent for it.

        Raises ``RequestTimeout`` (the call not sent) when nothing is left.
        """
        if not self.spent:
            return message
        left = self._deadline.remaining()
        if left is None:
            return message
        if left <= 0:
            raise RequestTimeout(f"the call's time ran out before {message.method} could be sent; it was not sent",
                                 method=message.method, timeout=message.options.timeout)
        options = message.options
        return message.replace(options=attrs.evolve(
            options, timeout=left if options.timeout is None else min(options.timeout, left),
            max_total=left if options.max_total is None else min(options.max_total, left)))
