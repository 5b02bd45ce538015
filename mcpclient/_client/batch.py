"""``map_tool``: one tool called for every item of an iterable, a bounded number at a time.

    >>> for result in client.map_tool("embed", ({"text": row} for row in rows), concurrency=8):
    ...     store(result.structured_content)

What it promises, whoever calls it (``Client``, ``SharedClient``, ``ClientGroup``,
``SharedGroup``: each passes the one call it makes and how to list its tools):

- **Backpressure.** Never more than ``concurrency`` calls in flight, and the iterable is never
  read more than ``concurrency`` items ahead of the results handed out (a result waiting to be
  handed out counts as in flight): a generator of a million rows is read as the calls go.
- **Order.** ``ordered=True`` hands results out in input order (a slow item holds the ones
  after it, within the bound); ``ordered=False`` as they complete.
- **Errors.** ``errors="raise"`` raises the first failure (an ``MCPError``, or ``ToolError`` for
  a result with ``is_error``) and cancels the calls in flight; ``errors="return"`` hands out
  the ``MCPError`` in place of that item's result (a result with ``is_error`` stays a result).
- **Retry.** ``retry="safe"`` sends an item once more after a timeout or a lost connection,
  only if the tool's annotations say it changes nothing (``_methods.resendable_tool``, the
  one rule; the tools are listed once, on the first such failure). A tool call that may have
  run is never sent twice otherwise.
- **One deadline, one cancel.** ``timeout`` (seconds) bounds the whole batch: each call gets
  what is left, and at the deadline the calls in flight are cancelled (the server is told) and
  ``RequestTimeout`` is raised; ``cancel`` (a ``CancelToken`` or ``threading.Event``) does the
  same with ``RequestCancelled``. Leaving the loop early (``break``, an exception) cancels
  the calls in flight too. Every call has ended within about a second of any of these.
- **The client's end is the batch's.** A call that finds the client closed
  (``ClientClosedError``) or its connection dead (``ConnectionClosed``, after ``retry="safe"``'s
  one more try) ends the batch with that error, whatever ``errors`` says: no more arguments
  are read, and the calls in flight are cancelled. Whatever opens a new connection by itself
  (``SharedClient``, ``SharedGroup``: ``REOPENS``) ends it at ``ClientClosedError`` only: a
  dead server fails that item, and the next goes to a new one.

Every wait goes through the one primitive (``_core.waiting``): the caller's for the next
outcome (the deadline and ``cancel`` end it), the threads' for a slot (the batch's end ends it).

The calls start when the iteration starts (it is a generator, like ``map``).
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
import time
from collections import deque
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol, Sized, Union

from .. import types as t
from .._core.cancel import CancelToken
from .._core.exceptions import ClientClosedError, ConnectionClosed, MCPError, RequestCancelled, RequestTimeout
from .._core.methods import resendable_tool
from .._core.text import clean
from .._core.timeouts import DEFAULT
from .._core.waiting import Lifetime, Signal, Until

__all__ = ["ERRORS", "REOPENS", "RETRIES", "ToolCaller", "map_calls", "map_tool"]

log = logging.getLogger(__name__)

ERRORS = ("raise", "return")
RETRIES = ("fail", "safe")
#: How long the batch waits for its cancelled calls to end before it lets their threads go.
SETTLE = 2.0
#: The reasons the batch's own cancel token gives its calls.
BY_CALLER, DEADLINE, ENDED = "cancelled by the caller", "map_tool's deadline passed", "map_tool ended"
#: The attribute of a ``ToolCaller`` that opens a new connection by itself when one dies
#: (``SharedClient``, ``SharedGroup``): a dead connection fails one item, not the batch.
REOPENS = "reopens_connections"

#: One call: ``call(arguments, timeout, cancel)`` -> the tool's result (``timeout`` may be
#: ``DEFAULT``: the client's own).
CallOne = Callable[[Union[Mapping[str, Any], None], Any, CancelToken], t.ToolResult]
#: The tools of whatever is called (read once, only by ``retry="safe"``).
ListTools = Callable[[], "list[t.ToolDef]"]
Outcome = Union[t.ToolResult, MCPError]


class ToolCaller(Protocol):
    """What ``map_tool`` needs of whatever it is a method of: a client, a group, a shared one."""

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: Any = DEFAULT, cancel: Any = None,
    ) -> t.ToolResult: ...

    def list_tools(self) -> list[t.ToolDef]: ...


def map_tool(
    self: ToolCaller,
    name: str,
    arguments: Iterable[Mapping[str, Any] | None],
    *,
    concurrency: int = 8,
    ordered: bool = True,
    errors: str = "raise",
    retry: str = "fail",
    timeout: float | None = DEFAULT,
    cancel: CancelToken | threading.Event | None = None,
    progress: bool = False,
) -> Iterator[t.ToolResult | MCPError]:
    """Call tool ``name`` once for each item of ``arguments`` (mappings, read lazily), at
    most ``concurrency`` at a time; an iterator of the results (the calls start when it is
    iterated). On a group, ``name`` is the prefixed name and each call goes to its server.

    ``ordered=False`` hands results out as they complete. ``errors="raise"`` raises the
    first failure (``ToolError`` for a result with ``is_error``) and cancels the rest;
    ``errors="return"`` hands out the ``MCPError`` in place of that item's result.
    ``retry="safe"`` sends an item once more after a timeout or a lost connection if the
    tool's annotations say it changes nothing. ``timeout`` is one deadline for the whole
    batch (default: each call has the client's timeout), ``cancel`` cancels it all, and
    ``progress=True`` shows a bar on stderr (the ``cli`` extra). See ``docs/scale.md``.

    The one ``map_tool`` of ``Client``, ``ClientGroup`` and ``SharedGroup``: each class names
    this function as its method.
    """
    return map_calls(
        lambda item, deadline, token: self.call_tool(name, item, timeout=deadline, cancel=token),
        lambda: self.list_tools(), name, arguments, concurrency=concurrency, ordered=ordered,
        errors=errors, retry=retry, timeout=timeout, cancel=cancel, progress=progress,
        reopens=bool(getattr(self, REOPENS, False)),
    )


def map_calls(
    call: CallOne,
    list_tools: ListTools,
    tool: str,
    arguments: Iterable[Mapping[str, Any] | None],
    *,
    concurrency: int,
    ordered: bool,
    errors: str,
    retry: str,
    timeout: float | None | Any,
    cancel: CancelToken | threading.Event | None,
    progress: bool,
    reopens: bool = False,
) -> Iterator[Outcome]:
    """The iterator of results ``map_tool`` returns (its arguments are checked now);
    ``reopens``: the caller opens a new connection when one dies (``REOPENS``)."""
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise ValueError(f"concurrency must be a whole number of at least 1, got {concurrency!r}")
    if errors not in ERRORS:
        raise ValueError(f"errors must be one of {', '.join(ERRORS)}, got {errors!r}")
    if retry not in RETRIES:
        raise ValueError(f"retry must be one of {', '.join(RETRIES)}, got {retry!r}")
    if timeout is not DEFAULT and timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, None or left out, got {timeout!r}")
    bar = _bar(tool, arguments) if progress else None
    batch = _Batch(call, list_tools, tool, concurrency=concurrency, retry=retry, timeout=timeout, cancel=cancel,
                   reopens=reopens)
    return batch.run(iter(arguments), ordered=ordered, errors=errors, bar=bar)


class _Batch:
    """One ``map_tool``'s state: its pool, its cancel token, its deadline."""

    def __init__(
        self, call: CallOne, list_tools: ListTools, tool: str, *, concurrency: int, retry: str,
        timeout: float | None | Any, cancel: CancelToken | threading.Event | None, reopens: bool = False,
    ) -> None:
        self.call = call
        #: The errors that say the client, or its connection, is over: they end the batch.
        self.over: tuple[type[MCPError], ...] = (ClientClosedError,) if reopens else (ClientClosedError, ConnectionClosed)
        self.list_tools = list_tools
        self.tool = tool
        self.concurrency = concurrency
        self.retry = retry
        self.timeout = timeout
        self.caller_cancel = cancel
        self.token = CancelToken()
        self.deadline: float | None = None
        self._resendable: bool | None = None
        self._resendable_lock = threading.Lock()

    # -- one call, on a pool thread ---------------------------------------------------------

    def one(self, arguments: Mapping[str, Any] | None) -> t.ToolResult:
        resent = False
        while True:
            self.token.raise_if_cancelled()
            try:
                return self.call(arguments, self._call_timeout(), self.token)
            except (RequestTimeout, ConnectionClosed) as exc:
                if resent or self.retry != "safe" or self.token.cancelled or self._past_deadline():
                    raise
                if not self._may_resend():
                    raise
                resent = True
                log.info("map_tool: sending a call of %s once more after %s (its annotations say it changes "
                         "nothing)", clean(self.tool, 200), type(exc).__name__)

    def _call_timeout(self) -> Any:
        if self.deadline is None:
            return self.timeout  # DEFAULT (the client's) or None (no limit)
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise RequestTimeout(
                f"map_tool's deadline of {self.timeout} s passed before this call was sent",
                method="tools/call", timeout=self.timeout,
            )
        return left

    def _past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def _may_resend(self) -> bool:
        with self._resendable_lock:
            if self._resendable is None:
                found = [tool for tool in self.list_tools() if tool.name == self.tool]
                self._resendable = bool(found) and resendable_tool(found[0].annotations)
            return self._resendable

    # -- the iterator -----------------------------------------------------------------------

    def run(
        self, items: Iterator[Mapping[str, Any] | None], *, ordered: bool, errors: str, bar: Any
    ) -> Iterator[Outcome]:
        """Hand out the outcomes; ``concurrency`` threads each read an item and call it.

        Each thread takes a slot before it reads (``taken - handed < concurrency``), and the
        caller frees one with every result it takes: the bound on reading ahead is the bound on
        calls in flight, and no thread waits for the caller to hand it work.
        """
        if self.timeout is not DEFAULT and self.timeout is not None:
            self.deadline = time.monotonic() + self.timeout
        self._items = items
        self._lock = threading.Lock()  # the state below; never held while waiting
        self._read_lock = threading.Lock()  # one thread reads the input at a time
        self._ready = Signal()  # an outcome was kept, the input ended, or the batch stops
        self._slot = Signal()  # a slot was freed, or the batch stops
        self._life = Lifetime()  # the batch's: ended when it ends, which ends the threads' waits
        self._idle = Signal()  # every thread has returned
        self._running = self.concurrency
        self._taken = self._read = self._handed = 0
        self._exhausted = False
        self._stopped = False
        self._over: MCPError | None = None  # the client closed, or its connection died
        self._read_error: BaseException | None = None
        self._results: dict[int, tuple[t.ToolResult | None, BaseException | None]] = {}
        self._completed: deque[int] = deque()  # in the order they completed (ordered=False only)
        self._ordered = ordered
        self.token.add_callback(self._ready.set)
        caller = self.caller_cancel
        if isinstance(caller, CancelToken):
            caller.add_callback(self._cancelled_by_caller)
        until = Until(deadline=self.deadline, cancel=caller, method="tools/call", what=f"map_tool({clean(self.tool, 200)})")
        threads = [
            threading.Thread(target=self._work, name=f"mcpclient-map-{i}", daemon=True)
            for i in range(self.concurrency)
        ]
        try:
            for thread in threads:
                thread.start()
            while True:
                outcome = self._take(ordered, until)
                if outcome is None:
                    return
                if bar is not None:
                    bar.update(1)
                yield self._outcome(outcome, errors)
        finally:
            with self._lock:
                self._stopped = True
                self._running -= sum(1 for thread in threads if thread.ident is None)  # never started
                if self._running <= 0:
                    self._idle.set()
            self._life.end(RequestCancelled(f"map_tool({clean(self.tool, 200)}) ended", method="tools/call"))
            self.token.cancel(ENDED)
            if isinstance(caller, CancelToken):
                caller.remove_callback(self._cancelled_by_caller)
            settle_until = Until(what="map_tool's calls ending")
            settle_until.wait(self._idle, timeout=SETTLE)  # then they are let go
            if bar is not None:
                bar.close()

    def _work(self) -> None:
        """One thread: take a slot, read an item, call it, keep its outcome; until the end."""
        try:
            slot_until = Until(ends=(self._life,), what="map_tool's thread")
            while self._take_slot(slot_until):
                with self._read_lock:
                    try:
                        if self._exhausted or self._stopped:
                            raise StopIteration
                        arguments = next(self._items)
                        index = self._read
                        self._read += 1
                    except BaseException as exc:  # the end of the input, or its error: handed out last
                        with self._lock:
                            self._taken -= 1
                            self._exhausted = True
                            if not isinstance(exc, StopIteration) and self._read_error is None:
                                self._read_error = exc
                        self._ready.set()
                        self._slot.set()
                        return
                try:
                    outcome: tuple[t.ToolResult | None, BaseException | None] = (self.one(arguments), None)
                except BaseException as exc:
                    outcome = (None, exc)
                self._keep(index, outcome)
        finally:
            with self._lock:
                self._running -= 1
                idle = self._running <= 0
            if idle:
                self._idle.set()

    def _take_slot(self, slot_until: Until) -> bool:
        """Wait for a slot and take it; False once there is nothing more to do."""
        while True:
            with self._lock:
                if self._stopped or self._exhausted:
                    return False
                if self._taken - self._handed < self.concurrency:
                    self._taken += 1
                    return True
                self._slot.clear()  # (under the lock: a slot freed from now on sets it again)
            try:
                slot_until.wait(self._slot)
            except MCPError:  # the batch ended
                return False

    def _keep(self, index: int, outcome: tuple[t.ToolResult | None, BaseException | None]) -> None:
        """Keep one call's outcome; one that says the client or its connection is over ends the batch."""
        error = outcome[1]
        over = isinstance(error, self.over) and not self.token.cancelled
        with self._lock:
            self._results[index] = outcome
            if not self._ordered:
                self._completed.append(index)
            if over and self._over is None:
                self._over = error  # type: ignore[assignment]
                self._stopped = True
        self._ready.set()
        if over:
            self._slot.set()
            self.token.cancel(ENDED)

    def _take(self, ordered: bool, until: Until) -> tuple[t.ToolResult | None, BaseException | None] | None:
        """The next outcome to hand out (None at the end), waiting for it as needed."""
        while True:
            with self._lock:
                self._check_stop()
                if ordered:
                    found = self._results.pop(self._handed, None)
                else:
                    found = self._results.pop(self._completed.popleft()) if self._completed else None
                if found is not None:
                    self._handed += 1
                    freed = True
                elif self._exhausted and self._handed == self._taken:
                    if self._read_error is not None:
                        raise self._read_error
                    return None
                else:
                    freed = False
                    self._ready.clear()  # (under the lock: what is kept from now on sets it again)
            if freed:
                self._slot.set()
                return found
            try:
                until.wait(self._ready)
            except (RequestTimeout, RequestCancelled):
                with self._lock:
                    self._check_stop()  # says it as the batch does, and stops the calls
                raise

    def _check_stop(self) -> None:
        """Raise if the batch is to end (call with the lock held): the client or its
        connection is over, the caller cancelled, or the deadline passed."""
        if self._over is not None:
            raise self._over
        caller = self.caller_cancel
        if isinstance(caller, threading.Event) and caller.is_set():
            self._stop(BY_CALLER)
        if self.token.cancelled and self.token.reason != DEADLINE:
            raise RequestCancelled(
                f"map_tool({clean(self.tool, 200)}) was cancelled after {self._handed} results; the calls in "
                "flight were cancelled and no more arguments were read", method="tools/call",
            )
        if self._past_deadline():
            self._stop(DEADLINE)
            raise RequestTimeout(
                f"map_tool({clean(self.tool, 200)}) passed its deadline of {self.timeout} s after {self._handed} "
                "results; the calls in flight were cancelled and no more arguments were read",
                method="tools/call", timeout=self.timeout,
            )

    def _stop(self, reason: str) -> None:
        """Stop the threads and cancel the calls in flight (with the lock held: the token's
        callback only sets a signal)."""
        self._stopped = True
        self._slot.set()
        self.token.cancel(reason)

    def _cancelled_by_caller(self) -> None:
        self.token.cancel(BY_CALLER)

    def _outcome(self, outcome: tuple[t.ToolResult | None, BaseException | None], errors: str) -> Outcome:
        result, error = outcome
        if error is None:
            assert result is not None
            if errors == "raise" and result.is_error:
                result.raise_for_error(self.tool)
            return result
        if isinstance(error, MCPError) and errors == "return" and not self.token.cancelled:
            return error
        raise error


def _bar(tool: str, arguments: Iterable[Any]) -> Any:
    """A tqdm bar (the ``cli`` extra) on stderr, counting results."""
    try:
        tqdm = importlib.import_module("tqdm").tqdm
    except ImportError as exc:
        raise ImportError("map_tool(progress=True) needs tqdm: pip install 'mcpclient[cli]'") from exc
    total = len(arguments) if isinstance(arguments, Sized) else None
    return tqdm(total=total, desc=clean(tool, 60), unit="call", file=sys.stderr)
