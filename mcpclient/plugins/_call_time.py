"""What is left of one call's time, for what a middleware does on the call's behalf.

The policy gate and the tool lockfile do things in the middle of a ``tools/call``: list the
server's tools (to learn a tool's hints, to compare a changed list), wait for an approver, wait
for a comparison another thread runs. All of it comes out of the call's own time: each wait
goes through the call's ``Until`` (``Session.until``: the deadline, the cancel, the client's
close and the connection's death), each request sent gets what is left, none starts once it is
spent, and the call goes on with the rest. So a call with ``timeout=4`` approved at 3.6 s has
0.4 s left for the server, not 4 more.
"""

from __future__ import annotations

from .._core.exceptions import RequestTimeout
from ..extensions import Message, Options, Session, Until, until_of

__all__ = ["CallTime"]


class CallTime:
    """The bounds of the call whose ``options`` a middleware was given: its ``Until``
    (the nearer of its round's ``timeout`` and ``max_total``, its cancel, and, with a
    ``session``, the connection's end)."""

    def __init__(self, options: Options, session: Session | None = None, *, what: str = "the call") -> None:
        self.options = options
        self.until: Until = session.until(options, what=what) if session is not None else until_of(options, what=what)
        self.spent = False  # whether anything waited or was sent on the call's behalf

    def remaining(self) -> float | None:
        """Seconds left (None: no limit)."""
        return self.until.remaining()

    def request_options(self, method: str) -> Options:
        """Options for one request sent on the call's behalf: what is left, the call's cancel.

        Raises ``RequestTimeout`` (nothing sent) when the call's time is spent.
        """
        left = self.until.remaining()
        if left is not None and left <= 0:
            raise RequestTimeout(f"the call's time ran out before {method} could be sent; nothing was sent",
                                 method=method, timeout=self.options.timeout)
        self.spent = True
        return Options(timeout=left, cancel=self.options.cancel)

    def passed_on(self, message: Message) -> Message:
        """``message`` with what is left of the call's time, once anything was spent for it.

        Raises ``RequestTimeout`` (the call not sent) when nothing is left.
        """
        if not self.spent:
            return message
        left = self.until.remaining()
        if left is not None and left <= 0:
            raise RequestTimeout(f"the call's time ran out before {message.method} could be sent; it was not sent",
                                 method=message.method, timeout=message.options.timeout)
        return message.within(left)
