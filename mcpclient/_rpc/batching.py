"""The stdio write batching: a request sent while another thread writes goes out with it.

Over a ``PipeTransport`` (stdio), a request whose thread finds the write turn taken
is framed and handed to the thread writing now (``Outbox.hand_over``) instead of waiting for
its turn; that writer, once its own message is out, writes what was handed over meanwhile in
as few system calls as the pipe takes (``write_handed``), and gives back to its caller what
the transport did not take (``_Slot.unsent``): the caller then sends it itself. The engine
owns the write turn; this module owns what is handed over.
"""

from __future__ import annotations

import threading
from typing import Any

from .._core.exceptions import TransportError
from ..transports.base import PipeTransport
from .slots import _Slot

__all__ = ["Outbox"]


class Outbox:
    """The requests handed to the thread holding the write turn, as (frame, slot) pairs."""

    __slots__ = ("_frames", "lock", "queue", "writing")

    def __init__(self, frames: PipeTransport) -> None:
        self._frames = frames
        self.queue: list[tuple[bytes, _Slot]] = []
        self.lock = threading.Lock()
        #: A writer holds the write turn and will look at the queue again.
        self.writing = False

    def reset(self) -> None:
        """In a forked child: a new lock and nothing handed over (the threads are gone)."""
        self.lock, self.queue, self.writing = threading.Lock(), [], False

    def hand_over(self, message: dict[str, Any], slot: _Slot) -> bool:
        """Queue a request for the thread writing now; False when it must wait its turn (too
        big for one atomic write, or the writer has already looked for the last time)."""
        try:
            frame = self._frames.frame(message)
        except ValueError as exc:  # as Engine._send reports it (a TypeError goes up as it is there too)
            raise TransportError(f"could not send to the server: {exc}") from exc
        if frame is None:
            return False
        with self.lock:
            if not self.writing:
                return False
            self.queue.append((frame, slot))
        return True

    def withdraw(self, slot: _Slot) -> bool:
        """Take back a request still waiting in the writer's hands (one whose writer is stuck on
        a full pipe); True when it was there, so it will never be sent."""
        if not self.queue:  # (the usual case: nothing handed over, no lock taken)
            return False
        with self.lock:
            for index, (_, queued) in enumerate(self.queue):
                if queued is slot:
                    del self.queue[index]
                    return True
        return False

    def write_handed(self) -> None:
        """With the write turn, after this thread's own message: write what other threads
        handed over meanwhile, until none is left; what the transport did not take goes back
        to its caller. Ends with ``writing`` false, however it ends, so nothing handed over
        waits for a writer that has gone (only a batch being written when an exception such as
        KeyboardInterrupt strikes stays unknown: it may be out, so it is not sent again)."""
        try:
            while True:
                with self.lock:
                    batch = self.queue
                    if not batch:
                        self.writing = False
                        return
                    self.queue = []
                sent = self._frames.write_frames([frame for frame, _ in batch])
                for _, slot in batch[sent:]:
                    slot.unsent = True
                    slot.event.set()
        except BaseException:
            with self.lock:
                self.writing = False
                left, self.queue = self.queue, []
            for _, slot in left:
                slot.unsent = True
                slot.event.set()
            raise
