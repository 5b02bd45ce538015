"""The engine's pending slots: what one waiting call holds, and the Event it waits on.

A ``_Slot`` is one pending request, filled by whoever reads its reply (the reader thread, a
transport's thread, or the caller itself reading inline) and waited on by its caller; each
thread hands its ``threading.Event`` from one call to the next (``_ThreadEvents``).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from .._core.options import NO_OPTIONS, CallOptions, ProgressCallback

__all__ = ["ProgressCallback", "_Slot", "_ThreadEvents", "_events"]


class _Slot:
    """One pending request: the caller waits on ``event``; the reader fills ``reply``.

    Every other field has its default on the class: a call without progress (nearly all)
    sets two attributes, not ten.
    """

    reply: dict[str, Any] | None = None
    error: BaseException | None = None
    on_progress: ProgressCallback | None = None
    touched = 0.0
    last_progress: float | None = None
    progress_idle: threading.Condition | None = None  # set when progress is asked for
    progress_queued = 0  # progress callbacks queued and not yet run
    #: Tells the transport the deadline progress renewed (set when progress is asked for).
    renew: Callable[[float], None] | None = None
    #: Handed to another thread's write (``Engine._send``), which could not send it: the caller
    #: sends it itself.
    unsent = False
    #: When the wait for the reply ends (``time.monotonic()``), which progress may move on; None: never.
    deadline: float | None = None
    #: Stops following the call's cancel (set when it has one).
    unfollow: Callable[[], None] | None = None
    #: The request as sent (``Engine._begin`` sets it), and the call's options.
    message: dict[str, Any] = {}
    options: CallOptions = NO_OPTIONS
    #: Whether the server is told to drop the request when its time runs out.
    cancel_on_timeout = True

    def __init__(self, method: str, event: threading.Event, options: CallOptions | None = None) -> None:
        """A slot waited on until ``options.timeout`` seconds from now, or the call's
        ``deadline`` if that is nearer (no ``options``: no limit)."""
        self.event = event
        self.method = method
        if options is None:
            return
        self.options = options
        timeout, cap = options.timeout, options.deadline
        if timeout is not None:
            end = time.monotonic() + timeout
            self.deadline = end if cap is None or end < cap else cap
        elif cap is not None:
            self.deadline = cap


class _ThreadEvents(threading.local):
    """The ``threading.Event`` a thread's last call waited on, for its next call: a thread
    waits for one call at a time, and a new Event costs more than the rest of a slot
    (``Condition.__init__`` raises and catches three AttributeErrors for a plain Lock).

    A late ``set()`` on a reused Event (the reply of a call that had just timed out, a cancel
    callback already running) only wakes the next call early: ``Engine.request`` treats any
    wake-up without a reply as spurious, clears the Event and looks again.
    """

    free: threading.Event | None = None

    def take(self) -> threading.Event:
        event = self.free
        if event is None:
            return threading.Event()
        self.free = None  # a call nested on this thread (none is expected) gets its own
        if event.is_set():  # not after a reply read inline (see Engine._read_inline)
            event.clear()
        return event


_events = _ThreadEvents()
