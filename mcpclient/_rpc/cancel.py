"""Cancellation as seen by handlers: a small, thread-safe flag with a reason."""

from __future__ import annotations

import threading

from .._exceptions import RequestCancelled

__all__ = ["CancelToken"]


class CancelToken:
    """Tells a handler that its work is no longer wanted.

    Every sampling and elicitation handler receives one. It is cancelled when the client
    closes, or when the server sends ``notifications/cancelled`` for the request being handled.
    A handler that waits (on a user, a model, a queue) should wait on ``token.wait(timeout)``
    or check ``token.cancelled`` so that ``Client.close()`` returns promptly.
    """

    __slots__ = ("_event", "reason", "by_peer")

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: str | None = None
        self.by_peer = False

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until cancelled or ``timeout`` seconds pass; return whether cancelled."""
        return self._event.wait(timeout)

    def cancel(self, reason: str = "cancelled", *, by_peer: bool = False) -> None:
        """Cancel; the first reason given is kept."""
        if not self._event.is_set():
            self.reason = reason
            self.by_peer = by_peer
            self._event.set()

    def raise_if_cancelled(self) -> None:
        """Raise ``RequestCancelled`` if cancelled."""
        if self._event.is_set():
            raise RequestCancelled(f"cancelled: {self.reason}")

    def __repr__(self) -> str:
        state = f"cancelled ({self.reason})" if self.cancelled else "active"
        return f"<CancelToken {state}>"
