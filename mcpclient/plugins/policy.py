"""The policy gate: which tool calls go to the server, which are refused, which a person approves.

    >>> from mcpclient.policy import Policy, Rule, Under
    >>> policy = Policy([
    ...     Rule("allow", annotations={"readOnlyHint": True}),
    ...     Rule("allow", tool="write_file", arguments=[Under("path", "/srv/data")]),
    ...     Rule("deny", tool="delete_*"),
    ... ], default="ask", approver=mcpclient.prompting.approve_tool)
    >>> client = mcpclient.connect(["python", "server.py"], plugins=mcpclient.Plugins(policy=policy))  # doctest: +SKIP

The rules are read **in order and the first that matches decides** (a firewall's rule, not
the most specific one: the order you read is the order that counts); when none matches,
``default`` does ("ask" unless told). A rule matches a call when every condition it has holds:

* ``server``: the server's name (globs allowed). The name is the one *you* gave: the config
  entry's or the ``ClientGroup``'s (``Policy.for_server``). A policy bound to no name matches
  a ``server`` rule against the name the server claims (its ``serverInfo``), and then only a
  ``deny`` or ``ask`` rule: what a server says of itself can make its calls stricter, never
  looser;
* ``tool``: the tool's name, one glob or several (``fnmatch``, case-sensitive);
* ``annotations``: the tool's hints as it lists them (``readOnlyHint``, ``destructiveHint``,
  ``idempotentHint``, ``openWorldHint``), an absent hint taken at the spec's default
  (destructive and open-world unless the tool says otherwise; ``destructiveHint`` means
  nothing for a read-only tool). Hints are the server's claims: trust them only as far as you
  trust the server;
* ``arguments``: ``Under(name, *roots)`` (a path, once made absolute and resolved: ``..``,
  symbolic links, and case on Windows and macOS), ``OneOf(name, values)``,
  ``MaxSize(name, size)`` (bytes of the value as UTF-8 text or JSON; ``name=None``: all the
  arguments). An argument left out is judged at the default the tool's input schema gives it.

**A rule that cannot judge a call fails closed.** Each condition holds, does not hold, or
cannot tell (``mcpclient.plugins._policy_conditions``): a ``~`` or ``$HOME`` path, a NUL,
blanks around a path, a non-string where a path is wanted, a relative path where the
server's directory is unknown (an HTTP server; a stdio server's is the one it started in),
``"0"`` where ``0`` is listed, the hints of a tool the server does not list, a name it does
not list that matches but for case or separators. "Cannot tell" matches a ``deny`` or ``ask``
rule and never an ``allow`` rule. A list value triggers a ``deny`` when any item is under the
root, and an ``allow`` only when every item is. The call is judged as it will be sent (its
arguments as JSON); a call whose name is not a string, or whose arguments are not an object,
is refused before any rule.

"ask" calls the ``approver``, a plain function ``approver(request) -> bool`` given an
``ApprovalRequest``; no approver, an approver that raises, or one that does not answer by its
deadline denies. Built in: ``mcpclient.prompting.approve_tool`` (a terminal), ``WebApprovals``
(a web app answers from its own queue, with a deadline), ``NotebookApprovals`` (two buttons in
the running cell, which blocks until one is clicked or its timeout).

The gate is a send middleware on ``tools/call``: every way a tool is called goes through it
(``call_tool``, ``Client.request("tools/call")``, ``ClientGroup``, ``mcpclient.tools()`` and the
LLM formats, the agent adapters, an MCP Apps view). A refused call raises ``ToolCallDenied``
and is never sent. Every decision is logged (logger ``mcpclient.policy``, server text cleaned),
added as an event ``mcp.policy`` to the call's OpenTelemetry span when telemetry is on, and
written to ``audit`` (a JSON-lines file) when given.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
import os
import threading
import time
from typing import Any, Callable, Literal, Mapping, Sequence, Union

import attrs

from .._core.cancel import CancelToken
from .._core.exceptions import (
    ClientClosedError,
    ConfigError,
    ConnectionClosed,
    MCPError,
    RequestCancelled,
    RequestTimeout,
    ToolCallDenied,
)
from .._core.text import clean
from ..extensions import Extension, Message, Middleware, Next, Session, Until
from ..types import Implementation
from ._call_time import CallTime
from ._policy_conditions import Condition, MaxSize, OneOf, Under, Verdict, all_hold, loose_name
from ._policy_conditions import to_json as _json

__all__ = [
    "ACTIONS",
    "ApprovalRequest",
    "Approver",
    "Decision",
    "MaxSize",
    "OneOf",
    "Policy",
    "PolicyGate",
    "Rule",
    "ToolCall",
    "Under",
    "check_action",
    "deny_all",
    "effective_hints",
]

log = logging.getLogger("mcpclient.policy")

Action = Literal["allow", "deny", "ask"]
ACTIONS: tuple[str, ...] = ("allow", "deny", "ask")
#: The spec's default for each hint a tool leaves out.
HINT_DEFAULTS: Mapping[str, bool] = {
    "readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True,
}
#: What a continuation round of a 2026-07-28 call carries (the call was decided at its first round).
_CONTINUATION = ("inputResponses", "requestState")
PathLike = Union[str, "os.PathLike[str]"]


# -- rules and decisions ----------------------------------------------------------------------


def _names(value: str | Sequence[str] | None, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"a rule's {what} must be a name or a list of names, got {value!r}")
    return names


@attrs.frozen(init=False)
class Rule:
    """One rule: ``action`` ("allow", "deny", "ask") when every condition given holds.

    ``server`` and ``tool`` are names or globs (one or a list), ``annotations`` maps hints to
    the value they must have, ``arguments`` lists ``Under``/``OneOf``/``MaxSize`` conditions.
    ``name`` labels the rule in logs and the audit (else ``rule N``).
    """

    action: str
    server: tuple[str, ...] | None
    tool: tuple[str, ...] | None
    annotations: Mapping[str, bool]
    arguments: tuple[Condition, ...]
    name: str | None

    def __init__(
        self,
        action: Action,
        *,
        server: str | Sequence[str] | None = None,
        tool: str | Sequence[str] | None = None,
        annotations: Mapping[str, bool] | None = None,
        arguments: Sequence[Condition] = (),
        name: str | None = None,
    ) -> None:
        if action not in ACTIONS:
            raise ValueError(f"a rule's action is one of {', '.join(ACTIONS)}, got {action!r}")
        hints = dict(annotations or {})
        for hint, wanted in hints.items():
            if hint not in HINT_DEFAULTS or not isinstance(wanted, bool):
                raise ValueError(f"a rule's annotations map {', '.join(HINT_DEFAULTS)} to true or false, "
                                 f"got {hint!r}: {wanted!r}")
        for condition in arguments:
            if not isinstance(condition, Condition):
                raise TypeError(f"a rule's arguments are Under, OneOf or MaxSize conditions, got {condition!r}")
        self.__attrs_init__(action, _names(server, "server"), _names(tool, "tool"),
                            hints, tuple(arguments), name)

    def verdict(self, call: ToolCall) -> Verdict:
        """Whether every condition holds of ``call``: True, False, or None (cannot tell)."""
        if self.server is not None:
            bound = call.server is not None
            name = call.server if bound else call.claimed_server
            if name is None or (not bound and self.action == "allow"):
                return False
            if not any(fnmatch.fnmatchcase(name, pattern) for pattern in self.server):
                return False
        verdicts: list[Verdict] = []
        if self.tool is not None:
            verdicts.append(_tool_verdict(call, self.tool))
        if self.annotations:
            hints = judged_hints(call.annotations)
            verdicts.extend(None if hints[hint] is None else hints[hint] == wanted
                            for hint, wanted in self.annotations.items())
        if False in verdicts:
            return False
        verdicts.extend(condition.check(call.arguments, defaults=call.defaults, directory=call.directory)
                        for condition in self.arguments)
        return all_hold(verdicts)

    def matches(self, call: ToolCall) -> bool:
        """Whether this rule decides ``call``: every condition holds, or (for ``deny`` and
        ``ask``) none fails and one cannot tell. A rule that cannot judge a call fails closed."""
        return _decides(self.action, self.verdict(call))


def _decides(action: str, verdict: Verdict) -> bool:
    return verdict is True or (verdict is None and action != "allow")


def _tool_verdict(call: ToolCall, patterns: tuple[str, ...]) -> Verdict:
    """The name as called matches a glob; a name the server does not list (it may resolve it
    leniently) that matches one but for case, blanks or separators cannot be judged."""
    if any(fnmatch.fnmatchcase(call.tool, pattern) for pattern in patterns):
        return True
    if call.annotations is not None:
        return False  # the server lists this very name: it runs this tool
    name = loose_name(call.tool)
    return None if any(fnmatch.fnmatchcase(name, loose_name(pattern)) for pattern in patterns) else False


def effective_hints(annotations: Mapping[str, Any] | None) -> dict[str, bool]:
    """Each hint as the spec reads it: the tool's value, else the default; a read-only tool is
    neither destructive nor open to change (``destructiveHint`` applies only when not read-only)."""
    given = annotations if isinstance(annotations, Mapping) else {}
    hints = {hint: given[hint] if isinstance(given.get(hint), bool) else default
             for hint, default in HINT_DEFAULTS.items()}
    if hints["readOnlyHint"]:
        hints["destructiveHint"] = False
    return hints


def judged_hints(annotations: Mapping[str, Any] | None) -> dict[str, bool | None]:
    """Each hint as a rule judges it: ``effective_hints``, but None (cannot tell) for a hint of
    the wrong type, and for every hint of a tool the server does not list (``annotations``
    None) or lists with annotations that are not an object."""
    if not isinstance(annotations, Mapping):
        return dict.fromkeys(HINT_DEFAULTS)
    hints: dict[str, bool | None] = {}
    for hint, default in HINT_DEFAULTS.items():
        value = annotations.get(hint)
        hints[hint] = default if value is None else value if isinstance(value, bool) else None
    if hints["readOnlyHint"] is True:
        hints["destructiveHint"] = False
    return hints


@attrs.frozen(kw_only=True)
class ToolCall:
    """A call as the rules see it.

    ``arguments`` as sent (a JSON object); ``annotations`` the tool's as the server lists
    them (``{}``: listed with none; None: the server does not list the tool, so its hints
    cannot be judged and its name is judged leniently); ``defaults`` the defaults its input
    schema gives its arguments (one left out is judged at its default); ``directory`` where
    the server resolves a relative path (a stdio server's working directory; None: not
    known, so a relative path cannot be judged); ``server`` the name you gave (None:
    unbound), ``claimed_server`` the server's own ``serverInfo`` name.
    """

    tool: str
    arguments: Mapping[str, Any]
    annotations: Mapping[str, Any] | None
    server: str | None = None
    claimed_server: str | None = None
    defaults: Mapping[str, Any] = attrs.field(factory=dict)
    directory: str | None = None


@attrs.frozen(kw_only=True)
class Decision:
    """What the rules say of a call: ``action``, ``rule`` (its label, or "default"), and
    ``certain`` (False: the rule could not judge the call, and fails closed)."""

    action: str
    rule: str
    certain: bool = True


@attrs.frozen(kw_only=True)
class ApprovalRequest:
    """What an approver is asked: may this call run?

    The fields are the server's text as sent; ``lines()`` gives them inert (escapes, newlines,
    bidi controls shown, not obeyed), as every built-in approver shows them. ``until`` is how an
    approver waits (``mcpclient.extensions.Until``): ``request.until.wait(answered, timeout=own)``,
    ``request.until.call(input, prompt)``, ``with request.until.hold(lock)``; each wait ends at
    the call's deadline, its cancel (a token or a plain Event), the client's ``close()`` and
    the connection's death, raising the matching error, as the built-in approvers do. The gate
    runs the approver on a thread of its own and stops waiting for it at the first of those
    anyway: the call is then denied, and an approver that ignored ``until`` is abandoned.
    ``deadline`` is the call's deadline (``time.monotonic()``; None: no limit). ``ended`` is
    cancelled when the call ends without waiting for the answer (its cancel, the client's
    close, the connection's death, its deadline), for an approver that hears of it by callback.
    The time an approver takes is the call's: the call gets what is left.
    """

    server: str | None
    tool: str
    arguments: Mapping[str, Any]
    annotations: Mapping[str, Any] | None
    rule: str
    deadline: float | None = None
    ended: CancelToken = attrs.field(factory=CancelToken, eq=False, repr=False)
    description: str | None = None
    until: Until = attrs.field(factory=Until, eq=False, repr=False)

    def lines(self) -> list[str]:
        """The request as one-line, cleaned text: who, which tool, its hints, what the server
        says the tool does (quoted: the server's words, not the client's), each argument."""
        out = self._head()
        if self.description:
            out.append(f"  description: {clean(json.dumps(self.description, ensure_ascii=False), 300)}")
        if not self.arguments:
            out.append("  (no arguments)")
        for key, value in self.arguments.items():
            out.append(f"  {clean(key, 80)} = {clean(_json(value), 300)}")
        return out

    def _head(self) -> list[str]:
        hints = effective_hints(self.annotations)
        marks = [label for hint, label in (("readOnlyHint", "read-only"), ("destructiveHint", "destructive"),
                                           ("openWorldHint", "open-world")) if hints[hint]]
        server = clean(json.dumps(self.server, ensure_ascii=False), 80) if self.server else "(unnamed)"
        out = [f"Tool call on server {server}: {clean(json.dumps(self.tool, ensure_ascii=False), 120)}"
               f" ({', '.join(marks) or 'no hints'}; rule: {clean(self.rule, 80)})"]
        return out


Approver = Callable[[ApprovalRequest], bool]


def deny_all(request: ApprovalRequest) -> bool:
    """The approver of a policy given none: nobody is there to say yes."""
    return False


# -- the policy ---------------------------------------------------------------------------------


class Policy:
    """Rules, the default, who approves, and where decisions are written (see the module docstring).

    Thread-safe; one Policy may serve many clients. ``server`` is the name the rules match
    ``server=`` against (``for_server`` binds one). ``audit`` is a path appended to, one JSON
    object a line (time, server, tool, argument names and their SHA-256, decision, rule,
    reason): argument values are left out, since they may be secrets.
    """

    def __init__(
        self,
        rules: Sequence[Rule] = (),
        *,
        default: Action = "ask",
        approver: Approver | None = None,
        audit: PathLike | None = None,
        server: str | None = None,
    ) -> None:
        if default not in ACTIONS:
            raise ValueError(f"default is one of {', '.join(ACTIONS)}, got {default!r}")
        for rule in rules:
            if not isinstance(rule, Rule):
                raise TypeError(f"a policy's rules are Rule objects, got {rule!r}")
        if approver is not None and not callable(approver):
            raise TypeError(f"an approver is a function approver(request) -> bool, got {approver!r}")
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.default = default
        self.approver: Approver = approver or deny_all
        self.audit = os.fspath(audit) if audit is not None else None
        self.server = server
        self._audit_lock = threading.Lock()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Policy):
            return NotImplemented
        return (self.rules, self.default, self.approver, self.audit, self.server) == (
            other.rules, other.default, other.approver, other.audit, other.server)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Policy {len(self.rules)} rules, default {self.default}{f' for {self.server!r}' if self.server else ''}>"

    def for_server(self, name: str) -> Policy:
        """This policy with its ``server`` rules matched against ``name`` (the name you gave)."""
        bound = Policy(self.rules, default=self.default,
                       approver=self.approver, audit=self.audit, server=name)
        bound._audit_lock = self._audit_lock  # one file, one writer at a time
        return bound

    def decide(self, call: ToolCall) -> Decision:
        """The first rule that matches ``call`` (``Rule.matches``: one that cannot tell matches
        if it denies or asks), or the default."""
        for index, rule in enumerate(self.rules):
            verdict = rule.verdict(call)
            if _decides(rule.action, verdict):
                return Decision(action=rule.action, rule=rule.name or f"rule {index + 1}", certain=verdict is True)
        return Decision(action=self.default, rule="default")

    def extension(self) -> PolicyGate:
        """The gate that enforces this policy on one Client (what ``Plugins(policy=...)`` adds)."""
        return PolicyGate(self)

    # -- recording --------------------------------------------------------------------------

    def record(self, call: ToolCall, decision: Decision, allowed: bool, reason: str) -> None:
        """Log the decision, add it to the current span, append it to the audit file."""
        server = call.server or call.claimed_server
        log.info("policy: %s the call of %s on %s (%s: %s)", "allowed" if allowed else "denied",
                 clean(json.dumps(call.tool, ensure_ascii=False), 120),
                 clean(json.dumps(server, ensure_ascii=False), 80), clean(decision.rule, 80), reason)
        _span_event(call, decision, allowed, reason)
        if self.audit is None:
            return
        entry = {
            "time": round(time.time(), 3), "server": server, "tool": call.tool,
            "arguments": {key: hashlib.sha256(_json(value).encode("utf-8", "surrogatepass")).hexdigest()
                          for key, value in call.arguments.items()},
            "decision": "allow" if allowed else "deny", "action": decision.action, "rule": decision.rule,
            "reason": reason,
        }
        line = json.dumps(entry, sort_keys=True, ensure_ascii=True) + "\n"
        try:
            with self._audit_lock:
                fd = os.open(self.audit, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, line.encode("ascii"))
                finally:
                    os.close(fd)
        except OSError as exc:
            log.error("policy: cannot write the audit file %s: %s", self.audit, exc)


def _span_event(call: ToolCall, decision: Decision, allowed: bool, reason: str) -> None:
    """The decision as an event on the current span (the ``tools/call`` one), if tracing runs."""
    try:
        from opentelemetry import trace
    except ImportError:
        return
    span = trace.get_current_span()
    if span.get_span_context().is_valid:
        span.add_event("mcp.policy", {
            "mcp.policy.decision": "allow" if allowed else "deny", "mcp.policy.action": decision.action,
            "mcp.policy.rule": decision.rule, "mcp.policy.reason": reason, "gen_ai.tool.name": call.tool,
        })


# -- the gate ---------------------------------------------------------------------------------

#: The hints of a tool whose annotations are not an object: none of them can be judged.
_UNREADABLE_HINTS: Mapping[str, Any] = dict.fromkeys(HINT_DEFAULTS, "(annotations not an object)")


def _defaults(schema: Any) -> dict[str, Any]:
    """The defaults an input schema gives its top-level arguments."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return {}
    return {name: spec["default"] for name, spec in properties.items()
            if isinstance(name, str) and isinstance(spec, dict) and "default" in spec}


def _directory(session: Session | None) -> str | None:
    """Where the server resolves a relative path, when the client knows it."""
    directory = session.server_directory if session is not None else None
    return directory if isinstance(directory, str) and os.path.isabs(directory) else None



class PolicyGate(Extension):
    """The extension that enforces a ``Policy`` on one Client: middleware around ``tools/call``.

    It learns each tool's annotations and argument defaults from the ``tools/list`` results
    that pass by, forgets them on ``notifications/tools/list_changed``, and lists the tools
    itself when a call names one it has not seen (one it still cannot find is judged as
    unknown: its hints cannot be told). It judges the call as it will be sent: the arguments
    are passed on as the JSON they were judged as.
    """

    def __init__(self, policy: Policy) -> None:
        if not isinstance(policy, Policy):
            raise TypeError(f"policy= takes a mcpclient.policy.Policy, got {policy!r}")
        self.policy = policy
        self._tools: dict[str, Mapping[str, Any]] = {}  # each listed tool's annotations
        self._defaults: dict[str, dict[str, Any]] = {}  # each listed tool's argument defaults
        self._descriptions: dict[str, str] = {}  # shown to an approver, cleaned
        self._lock = threading.Lock()
        self._session: Session | None = None
        self._rounds = threading.local()  # .next: the next round of a call approved on this thread
        self._asking: set[CancelToken] = set()  # the approvals waited for now: ended at close
        self._closed = False

    def middleware(self) -> Sequence[Middleware]:
        return (self._gate,)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            asking, self._asking = set(self._asking), set()
        for ended in asking:
            ended.cancel("the client closed")

    def wants_list_changes(self) -> bool:
        return True  # a changed tool is judged again, in either era

    def bind(self, session: Session) -> None:
        self._session = session
        self._forget()

    def _forget(self) -> None:
        with self._lock:
            self._tools.clear()
            self._defaults.clear()
            self._descriptions.clear()

    def _gate(self, message: Message, next_: Next) -> Any:
        if message.kind == "notification":
            if message.direction == "receive" and message.method == "notifications/tools/list_changed":
                self._forget()
            return next_(message)
        if message.direction != "send":
            return next_(message)
        if message.method == "tools/list":
            result = next_(message)
            self._learn(result)
            return result
        if message.method != "tools/call":
            return next_(message)
        budget = CallTime(message.options, self._session, what="the approval of the tool call")
        message, approved = self._check(message, budget)
        result = next_(budget.passed_on(message))
        if approved is not None and isinstance(result, dict) and result.get("resultType") == "input_required":
            self._rounds.next = (approved, result.get("requestState"))  # its next round is not asked again
        return result

    def _learn(self, result: Any) -> None:
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            return
        with self._lock:
            for tool in tools:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    annotations = tool.get("annotations")
                    self._tools[tool["name"]] = (annotations if isinstance(annotations, dict)
                                                 else {} if annotations is None else _UNREADABLE_HINTS)
                    self._defaults[tool["name"]] = _defaults(tool.get("inputSchema"))
                    description = tool.get("description")
                    if isinstance(description, str):
                        self._descriptions[tool["name"]] = description
                    else:
                        self._descriptions.pop(tool["name"], None)

    def _annotations(self, name: str, budget: CallTime) -> Mapping[str, Any] | None:
        """The tool's annotations as the server lists them (``{}``: none), listing the tools
        when it has not seen the tool; None when the server does not list it, or the listing
        failed. A listing ended by the call's own end raises that end."""
        with self._lock:
            if name in self._tools:
                return self._tools[name]
        session = self._session
        if session is None:
            return None
        shown = clean(json.dumps(name, ensure_ascii=False), 120)
        cursor: str | None = None
        for _ in range(100):  # a server that pages forever is not believed further
            # A listing ended by the call's own end (its time, its cancel, close(), the
            # connection's death) ends the call so, unsent: not as "no annotations", which a
            # rule would judge, refusing a call that no longer exists.
            try:
                result = session.request("tools/list", {"cursor": cursor} if cursor else None,
                                         options=budget.request_options("tools/list"))
            except RequestTimeout as exc:
                raise RequestTimeout(f"the call of tool {shown} timed out while the policy listed the tools to "
                                     "judge it; it was not sent", method="tools/call",
                                     timeout=budget.options.timeout) from exc
            except RequestCancelled as exc:
                raise RequestCancelled(f"the call of tool {shown} was cancelled while the policy listed the tools "
                                       "to judge it; it was not sent", method="tools/call") from exc
            except (ClientClosedError, ConnectionClosed):
                raise
            except MCPError as exc:
                log.warning("policy: could not list the tools to judge %s: %s", shown, exc)
                return None
            with self._lock:
                if name in self._tools:
                    return self._tools[name]
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            if not isinstance(cursor, str) or not cursor:
                return None
        return None

    def _check(self, message: Message, budget: CallTime) -> tuple[Message, tuple[str, str] | None]:
        """Judge the call: raise ``ToolCallDenied``, or give the message to send (its name and
        arguments as the JSON they were judged as) and, for a call a person approved, its key
        (what its next round, if the server asks for input, is matched against)."""
        waiting = getattr(self._rounds, "next", None)
        self._rounds.next = None  # an approval covers the next round of its own call only
        params = message.params or {}
        name = params.get("name")
        raw = params.get("arguments")
        session = self._session
        info = session.server_info if session is not None else None
        claimed = info.name if isinstance(info, Implementation) else None
        claimed = claimed if isinstance(claimed, str) else None
        if not isinstance(name, str) or not isinstance(raw, (dict, type(None))):
            self._refuse_malformed(name, raw, claimed)
        # Judged as sent: the JSON the transport would write, decoded (a tuple is a list, a str
        # subclass a str, a dict subclass what it encodes as); what cannot be sent raises here.
        text = json.dumps(raw or {}, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        arguments: dict[str, Any] = json.loads(text)
        name = json.loads(json.dumps(name))
        message = message.replace(params={**params, "name": name, **({} if raw is None else {"arguments": arguments})})
        key = (name, text)
        continuation = any(field in params for field in _CONTINUATION)
        listed = self._annotations(name, budget)
        with self._lock:
            defaults = self._defaults.get(name, {}) if listed is not None else {}
        call = ToolCall(tool=name, arguments=arguments, annotations=listed, server=self.policy.server,
                        claimed_server=claimed, defaults=defaults, directory=_directory(session))
        decision = self.policy.decide(call)
        if decision.action == "allow":
            if not continuation:
                self.policy.record(call, decision, True, "allowed by the rule")
            return message, None
        if (decision.action == "ask" and continuation and waiting is not None and waiting[0] == key
                and params.get("requestState") == waiting[1]):
            return message, key  # the next round of a call approved at its first, as the server asked
        if decision.action == "deny":
            reason = "denied by the rule" if decision.certain else "denied by the rule, which could not judge the call"
        else:
            allowed, reason = self._ask(call, decision, budget)
            if allowed:
                self.policy.record(call, decision, True, reason)
                return message, key
        self.policy.record(call, decision, False, reason)
        raise ToolCallDenied(
            f"the call of tool {name!r} was refused by the policy ({decision.rule}: {reason}); it was not sent",
            tool=name, server=call.server or call.claimed_server, rule=decision.rule, reason=reason,
        )

    def _refuse_malformed(self, name: Any, arguments: Any, claimed: str | None) -> None:
        """A call whose name is not a string, or whose arguments are not an object, names no
        tool or values a rule can judge (a lenient server may still make something of it)."""
        what = "its name is not a string" if not isinstance(name, str) else "its arguments are not an object"
        shown = clean(_json(name), 120)
        call = ToolCall(tool=shown, arguments={}, annotations=None, server=self.policy.server, claimed_server=claimed)
        decision = Decision(action="deny", rule="malformed call", certain=False)
        self.policy.record(call, decision, False, what)
        raise ToolCallDenied(f"the call of tool {shown} was refused by the policy ({what}); it was not sent",
                             tool=shown, server=call.server or claimed, rule=decision.rule, reason=what)

    def _ask(self, call: ToolCall, decision: Decision, budget: CallTime) -> tuple[bool, str]:
        if self.policy.approver is deny_all:
            return False, "the rule says ask, and the policy has no approver"
        until = budget.until
        with self._lock:
            description = self._descriptions.get(call.tool)
        request = ApprovalRequest(server=call.server or call.claimed_server, tool=call.tool,
                                  arguments=call.arguments, annotations=call.annotations, rule=decision.rule,
                                  description=description, deadline=until.deadline, until=until)
        ended = request.ended
        with self._lock:
            if self._closed:
                return False, "the client closed"
            self._asking.add(ended)
        budget.spent = True  # the approval's time is the call's: what follows gets the rest
        undo = until.on_stop(lambda: ended.cancel(why_ended(until.stopped())))
        try:
            # On a thread of its own: an approver blocked where nothing can reach it (input(),
            # a foreign wait) is abandoned at the call's deadline, cancel, close or death.
            answer = until.call(self.policy.approver, request, name="mcpclient-approver")
        except (RequestTimeout, RequestCancelled, ClientClosedError, ConnectionClosed) as exc:
            if until.stopped() is None:  # the approver's own error, not the call's end
                return self._failed(exc)
            answer = False
        except Exception as exc:  # an approver that fails says no
            return self._failed(exc)
        finally:
            undo()
            with self._lock:
                self._asking.discard(ended)
        stop = until.stopped()
        if isinstance(stop, RequestTimeout):
            ended.cancel(why_ended(stop))
            if answer is not True:
                return False, "no answer came before the call's deadline"
        elif stop is not None:  # cancelled, closed, the connection gone: denied even if approved
            ended.cancel(why_ended(stop))
            return False, f"{ended.reason} before an answer came"
        elif ended.cancelled:  # the gate closed (PolicyGate.close)
            return False, f"{ended.reason} before an answer came"
        return (True, "approved") if answer is True else (False, "not approved")

    @staticmethod
    def _failed(exc: Exception) -> tuple[bool, str]:
        log.warning("policy: the approver raised %s: %s; the call is denied", type(exc).__name__, exc)
        return False, f"the approver failed ({type(exc).__name__})"


def why_ended(stop: MCPError | None) -> str:
    """Why a call stopped waiting for its approval, as ``ApprovalRequest.ended`` says it."""
    if isinstance(stop, RequestCancelled):
        return "the call was cancelled"
    if isinstance(stop, ClientClosedError):
        return "the client closed"
    if isinstance(stop, ConnectionClosed):
        return "the connection ended"
    if isinstance(stop, RequestTimeout):
        return "the call's deadline passed"
    return "the call ended"


def check_action(value: Any, where: str) -> str:
    """``value`` if it is an action, else ``ConfigError`` naming ``where``."""
    if value not in ACTIONS:
        raise ConfigError(f"{where}: the action is one of {', '.join(ACTIONS)}, got {clean(repr(value), 80)}")
    return str(value)


def policy_extensions(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """What ``Plugins(policy=...)`` adds (nothing without it)."""
    policy = options.get("policy")
    return () if policy is None else (PolicyGate(policy),)
