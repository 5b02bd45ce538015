"""What the client answers when the server asks: ping, sampling, elicitation, roots."""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING, Any, Callable, Sequence

import attrs

from .. import types as t
from .._core import bounded as _bounded
from .._core.cancel import Cancel, CancelToken, linked_token
from .._core.exceptions import ProtocolError, RPCError, method_not_found
from .._protocol.wire import structure, unstructure
from .elicitation import PendingElicitations, check_form_answer, form_answer_problems
from .seam import Seam

if TYPE_CHECKING:
    from .holding import Hold

__all__ = ["BUILTIN_REQUESTS", "Handlers"]

log = logging.getLogger("mcpclient")

SamplingHandler = Callable[..., Any]
ElicitationHandler = Callable[..., Any]
NotificationHandler = Callable[[str, "dict[str, Any]"], None]

ELICITATION_MODES = ("form", "url")
#: The server requests the client answers itself: no custom handler may claim them.
BUILTIN_REQUESTS = frozenset({"ping", "sampling/createMessage", "elicitation/create", "roots/list"})
#: The legacy server requests a held call (``call_tool(on_input="return")``) passes to its
#: caller: a person's answers. ``roots/list`` is the client's own, asked at any time.
HELD_REQUESTS = frozenset({"sampling/createMessage", "elicitation/create"})
#: What an elicitation's answer may do.
ELICITATION_ACTIONS = ("accept", "decline", "cancel")


