"""Calls that return the server's questions instead of answering them, and their resumption.

``Inputs`` is the client's collaborator for ``call_tool(..., on_input="return")`` and
``Client.resume``. A 2026-07-28 server asks in the call's result (``input_required``): the
call ends there, with its ``requestState``, and ``resume`` sends the ``tools/call`` again once,
with the answers (``inputResponses``) and that state, through the call middleware and the policy
gate like any call. A legacy server asks with a request of its own while the call is pending:
the call is held open in this process (``holding.Hold``) and ``resume`` answers that request.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping

from .. import types as t
from .._core.exceptions import MCPError, PendingInputRefused, ProtocolError
from .._core.options import CallOptions
from ..transports.base import LEGACY
from .conversation import Conversation, identity
from .holding import Hold, find, process_name
from .pending import Binding, InputQuestion, PendingInput

if TYPE_CHECKING:
    from .calls import Calls
    from .handlers import Handlers

__all__ = ["ON_INPUT", "Inputs"]

#: What ``call_tool(on_input=...)`` takes.
ON_INPUT = ("answer", "return")


class Inputs:
    """Pending inputs of one client: made by ``call_tool``, taken up by ``resume``."""

    def __init__(
        self, conversation: Conversation, calls: Calls, handlers: Handlers, key: bytes | None, expiry: float,
        owner: Callable[[], str | None], max_rounds: int,
    ) -> None:
        self._conversation = conversation
        self._calls = calls
        self._handlers = handlers
        self._key = key
        self._expiry = expiry
        self._owner = owner
        self._max_rounds = max_rounds
        self._holding = threading.Lock()  # one legacy call held at a time (handlers.held)

    def binding(self) -> Binding:
        return Binding(server=identity(self._conversation.server_key), owner=self._owner())

    # -- the first step ---------------------------------------------------------------------------

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None, options: CallOptions
    ) -> t.ToolResult | PendingInput:
        if self._conversation.era == LEGACY:
            return self._hold(name, dict(arguments or {}), options)
        return self._step(name, dict(arguments or {}), None, options, rounds=0)

    def _step(
        self, name: str, arguments: dict[str, Any], extra: dict[str, Any] | None, options: CallOptions, rounds: int
    ) -> t.ToolResult | PendingInput:
        """One ``tools/call`` (with ``extra``: the answers and the state), ended at an input round."""
        outcome = self._calls.call_tool(name, arguments, options, extra=extra)
        if isinstance(outcome, t.ToolResult):
            return outcome
        requests = outcome.get("inputRequests")
        if not isinstance(requests, dict) or not requests:
            raise ProtocolError(f"the server asked for input on tool {name!r} without any inputRequests")
        state = outcome.get("requestState")
        if state is not None and not isinstance(state, str):
            raise ProtocolError("the server's requestState is not a string")
        return PendingInput(
            era="modern", name=name, arguments=arguments, questions=_questions(requests, name),
            expires_at=time.time() + self._expiry, rounds=rounds + 1, meta=options.meta, request_state=state,
            binding=self.binding(), key=self._key, maker=self._handlers,
        )

    def _hold(self, name: str, arguments: dict[str, Any], options: CallOptions) -> t.ToolResult | PendingInput:
        handlers = self._handlers
        # The timeout bounds the whole held call, the person's time included; and a pending input
        # never resumed lets go of the server at its expiry at the latest, whatever the timeout.
        now = time.monotonic()
        ends = [end for end in (options.deadline, None if options.timeout is None else now + options.timeout)
                if end is not None]
        deadline = min([*ends, now + self._expiry])
        with self._holding:
            if handlers.held is not None:
                raise MCPError("this client holds a legacy call for a person already: a legacy server's questions "
                               "do not say which call they belong to, so one call is held at a time per client")
            hold = handlers.held = Hold(handlers, deadline, options.cancel, self._conversation.engine.lifetime)
        held = CallOptions(options.timeout, max_total=None if deadline is None else max(0.0, deadline - time.monotonic()),
                           on_progress=options.on_progress, cancel=options.cancel, meta=options.meta,
                           headers=options.headers)

        def run() -> Any:
            try:
                return self._calls.call_tool(name, arguments, held)
            finally:
                if handlers.held is hold:
                    handlers.held = None

        hold.start(run)
        return self._held_step(hold, name, arguments, options.meta, rounds=0)

    def _held_step(
        self, hold: Hold, name: str, arguments: dict[str, Any], meta: Mapping[str, Any] | None, rounds: int
    ) -> t.ToolResult | PendingInput:
        ended, value = hold.next()
        if ended:
            return value  # type: ignore[no-any-return]
        questions = {key: InputQuestion(key=key, method=method, params=params) for key, (method, params) in value.items()}
        return PendingInput(
            era="legacy", name=name, arguments=arguments, questions=questions,
            expires_at=time.time() + max(0.0, (hold.deadline or 0.0) - time.monotonic()),
            rounds=rounds + 1, meta=meta, binding=self.binding(), hold_id=hold.id, process=process_name(),
            key=self._key, maker=self._handlers, hold=hold,
        )

    # -- resume --------------------------------------------------------------------------------

    def resume(self, pending: PendingInput, answers: Any, options: CallOptions) -> t.ToolResult | PendingInput:
        if not isinstance(pending, PendingInput):
            raise TypeError(f"resume() takes the PendingInput call_tool(on_input='return') gave, got {pending!r}")
        pending.check(self._key, self.binding(), pending.made_by(self._handlers), process_name())
        by_key = _by_key(pending, answers)
        given = {key: self._handlers.given(key, question.method, dict(question.params), by_key[key])
                 for key, question in pending.questions.items()}
        if pending.era == "legacy":
            return self._resume_held(pending, given)
        if pending.rounds >= self._max_rounds:
            raise ProtocolError(f"the server asked for input on tool {pending.name!r} more than {self._max_rounds} times")
        if self._conversation.era == LEGACY:
            raise PendingInputRefused("a 2026-07-28 PendingInput cannot be resumed on a client that speaks the legacy "
                                      "era to its server; nothing was sent")
        extra: dict[str, Any] = {"inputResponses": given}
        if pending.request_state is not None:
            extra["requestState"] = pending.request_state
        return self._step(pending.name, pending.arguments, extra, options, pending.rounds)

    def _resume_held(self, pending: PendingInput, given: dict[str, Any]) -> t.ToolResult | PendingInput:
        hold = pending.hold or find(pending.hold_id)
        if hold is None:
            raise PendingInputRefused("the held call of this PendingInput is over (answered, timed out, cancelled "
                                      "or closed): start the call again")
        if hold.owner is not self._handlers:
            raise PendingInputRefused("this PendingInput's call is held by another client: resume it there")
        hold.until("the held call").check()  # its deadline, cancel, close or the connection's death: that error
        job = hold.job
        if hold.over.error is not None and job is not None:
            job.outcome()  # what ended the call, raised (a timeout, a cancel, a closed connection)
            raise PendingInputRefused("the held call of this PendingInput ended without its answers: start it again")
        try:
            hold.answer(given)
        except KeyError:
            raise PendingInputRefused("this PendingInput's questions were answered already, or are no longer "
                                      "asked: nothing was sent") from None
        return self._held_step(hold, pending.name, pending.arguments, pending.meta, pending.rounds)


def _questions(requests: dict[str, Any], name: str) -> dict[str, InputQuestion]:
    questions = {}
    for key, request in requests.items():
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise ProtocolError(f"tool {name!r}: input request {key!r} is malformed")
        params = request.get("params")
        questions[str(key)] = InputQuestion(key=str(key), method=request["method"],
                                            params=params if isinstance(params, dict) else {})
    return questions


def _by_key(pending: PendingInput, answers: Any) -> dict[str, Any]:
    """The answer to each question: ``answers`` is a mapping from every question's key, or,
    for a pending input of one question, that question's answer itself."""
    keys = set(pending.questions)
    if isinstance(answers, Mapping) and set(answers) == keys:
        return dict(answers)
    if len(keys) == 1:
        (key,) = keys
        return {key: answers}
    given = sorted(answers) if isinstance(answers, Mapping) else type(answers).__name__
    raise ValueError(f"resume() needs an answer for each question, by key: {sorted(keys)}; got {given}")
