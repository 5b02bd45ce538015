"""``watch_event``: how a plain ``threading.Event`` given as ``cancel=`` reaches a blocked call."""

from __future__ import annotations

import threading
import time

from mcpclient._core import cancel as c
from tests.helpers import wait_for


def _watcher_alive() -> bool:
    return any(t.name == "mcpclient-cancel-watch" and t.is_alive() for t in threading.enumerate())


def test_a_watched_event_runs_its_callback_once_soon_after_it_is_set():
    event, fired = threading.Event(), []
    done = threading.Event()
    watch = c.watch_event(event, lambda: (fired.append(time.monotonic()), done.set()))
    time.sleep(3 * c.EVENT_POLL_INTERVAL)
    assert fired == []  # not set yet: nothing runs
    set_at = time.monotonic()
    event.set()
    assert done.wait(2)
    assert fired[0] - set_at < 1.0
    time.sleep(3 * c.EVENT_POLL_INTERVAL)
    assert len(fired) == 1
    watch.stop()  # after it fired: harmless


def test_a_stopped_watch_never_fires_and_the_watcher_thread_ends_when_idle():
    event, fired = threading.Event(), []
    watch = c.watch_event(event, lambda: fired.append(1))
    assert _watcher_alive()
    watch.stop()
    event.set()
    deadline = time.monotonic() + 2
    while _watcher_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _watcher_alive(), "the watcher thread outlived its last watch"
    assert fired == []
    # and it comes back for the next watch
    again = threading.Event()
    done = threading.Event()
    c.watch_event(again, done.set)
    again.set()
    assert done.wait(2)


def test_a_failing_callback_does_not_stop_the_others(caplog):
    first, second = threading.Event(), threading.Event()
    done = threading.Event()

    def boom() -> None:
        raise RuntimeError("boom")

    caplog.set_level("ERROR", logger="mcpclient")
    c.watch_event(first, boom)
    c.watch_event(second, done.set)
    first.set()
    second.set()
    assert done.wait(2)
    assert wait_for(lambda: "a cancel callback failed" in caplog.text), "the failure was not logged"
