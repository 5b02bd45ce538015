"""Approvers a web app answers: the call waits in a queue until someone says yes or no, or its deadline.

    >>> approvals = WebApprovals(timeout=120)
    >>> policy = Policy(rules, approver=approvals)            # the gate asks it
    >>> approvals.pending()        # in a view: what waits, each with its id and cleaned lines
    >>> approvals.answer(ident, True)                         # an admin action says yes

The calling thread (a worker running the agent, a Celery task) blocks in ``approvals(request)``
until ``answer`` is called for its id from any thread (a Django admin action, a Flask view),
or until the first of these ends it, denied: ``timeout`` seconds (the approver's own limit),
the call's deadline (a call with ``timeout=5`` waits 5 s at most), the call's cancel (a token
or a plain Event), its client's ``close()``, the connection's death (it waits through the
call's ``request.until``), and ``WebApprovals.close()`` (the app shutting down: every wait ends
at once, and later requests are denied without waiting). A request nobody answers never holds
a thread longer than that, and the time it waited is the call's: approved at 3.6 s of a call
with ``timeout=4``, the call has 0.4 s left. ``on_request(pending)``, if given, is told of each new request (to
notify a person), on the calling thread, before it waits; what it raises is logged.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from typing import Callable

import attrs

from .._core.exceptions import MCPError
from ..extensions import Signal
from .policy import ApprovalRequest

__all__ = ["Pending", "WebApprovals"]

log = logging.getLogger("mcpclient.policy")


@attrs.frozen(kw_only=True)
class Pending:
    """A call waiting for an answer: ``id`` to answer it by, the ``request``, its ``deadline``
    (``time.time()`` seconds, for showing), and ``lines`` (the request as inert text)."""

    id: str
    request: ApprovalRequest
    deadline: float
    lines: tuple[str, ...]


class _Slot:
    def __init__(self, pending: Pending) -> None:
        self.pending = pending
        self.answered = Signal()
        self.allowed = False


class WebApprovals:
    """An approver whose answers come from elsewhere (see the module docstring); thread-safe."""

    def __init__(self, *, timeout: float = 300.0, on_request: Callable[[Pending], None] | None = None) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
        self.timeout = timeout
        self.on_request = on_request
        self._slots: dict[str, _Slot] = {}
        self._lock = threading.Lock()
        self._closed = False

    def __call__(self, request: ApprovalRequest) -> bool:
        """Wait for an answer to ``request``; False when its wait ends first (module docstring)."""
        until = request.until
        left = until.remaining()
        timeout = self.timeout if left is None else min(self.timeout, left)
        slot = _Slot(Pending(id=secrets.token_urlsafe(12), request=request, deadline=time.time() + timeout,
                             lines=tuple(request.lines())))
        with self._lock:
            if self._closed:
                log.info("policy: approvals are closed: the call is denied without asking")
                return False
            self._slots[slot.pending.id] = slot
        def ended() -> None:  # the call ended: off the page at once (not when this thread wakes), denied
            with self._lock:
                self._slots.pop(slot.pending.id, None)
            slot.answered.set()

        request.ended.add_callback(ended)
        try:
            if self.on_request is not None:
                try:
                    self.on_request(slot.pending)
                except Exception:
                    log.exception("policy: on_request raised")
            try:
                answered = until.wait(slot.answered, timeout=self.timeout)
            except MCPError as stop:  # the call's deadline, cancel, close, death
                log.info("policy: approval %s ended unanswered (%s): denied", slot.pending.id, stop)
                return False
            if not answered:
                log.info("policy: nobody answered approval %s within %.1f s: denied", slot.pending.id, self.timeout)
                return False
            if request.ended.cancelled and not slot.allowed:
                log.info("policy: approval %s ended unanswered (%s): denied", slot.pending.id, request.ended.reason)
            return slot.allowed
        finally:
            request.ended.remove_callback(ended)
            with self._lock:
                self._slots.pop(slot.pending.id, None)

    def close(self) -> None:
        """Deny every call waiting now and every later one at once (for an app shutting down)."""
        with self._lock:
            self._closed = True
            slots = list(self._slots.values())
        for slot in slots:
            slot.answered.set()

    def pending(self) -> list[Pending]:
        """The calls waiting now, oldest first."""
        with self._lock:
            return [slot.pending for slot in self._slots.values()]

    def answer(self, ident: str, allow: bool) -> bool:
        """Say yes (``allow=True``) or no to the call ``ident``; False when it no longer waits
        (answered already, or its deadline passed).

        It trusts its caller: the page that calls it checks the ``Host`` header, requires a
        login and keeps CSRF protection (examples/django_approvals.py, flask_approvals.py).
        Loopback alone is no protection against DNS rebinding."""
        with self._lock:
            slot = self._slots.get(ident)
            if slot is None or slot.answered.is_set():
                return False
            slot.allowed = allow is True
            slot.answered.set()
            return True
