"""When a call is sent again: ``Retry``, the policy a user states, and ``resend``, the loop
that applies it to a round of a call (the conversation's). ``SharedClient`` and ``ClientPool``
read the same policy after a dead server (``_build/reopening``: ``allows`` and ``attempts``).

A failure is sent again when the policy counts it transient (a connection error, an HTTP status
of ``statuses``, a JSON-RPC error code of ``codes``) and sending it again cannot do harm: the
call changes nothing (a method that changes nothing, a tool annotated ``readOnlyHint`` or
``idempotentHint``), or the caller said it may run twice (``idempotent=True``), or the failure
proves it never ran (``delivered`` false: a refused connection, an HTTP 429 or 503). Every
pause waits through the one wait primitive (``Until``), so it ends at the call's deadline, its
cancel, ``close()`` and the connection's death; a pause that would end past the deadline is
not taken: the call fails at once with the last error.
"""

from __future__ import annotations

import logging
import random
from typing import Any, Callable, Collection, TypeVar

import attrs

from .exceptions import HTTPStatusError, MCPError, RPCError, TransportError
from .waiting import Until

__all__ = ["RETRY_AFTER_MAX", "Retry", "resend", "retry_deadline"]

log = logging.getLogger("mcpclient")

T = TypeVar("T")

#: The longest ``Retry-After`` a ``Retry`` honours unless told (``retry_after_max``), in
#: seconds: a server asking for more gets the error at once, rather than a wait nobody expects.
RETRY_AFTER_MAX = 60.0


def _codes(values: Collection[int]) -> frozenset[int]:
    return frozenset(values)


def _at_least(low: float) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and value < low:
            raise ValueError(f"Retry({attribute.name}=...) must be {low} or more, got {value!r}")

    return check


def _fraction(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"Retry({attribute.name}=...) must be between 0 and 1, got {value!r}")


@attrs.frozen(kw_only=True)
class Retry:
    """When a call is sent again after a transient failure, as urllib3's ``Retry`` says it for
    HTTP requests. Give it to a client (``connect(url, retry=Retry())``) for every call, or to
    one call (``call_tool(..., retry=Retry(...))``; ``Retry(attempts=1)``: none for that call).

    ``attempts`` is the most a call is sent, the first included. The pause before each further
    attempt is ``backoff`` seconds, doubled each time up to ``backoff_max``, less up to
    ``jitter`` of it at random (so that clients that failed together do not come back
    together); a server's ``Retry-After`` replaces it (one over ``retry_after_max``, 60 s by
    default, fails the call at once).

    What is transient: a connection error (refused, dropped, a reply stream that broke), an
    HTTP status of ``statuses`` (429 and 503), a JSON-RPC error code of ``codes`` (none by
    default: a server's "busy" code, say). A timeout, a cancel, ``close()`` and any other error
    end the call at once.

    Only what is harmless to send again is sent again: a call that changes nothing (lists,
    reads, pings, prompts, completions, and a tool whose annotations say ``readOnlyHint`` or
    ``idempotentHint``), or any call whose failure proves it never ran (a refused connection,
    an HTTP 429 or 503). A call that may have run (a dropped connection after its bytes went
    out, a JSON-RPC error) is sent again only with ``idempotent=True``: the caller says it is
    safe to run twice (give it to that call alone: ``retry=policy.new(idempotent=True)``).
    ``attempts=1`` sends a call once (not even the re-send after a broken reply stream).

    ``total`` bounds all attempts and pauses, in seconds from the call's start; the call's own
    time (its ``timeout``, or ``max_total``) always does, whichever is nearer: a retry never
    makes a call longer. The first attempt runs as any call does (progress renews its
    timeout); a further one starts only while the time lasts, and gets what is left.
    Every attempt goes through the middleware as a message of its own (``Options.attempt``).
    Immutable; one may serve many clients.
    """

    attempts: int = attrs.field(default=3, validator=_at_least(1))
    backoff: float = attrs.field(default=0.5, validator=_at_least(0.0))
    backoff_max: float = attrs.field(default=10.0, validator=_at_least(0.0))
    jitter: float = attrs.field(default=0.25, validator=_fraction)
    statuses: frozenset[int] = attrs.field(default=frozenset({429, 503}), converter=_codes)
    codes: frozenset[int] = attrs.field(default=frozenset(), converter=_codes)
    total: float | None = attrs.field(default=None, validator=_at_least(0.0))
    idempotent: bool = False
    retry_after_max: float = attrs.field(default=RETRY_AFTER_MAX, validator=_at_least(0.0))

    def new(self, **changes: Any) -> Retry:
        """A copy with ``changes`` (``client_retry.new(idempotent=True)`` for one call)."""
        return attrs.evolve(self, **changes)

    def pause(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after attempt ``attempt`` (1 for the first) failed: the server's
        ``retry_after`` if it gave one, else the backoff with its jitter."""
        if retry_after is not None:
            return max(0.0, retry_after)
        delay: float = min(self.backoff_max, self.backoff * 2.0 ** (attempt - 1))
        return delay * (1.0 - self.jitter * random.random())

    def transient(self, error: BaseException) -> bool:
        """Whether ``error`` is a failure this policy counts as passing (see the class)."""
        if isinstance(error, HTTPStatusError):
            return error.status_code in self.statuses
        if isinstance(error, TransportError):
            return True
        return isinstance(error, RPCError) and error.code in self.codes

    def allows(self, error: BaseException, changes_nothing: bool) -> bool:
        """Whether a call that failed with ``error`` may be sent again (not counting attempts
        and time): transient, and harmless to send again (see the class)."""
        return self.transient(error) and (
            changes_nothing or self.idempotent or getattr(error, "delivered", True) is False
        )


def retry_deadline(retry: Retry, started: float, timeout: float | None, deadline: float | None) -> float | None:
    """When a call started at ``started`` (``time.monotonic()``) with ``timeout`` and
    ``deadline`` (its ``max_total``'s end; None: none) must be over, retries and all: the
    nearest of ``deadline``, ``timeout`` (when no ``deadline``) and ``retry.total``."""
    ends = [deadline if deadline is not None else (None if timeout is None else started + timeout),
            None if retry.total is None else started + retry.total]
    known = [end for end in ends if end is not None]
    return min(known) if known else None


def resend(
    retry: Retry, error: MCPError, send: Callable[[int, float | None], T], *, changes_nothing: bool,
    until: Until, what: str,
) -> T:
    """The call whose first attempt failed with ``error``, sent again as ``retry`` allows.

    ``send(attempt, left)`` makes attempt ``attempt`` (2, 3...) with ``left`` seconds of the
    call's time (None: no limit). ``until`` bounds the whole call: each pause waits through it
    (its deadline, cancel and ends: ``close()``, the connection's death), and raises what it
    raises when one of them comes. When no further attempt is allowed, or the next cannot
    start in time, raises the last error. ``what`` names the call in the log.
    """
    attempt = 1
    while True:
        if attempt >= retry.attempts or not retry.allows(error, changes_nothing):
            raise error
        asked = getattr(error, "retry_after", None)
        pause = retry.pause(attempt, asked)
        left = until.remaining()
        if (asked is not None and asked > retry.retry_after_max) or (left is not None and pause >= left):
            log.info("%s failed (%s); no time for attempt %d (%.2fs away)", what, error, attempt + 1, pause)
            raise error
        log.info("%s failed (%s); attempt %d of %d in %.2fs", what, error, attempt + 1, retry.attempts, pause)
        until.sleep(pause)
        attempt += 1
        try:
            return send(attempt, until.remaining())
        except MCPError as exc:
            error = exc
