"""A legacy tool call held open for a person: ``call_tool(..., on_input="return")`` before 2026-07-28.

A legacy server asks with a request of its own (``elicitation/create``,
``sampling/createMessage``) while the ``tools/call`` is pending. The call then runs on a ``Job``
thread; each question the server asks waits, on its dispatch thread, in the ``Hold`` until
``Client.resume`` gives its answer. The caller's thread returns a ``PendingInput`` as soon as a
question is in, and the result when the call ends first.

Everything here waits through ``Until``: a held question ends at the call's deadline (the
``timeout`` of the call is the whole held call's), its cancel, the end of the call, ``close()``
and the connection's death, and is then answered "cancel" (an elicitation) or refused (sampling).
The process's holds are found by their unguessable name (``find``); a forked child has none.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from typing import Any, Callable

from .._core.cancel import CancelToken
from .._core.exceptions import MCPError, RPCError
from .._core.waiting import Job, Lifetime, Signal, Until

__all__ = ["Hold", "find", "process_name"]

log = logging.getLogger("mcpclient")

#: This process's name in a legacy pending input: a random word, new in a forked child, so a
#: state made in another process (or before a restart that reused the pid) is told apart.
_process = os.urandom(12).hex()
_holds: weakref.WeakValueDictionary[str, Hold] = weakref.WeakValueDictionary()
_holds_lock = threading.Lock()
#: The error a held sampling request gets when nobody answers (the spec's "user rejected").
USER_REJECTED = -1


def _new_process() -> None:
    global _process
    _process = os.urandom(12).hex()
    _holds.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_process)


def process_name() -> str:
    """This process's name, as a legacy pending input holds it."""
    return _process


def find(hold_id: str | None) -> Hold | None:
    """The hold of that name in this process (None: none, or over)."""
    if hold_id is None:
        return None
    with _holds_lock:
        return _holds.get(hold_id)


class _Question:
    __slots__ = ("key", "method", "params", "answered", "answer", "taken")

    def __init__(self, key: str, method: str, params: dict[str, Any]) -> None:
        self.key, self.method, self.params = key, method, params
        self.answered = Signal()
        self.answer: Any = None
        self.taken = False  # handed to the caller in a PendingInput


class Hold:
    """One held legacy call: its questions, waiting for answers, and its end.

    ``deadline`` (``time.monotonic()``) and ``cancel`` are the call's; ``lifetime`` the
    connection's (the engine's: ``close()`` and the connection's death end it). ``owner``
    is what made it (the client's handlers): only that client resumes it.
    """

    def __init__(self, owner: object, deadline: float | None, cancel: Any, lifetime: Lifetime) -> None:
        self.id = os.urandom(18).hex()  # unguessable: a JSON naming it still needs the client's signature
        self.owner = owner
        self.deadline = deadline
        self.cancel = cancel
        self.lifetime = lifetime
        #: Set when a question comes in or the call ends: what the caller's thread waits for.
        self.changed = Signal()
        #: Ended when the call is over: the questions still held are then answered "cancel".
        self.over = Lifetime()
        self._lock = threading.Lock()
        self._questions: dict[str, _Question] = {}
        self._asked = 0
        self.job: Job[Any] | None = None
        with _holds_lock:
            _holds[self.id] = self

    def __repr__(self) -> str:
        return f"<Hold {len(self._questions)} question(s) {'over' if self.over.error else 'open'}>"

    def start(self, fn: Callable[[], Any]) -> None:
        """Run the call ``fn`` on a thread of its own; its end ends the hold."""
        self.job = Job(fn, name="mcpclient-held-call")
        self.job.done.add_callback(self._ended)

    def _ended(self) -> None:
        self.over.end(MCPError("the held call is over"))
        with _holds_lock:
            _holds.pop(self.id, None)
        self.changed.set()

    def until(self, what: str) -> Until:
        """The bounds of a wait for this call: its deadline, its cancel, the connection's life."""
        return Until(deadline=self.deadline, cancel=self.cancel, ends=(self.lifetime,), method="tools/call", what=what)

    # -- the server's side: a dispatch thread -------------------------------------------------

    def ask(self, method: str, params: dict[str, Any], token: CancelToken) -> Any:
        """Hold the server's request until its answer is given (``answer``), and return it;
        "cancel" (or a refusal, for sampling) when the call's time, its cancel, the server's
        cancel, the call's end, ``close()`` or the connection's death comes first."""
        with self._lock:
            if self.over.error is not None:
                return _unanswered(method, "the call is over")
            self._asked += 1
            question = _Question(f"q{self._asked}", method, params)
            self._questions[question.key] = question
        self.changed.set()
        until = Until(deadline=self.deadline, cancel=token, ends=(self.lifetime, self.over), method=method,
                      what="the person's answer")
        try:
            until.wait(question.answered)
            return question.answer
        except MCPError as exc:
            log.info("a held %s was not answered (%s): answered as cancelled", method, exc)
            return _unanswered(method, str(exc))
        finally:
            with self._lock:
                self._questions.pop(question.key, None)

    # -- the caller's side ------------------------------------------------------------------------

    def next(self) -> tuple[bool, Any]:
        """Wait for the call's next step: ``(True, result)`` when it ended (or raise what it
        raised), ``(False, questions)`` with the questions not yet handed out (key → (method,
        params)) when the server asked. Raises at the call's deadline, cancel, close or death."""
        until = self.until("the held call")
        job = self.job
        assert job is not None
        while True:
            self.changed.clear()  # then look: a question or an end after this sets it again
            if job.done.is_set():
                return True, job.outcome()
            with self._lock:
                fresh = [q for q in self._questions.values() if not q.taken]
                for question in fresh:
                    question.taken = True
                if fresh:
                    waiting = {q.key: (q.method, q.params) for q in self._questions.values()}
                    return False, waiting
            until.wait(self.changed)

    def waiting(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """The questions held now, unanswered (key → (method, params))."""
        with self._lock:
            return {q.key: (q.method, q.params) for q in self._questions.values()}

    def answer(self, answers: dict[str, Any]) -> None:
        """Give each held question its wire answer (key → answer); ``KeyError`` for a key not held now."""
        with self._lock:
            questions = [self._questions[key] for key in answers]
            for question in questions:
                question.answer = answers[question.key]
                del self._questions[question.key]  # answered: no later step shows it again
        for question in questions:
            question.answered.set()


def _unanswered(method: str, why: str) -> Any:
    if method == "elicitation/create":
        return {"action": "cancel"}
    raise RPCError(USER_REJECTED, f"the person did not answer: {why}")
