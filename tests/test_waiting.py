"""The one wait primitive (``mcpclient._core.waiting``): each wait ends at the first of its
deadline, its cancel (a token or a plain Event) and the end of what it serves, with the
matching error, or returns when what it waits for comes first. The connection's end is the
engine's (a real stdio server closed, then killed), as a plug-in gets it from the seam.

Bounds are loose: what ends a wait comes at a fraction of a second, a wait that missed it
would block for 30 s or for ever, and each test allows several seconds.
"""

from __future__ import annotations

import os
import signal as signals
import sys
import threading
import time
from typing import Any

import pytest

from mcpclient import (
    CancelToken,
    Client,
    ClientClosedError,
    ConnectionClosed,
    RequestCancelled,
    RequestTimeout,
    StdioTransport,
)
from mcpclient.extensions import Extension, Job, Options, Session, Signal, Until, WaitLock
from mcpclient._core.waiting import Lifetime

from .conftest import SDK_SERVER

pytestmark = pytest.mark.timeout(60)

#: What a wait that missed its end would still be doing: far from every bound asserted.
LONG = 30.0
#: How soon after its end a wait must return (the promise is "about a second").
SOON = 5.0


def later(seconds: float, fn: Any) -> threading.Thread:
    """``fn()`` on a thread, ``seconds`` from now."""
    def run() -> None:
        time.sleep(seconds)
        fn()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def timed(fn: Any) -> tuple[float, Any]:
    """How long ``fn()`` took, and what it returned or raised."""
    started = time.monotonic()
    try:
        outcome: Any = fn()
    except Exception as exc:  # what ended the wait, for the test to judge
        outcome = exc
    return time.monotonic() - started, outcome


# -- what a wait waits for ------------------------------------------------------------------------


def test_a_signal_set_from_another_thread_ends_the_wait_with_true() -> None:
    signal = Signal()
    later(0.1, signal.set)
    took, outcome = timed(lambda: Until(LONG).wait(signal))
    assert outcome is True and took < SOON


def test_a_signal_already_set_returns_at_once_even_when_the_wait_is_over() -> None:
    signal = Signal()
    signal.set()
    token = CancelToken()
    token.cancel()
    assert Until(0, cancel=token).wait(signal) is True  # what it waits for wins


def test_the_waiters_own_timeout_returns_false_and_the_calls_deadline_raises() -> None:
    took, outcome = timed(lambda: Until(LONG).wait(Signal(), timeout=0.2))
    assert outcome is False and 0.2 <= took < SOON
    took, outcome = timed(lambda: Until(0.2, method="tools/call", what="the approval").wait(Signal(), timeout=LONG))
    assert isinstance(outcome, RequestTimeout) and 0.2 <= took < SOON
    assert outcome.method == "tools/call" and "the approval" in str(outcome)


def test_a_cancel_token_ends_the_wait_with_request_cancelled() -> None:
    token = CancelToken()
    later(0.1, lambda: token.cancel("stop"))
    took, outcome = timed(lambda: Until(LONG, cancel=token).wait(Signal()))
    assert isinstance(outcome, RequestCancelled) and took < SOON and "stop" in str(outcome)


def test_a_plain_event_ends_the_wait_with_request_cancelled() -> None:
    event = threading.Event()
    later(0.1, event.set)
    took, outcome = timed(lambda: Until(cancel=event).wait(Signal()))
    assert isinstance(outcome, RequestCancelled) and took < SOON


def test_a_lifetimes_end_raises_its_own_error() -> None:
    life = Lifetime()
    later(0.1, lambda: life.end(ConnectionClosed("the server exited", exit_code=3)))
    took, outcome = timed(lambda: Until(LONG, ends=[life]).wait(Signal()))
    assert isinstance(outcome, ConnectionClosed) and took < SOON
    assert outcome.exit_code == 3 and outcome is not life.error  # a copy: tracebacks never pile up
    life.end(ClientClosedError())  # a later end changes nothing
    assert isinstance(life.error, ConnectionClosed)
    took, outcome = timed(lambda: Until(LONG, ends=[life]).sleep(LONG))  # already ended: at once
    assert isinstance(outcome, ConnectionClosed) and took < SOON


