"""Keep-alive pings: a built-in extension that finds a dead legacy server between calls.

``KeepAlive(interval)`` (or ``Plugins(keepalive=interval)``, which adds one) sends ``ping``
every ``interval`` seconds on a daemon thread of its own, from the moment the client is open
until it closes, as the Go SDK's ``KeepAlive`` does. A ping that gets no reply within the
interval (a server stopped, a network that dropped the connection without a word) ends the
connection: pending calls and later ones fail with ``ConnectionClosed`` saying that the
keep-alive ping failed. A server that answers the ping with an error reply is alive: that
ping is only logged.

It pings in the legacy era only: a 2026-07-28 connection is stateless (every request stands
alone), so there is no session to keep alive and nothing to find dead between calls.
"""

from __future__ import annotations

import logging
import math
import threading
from typing import Any, Mapping, Sequence

from .._core.exceptions import ClientClosedError, MCPError, RPCError
from ..extensions import Extension, Options, Session

__all__ = ["KeepAlive"]

log = logging.getLogger(__name__)


class KeepAlive(Extension):
    """Ping the server every ``interval`` seconds; a ping unanswered within it ends the connection."""

    def __init__(self, interval: float) -> None:
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not math.isfinite(interval) \
                or interval <= 0:
            raise ValueError(f"the keep-alive interval must be a positive number of seconds, got {interval!r}")
        self.interval = float(interval)

    def __repr__(self) -> str:
        return f"KeepAlive({self.interval:g})"

    def opened(self, session: Session) -> None:
        if session.era != "legacy":
            log.debug("keep-alive pings are for the legacy era; this %s connection is stateless", session.era)
            return
        threading.Thread(
            target=_beat, args=(session, self.interval), name="mcpclient-keepalive", daemon=True
        ).start()


def _beat(session: Session, interval: float) -> None:
    """Ping until the client closes or the connection ends (the pause between pings is
    the seam's wait, which both end); a failed ping aborts."""
    until = session.until(what="the keep-alive interval")
    while True:
        try:
            until.sleep(interval)
        except MCPError:  # closed, or the connection ended: nothing left to keep alive
            return
        if not session.is_open:
            return
        try:
            session.request("ping", None, options=Options(timeout=interval))
        except RPCError as exc:  # it answered: alive, if odd
            log.warning("the server answered the keep-alive ping with an error: %s", exc)
        except ClientClosedError:
            return
        except MCPError as exc:
            if until.stopped() is not None:  # closed while the ping was out
                return
            log.warning("the keep-alive ping failed (%s): closing the connection", exc)
            session.abort(f"the keep-alive ping failed ({exc}); create a new client to reconnect")
            return


def keepalive_extensions(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """``keepalive=30``: a ``KeepAlive(30)`` (nothing for None)."""
    interval = options.get("keepalive")
    return () if interval is None else (KeepAlive(interval),)