def _takes_token(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` accepts a second positional argument (the CancelToken)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


class _Handler:
    __slots__ = ("fn", "with_token")

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError(f"a handler must be callable, got {fn!r}")
        self.fn = fn
        self.with_token = _takes_token(fn)

    def __call__(self, request: Any, token: CancelToken) -> Any:
        return self.fn(request, token) if self.with_token else self.fn(request)


class Handlers:
    """The handlers and roots a user installed, and the capabilities they imply."""

    def __init__(self, seam: Seam | None = None) -> None:
        #: Custom server requests and the capabilities extensions advertise.
        self.seam = seam or Seam((), (), reserved_requests=BUILTIN_REQUESTS, reserved_notifications=())
        self.sampling: _Handler | None = None
        self.sampling_tools = False
        self.elicitation: _Handler | None = None
        self.elicitation_modes: tuple[str, ...] = ("form",)
        self.notification: NotificationHandler | None = None
        self.roots: list[t.Root] | None = None
        self.url_elicitations = PendingElicitations()
        #: The server that asks (its serverInfo), set when the session opens: each sampling and
        #: elicitation request carries it, so a handler can tell the person who asks.
        self.server: t.Implementation | None = None
        #: The legacy call held for a person now (``holding.Hold``): the server's elicitation
        #: and sampling requests wait there for ``Client.resume``; None: the handlers answer.
        self.held: Hold | None = None

    def set_sampling(self, fn: SamplingHandler | None, *, tools: bool = False) -> None:
        self.sampling = None if fn is None else _Handler(fn)
        self.sampling_tools = tools

    def set_elicitation(self, fn: ElicitationHandler | None, *, modes: Sequence[str] = ("form",)) -> None:
        bad = [m for m in modes if m not in ELICITATION_MODES]
        if bad or not modes:
            raise ValueError(f"elicitation modes must be among {ELICITATION_MODES}, got {tuple(modes)!r}")
        self.elicitation = None if fn is None else _Handler(fn)
        self.elicitation_modes = tuple(modes)

    def set_roots(self, roots: Sequence[t.Root | str] | None) -> None:
        if roots is None:
            self.roots = None
            return
        self.roots = [r if isinstance(r, t.Root) else t.Root(uri=r) for r in roots]

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities to declare: only what a handler or roots back."""
        caps: dict[str, Any] = {}
        if self.sampling is not None:
            caps["sampling"] = {"tools": {}} if self.sampling_tools else {}
        if self.elicitation is not None:
            modes = self.elicitation_modes
            caps["elicitation"] = {} if modes == ("form",) else {m: {} for m in modes}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        return self.seam.capabilities(caps)

    # -- answering the server ---------------------------------------------------------------

    def handle(self, method: str, params: dict[str, Any], token: CancelToken) -> Any:
        if method == "ping":
            return {}
        held = self.held
        if held is not None and method in HELD_REQUESTS:
            return held.ask(method, params, token)
        if method == "sampling/createMessage":
            return self._sample(params, token)
        if method == "elicitation/create":
            return self._elicit(params, token)
        if method == "roots/list":
            if self.roots is None:
                raise method_not_found(method, "this client exposes no roots")
            return {"roots": [unstructure(r) for r in self.roots]}
        return self.seam.answer(method, params, token)  # -32601 unless a handler claimed it

    def answer_inputs(self, requests: Any, cancel: Cancel | None, asker: str, advice: str = "") -> dict[str, Any]:
        """Answer a server's ``inputRequests`` (a call's input round, or a task's) by key.

        Each entry is a server request (elicitation, sampling, roots) and gets what ``handle``
        gives it, with a token that the caller's ``cancel`` cancels. ``asker`` names what asked
        ("'tools/call'", "task 't-1'") and ``advice`` ends the error of an unanswerable one.
        Raises ``ProtocolError`` for a malformed request or one no handler can answer: the
        server asked for what this client cannot give, so retrying cannot help.
        """
        if not isinstance(requests, dict):
            raise ProtocolError(f"{asker}: the server's inputRequests is not an object: {_bounded.excerpt(requests, 100)}")
        handle = self.seam.receiving_requests(self.handle)  # the receive middleware sees these too
        with linked_token(cancel) as token:
            responses: dict[str, Any] = {}
            for key, request in requests.items():
                if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                    raise ProtocolError(f"{asker}: input request {key!r} is malformed: {_bounded.excerpt(request, 100)}")
                params = request.get("params")
                try:
                    responses[key] = handle(request["method"], params if isinstance(params, dict) else {}, token)
                except RPCError as exc:
                    detail = exc.data.get("detail") if isinstance(exc.data, dict) else None
                    raise ProtocolError(
                        f"{asker} needs {request['method']!r} from this client, which it cannot answer: "
                        f"{detail if isinstance(detail, str) else exc.message}{advice}"
                    ) from exc
        return responses

    def given(self, key: str, method: str, params: dict[str, Any], answer: Any) -> Any:
        """The wire answer to the server's request ``method`` (``params``) from ``answer``, what
        the matching handler may return: an ``ElicitationResult`` or a dict with ``action``
        (and ``content``), a ``CreateMessageResult`` or its dict, roots as a list of ``Root``
        or URIs. Raises ``ValueError`` (naming the question ``key``) for an answer that does
        not fit, a form answer that breaks the form's schema included: nothing is sent then."""
        if method == "elicitation/create":
            return self._given_elicitation(key, params, answer)
        if method == "sampling/createMessage":
            try:
                return _as_result(answer, t.CreateMessageResult)
            except TypeError as exc:
                raise ValueError(f"the answer to {key!r} (sampling): {exc}") from None
        if method == "roots/list":
            if isinstance(answer, dict) and isinstance(answer.get("roots"), list):
                return answer
            if isinstance(answer, (str, t.Root)) or not isinstance(answer, (list, tuple)):
                raise ValueError(f"the answer to {key!r} (roots) is a list of Root or file:// URIs, got "
                                 f"{type(answer).__name__}")
            roots = [root if isinstance(root, t.Root) else t.Root(uri=str(root)) for root in answer]
            return {"roots": [unstructure(root) for root in roots]}
        if isinstance(answer, dict):
            return answer  # a request of an extension's: its answer as the wire has it
        raise ValueError(f"the answer to {key!r} ({method}) must be a dict, got {type(answer).__name__}")

    def _given_elicitation(self, key: str, params: dict[str, Any], answer: Any) -> dict[str, Any]:
        try:
            result = dict(_as_result(answer, t.ElicitationResult))
        except TypeError as exc:
            raise ValueError(f"the answer to {key!r} (elicitation): {exc}") from None
        if result.get("action") not in ELICITATION_ACTIONS:
            raise ValueError(f"the answer to {key!r} needs an action among {ELICITATION_ACTIONS}, "
                             f"got {_bounded.excerpt(result.get('action'), 40)}")
        mode = params.get("mode", "form")
        if mode == "url":
            result.pop("content", None)  # a URL-mode answer carries no content
            elicitation_id = params.get("elicitationId")
            if isinstance(elicitation_id, str) and elicitation_id:
                self.url_elicitations.expect(elicitation_id)
            return result
        schema = params.get("requestedSchema")
        if result["action"] == "accept" and isinstance(schema, dict):
            result["content"] = _with_defaults(schema, result.get("content") or {})
            problems = form_answer_problems(schema, result["content"])
            if problems:
                raise ValueError(f"the answer to {key!r} does not fit its form: {'; '.join(problems)}")
        elif result["action"] != "accept":
            result.pop("content", None)
        return result

    def _sample(self, params: dict[str, Any], token: CancelToken) -> Any:
        handler = self.sampling
        if handler is None:
            raise method_not_found("sampling/createMessage", "this client does not support sampling")
        request = attrs.evolve(_read(params, t.CreateMessageRequest), server=self.server)

        if not self.sampling_tools and (params.get("tools") is not None or params.get("toolChoice") is not None):
            # The spec: a client that did not declare sampling.tools MUST answer such a request with an error.
            raise RPCError(
                RPCError.INVALID_PARAMS,
                "this client did not declare sampling.tools: a sampling request cannot carry tools or toolChoice",
            )
        return _as_result(handler(request, token), t.CreateMessageResult)

    def _elicit(self, params: dict[str, Any], token: CancelToken) -> Any:
        handler = self.elicitation
        mode = params.get("mode", "form")
        if handler is None:
            # The seed's rule: no handler means an automatic decline, not an error.
            return {"action": "decline"}
        if mode not in self.elicitation_modes:  # the spec's answer to an undeclared mode
            raise RPCError(RPCError.INVALID_PARAMS, f"this client does not accept {mode!r} elicitations")
        schema = params.get("requestedSchema")
        if mode == "form" and schema is not None and not isinstance(schema, dict):
            # The spec's requestedSchema is an object; the handler never sees anything else.
            raise RPCError(RPCError.INVALID_PARAMS, f"the requestedSchema is not a JSON object: {_bounded.excerpt(schema, 100)}")
        request = attrs.evolve(_read(params, t.ElicitationRequest), server=self.server)
        if mode == "url" and request.elicitation_id:
            self.url_elicitations.expect(request.elicitation_id)
        result = _as_result(handler(request, token), t.ElicitationResult)
        if mode == "url":
            result.pop("content", None)  # a URL-mode answer carries no content
        elif result.get("action") == "accept" and request.requested_schema:
            result["content"] = _with_defaults(request.requested_schema, result.get("content") or {})
            result = check_form_answer(request.requested_schema, result, request.message or "")
        return result


def _with_defaults(schema: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """Fill the schema's ``default`` values into fields an accepted answer left out (SEP-1034)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return content
    filled = dict(content)
    for name, prop in properties.items():
        if name not in filled and isinstance(prop, dict) and "default" in prop:
            filled[name] = prop["default"]
    return filled


def _read(params: dict[str, Any], cls: type) -> Any:
    from .._core.exceptions import ProtocolError

    try:
        return structure(params, cls)
    except ProtocolError as exc:
        raise RPCError(RPCError.INVALID_PARAMS, str(exc)) from exc


def _as_result(value: Any, cls: type) -> Any:
    if isinstance(value, cls):
        return unstructure(value)
    if isinstance(value, dict):
        return value  # a wire-form answer, passed through
    raise TypeError(f"the handler returned {type(value).__name__}; expected {cls.__name__} or a dict")