def test_a_cancel_token_can_be_waited_for_as_a_signal() -> None:
    token = CancelToken()
    later(0.1, token.cancel)
    assert Until(LONG).wait(token) is True


def test_a_signal_cleared_and_set_again_wakes_each_wait() -> None:
    signal = Signal()
    for _ in range(3):
        later(0.05, signal.set)
        assert Until(LONG).wait(signal) is True
        signal.clear()
        assert not signal.is_set()


# -- sleeping ---------------------------------------------------------------------------------


def test_sleep_pauses_and_a_stop_ends_it_early() -> None:
    took, outcome = timed(lambda: Until(LONG).sleep(0.2))
    assert outcome is None and 0.2 <= took < SOON
    token = CancelToken()
    later(0.1, token.cancel)
    took, outcome = timed(lambda: Until(cancel=token).sleep(LONG))
    assert isinstance(outcome, RequestCancelled) and took < SOON
    took, outcome = timed(lambda: Until(0.1).sleep(LONG))
    assert isinstance(outcome, RequestTimeout) and took < SOON


# -- locks ------------------------------------------------------------------------------------


def test_a_wait_lock_is_handed_on_at_release_and_a_stop_frees_its_waiter() -> None:
    lock = WaitLock()
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with Until(LONG).hold(lock):
            held.set()
            release.wait(LONG)

    threading.Thread(target=holder, daemon=True).start()
    assert held.wait(SOON)
    token = CancelToken()
    later(0.1, token.cancel)
    took, outcome = timed(lambda: Until(LONG, cancel=token).hold(lock).__enter__())
    assert isinstance(outcome, RequestCancelled) and took < SOON
    assert lock.locked()  # still the holder's
    took, outcome = timed(lambda: Until(0.1).hold(lock).__enter__())
    assert isinstance(outcome, RequestTimeout) and took < SOON
    later(0.1, release.set)
    holding = Until(LONG).hold(lock)
    took, outcome = timed(holding.__enter__)  # woken by the release
    assert outcome is None and took < SOON and lock.locked()
    holding.__exit__(None, None, None)
    assert not lock.locked()


# -- foreign blocking calls -----------------------------------------------------------------


def test_a_foreign_call_returns_its_value_or_raises_its_error() -> None:
    assert Until(LONG).call(lambda x: x * 2, 21) == 42
    with pytest.raises(ZeroDivisionError):
        Until(LONG).call(lambda: 1 / 0)


def test_a_stop_abandons_a_foreign_call_whose_outcome_a_later_wait_takes_up() -> None:
    answer = threading.Event()

    def blocked_read() -> str:  # what input() is to the caller: nothing can wake it
        answer.wait(LONG)
        return "y"

    job = Job(blocked_read)
    token = CancelToken()
    later(0.1, token.cancel)
    took, outcome = timed(lambda: Until(LONG, cancel=token).finish(job))
    assert isinstance(outcome, RequestCancelled) and took < SOON
    assert not job.done.is_set()  # it runs on, abandoned
    answer.set()
    assert Until(LONG).finish(job) == "y"


# -- narrowing and stop callbacks -------------------------------------------------------------


def test_within_narrows_the_time_and_keeps_the_cancel_and_the_ends() -> None:
    token = CancelToken()
    life = Lifetime()
    outer = Until(LONG, cancel=token, ends=[life])
    inner = outer.within(0.1)
    assert inner.cancel is token and inner.ends == (life,)
    took, outcome = timed(lambda: inner.sleep(LONG))
    assert isinstance(outcome, RequestTimeout) and took < SOON
    assert outer.within(LONG * 10).deadline == outer.deadline  # never wider than the call's time
    assert outer.within(None).deadline == outer.deadline


def test_also_adds_an_end_and_keeps_the_time_and_the_cancel() -> None:
    token = CancelToken()
    life, opening = Lifetime(), Lifetime()
    outer = Until(LONG, cancel=token, ends=[life])
    joined = outer.also(opening, what="waiting for the open")
    assert joined.ends == (life, opening) and outer.ends == (life,)
    assert joined.cancel is token and joined.deadline == outer.deadline and joined.timeout == outer.timeout
    threading.Timer(0.1, opening.end, args=(ClientClosedError("closed while it opened"),)).start()
    took, outcome = timed(lambda: joined.sleep(LONG))
    assert isinstance(outcome, ClientClosedError) and took < SOON
    assert outer.stopped() is None


def test_on_stop_hears_the_cancel_and_the_end_and_can_be_undone() -> None:
    heard: list[str] = []
    event = threading.Event()
    life = Lifetime()
    until = Until(cancel=event, ends=[life])
    undo = until.on_stop(lambda: heard.append("stop"))
    life.end(ClientClosedError())
    assert heard == ["stop"]
    undo()
    event.set()
    time.sleep(0.2)  # the Event watcher looks every 50 ms: the undone callback must stay silent
    assert heard == ["stop"]


# -- the seam's door: the connection's end is the engine's ------------------------------------


class Bound(Extension):
    """Keeps the session it is bound to."""

    session: Session | None = None

    def bind(self, session: Session) -> None:
        self.session = session


def waiting_on(until: Until) -> dict[str, Any]:
    """``until.wait`` on a signal nobody sets, on a thread: what ended it, and when."""
    seen: dict[str, Any] = {}

    def run() -> None:
        try:
            until.wait(Signal())
        except Exception as exc:  # what ended it
            seen["error"] = exc
        seen["at"] = time.monotonic()

    seen["thread"] = threading.Thread(target=run, daemon=True)
    seen["thread"].start()
    return seen


def open_client() -> tuple[Client, Session]:
    extension = Bound()
    client = Client(StdioTransport(SDK_SERVER, stderr=None), timeout=LONG, extensions=[extension])
    client.initialize()
    assert extension.session is not None
    return client, extension.session


def test_a_sessions_wait_ends_at_close_with_client_closed() -> None:
    client, session = open_client()
    seen = waiting_on(session.until(Options(timeout=LONG)))
    time.sleep(0.1)
    closing = time.monotonic()
    client.close()
    seen["thread"].join(SOON)
    assert isinstance(seen.get("error"), ClientClosedError) and seen["at"] - closing < SOON


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_sessions_wait_ends_at_the_servers_death_with_connection_closed() -> None:
    client, session = open_client()
    try:
        seen = waiting_on(session.until())
        time.sleep(0.1)
        killed = time.monotonic()
        os.kill(client.transport.pid, signals.SIGKILL)  # type: ignore[attr-defined]
        seen["thread"].join(SOON * 2)
        assert isinstance(seen.get("error"), ConnectionClosed), seen.get("error")
        assert seen["at"] - killed < SOON * 2
    finally:
        client.close()


def test_a_sessions_wait_takes_the_calls_time_and_cancel_from_its_options() -> None:
    client, session = open_client()
    with client:
        took, outcome = timed(lambda: session.until(Options(timeout=0.1, max_total=LONG)).sleep(LONG))
        assert isinstance(outcome, RequestTimeout) and took < SOON
        took, outcome = timed(lambda: session.until(Options(timeout=LONG, max_total=0.1)).sleep(LONG))
        assert isinstance(outcome, RequestTimeout) and took < SOON
        event = threading.Event()
        later(0.1, event.set)
        took, outcome = timed(lambda: session.until(Options(cancel=event)).sleep(LONG))
        assert isinstance(outcome, RequestCancelled) and took < SOON


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_the_engines_lifetime_is_ended_once_with_the_first_reason() -> None:
    client, session = open_client()
    os.kill(client.transport.pid, signals.SIGKILL)  # type: ignore[attr-defined]
    deadline = time.monotonic() + SOON * 2
    while session.ended is None and time.monotonic() < deadline:
        time.sleep(0.02)
    client.close()
    with pytest.raises(ConnectionClosed):  # the death came first: close() does not rename it
        session.until().check()
