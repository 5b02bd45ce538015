"""A call on a client that is replaced when its server dies: what ``SharedClient`` and a pooled
key's ``PooledClient`` share.

Each gets its client from ``_lend(kwargs)``: the open client (opened first if need be, the wait
bounded by the call's time and cancel), the call's keyword arguments with what is left of its
time, and what to run once the call is over (None: nothing; a pool gives its slot back). A call
that finds the server dead (``ConnectionClosed``) drops the client (``_discard``): the next call
opens a new one. Whether the failed call is sent again on the new one is ``retry``'s: "fail"
never; "safe" (``SAFE``, a ``Retry`` of two attempts and no pause) sends again, once, the
requests that change nothing, and a tool call only when the tool's annotations say running it
twice is harmless; a ``Retry`` sends them again as its ``attempts`` allow (and any call, once
it says ``idempotent``). A call's own ``retry=`` (``call_tool``'s) decides for that call.
Nothing else is ever sent twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Tuple, TypeVar, Union

from .. import types as t
from .._core.exceptions import ConnectionClosed
from .._core.methods import resendable_tool
from .._core.retry import Retry
from .._core.timeouts import DEFAULT

if TYPE_CHECKING:
    from .._client.client import Client

__all__ = ["RETRY_MODES", "SAFE", "Lent", "Reopening", "RetryOption", "check_retry", "policy_of", "safe_tool"]

R = TypeVar("R")
#: ``call(client, kwargs)``: one call on a client, with the keyword arguments it is given.
Call = Callable[["Client", Mapping[str, Any]], R]
#: What ``_lend`` gives: the client, the call's keyword arguments, what to run after the call.
Lent = Tuple["Client", Mapping[str, Any], Optional[Callable[[], None]]]

RETRY_MODES = ("fail", "safe")
#: What ``retry=`` takes: "fail", "safe", or a ``Retry``.
RetryOption = Union[str, Retry]
#: ``retry="safe"``, spelled: one more attempt, at once, of what is harmless to send again.
SAFE = Retry(attempts=2, backoff=0.0, backoff_max=0.0, jitter=0.0)


def check_retry(retry: RetryOption) -> RetryOption:
    """``retry`` if it is one of ``RETRY_MODES`` or a ``Retry``, else ``ValueError``."""
    if not isinstance(retry, Retry) and retry not in RETRY_MODES:
        raise ValueError(f"retry must be one of {', '.join(RETRY_MODES)} or a mcpclient.Retry, got {retry!r}")
    return retry


def policy_of(retry: RetryOption) -> Retry | None:
    """The ``Retry`` that ``retry`` spells: None for "fail", ``SAFE`` for "safe"."""
    if isinstance(retry, Retry):
        return retry
    return SAFE if check_retry(retry) == "safe" else None


def safe_tool(tool: t.ToolDef) -> bool:
    """Whether the tool's annotations say running it twice is harmless (``_methods.resendable_tool``)."""
    return resendable_tool(tool.annotations)


class Reopening:
    """``_run`` and ``_run_tool`` over ``_lend`` and ``_discard`` (see the module docstring)."""

    retry: RetryOption
    #: Whether each tool seen is harmless to run twice (from ``list_tools``).
    _tool_safety: dict[str, bool]

    def _lend(self, kwargs: Mapping[str, Any]) -> Lent:
        raise NotImplementedError

    def _discard(self, client: Client, error: BaseException) -> None:
        raise NotImplementedError

    def _policy(self, kwargs: Mapping[str, Any]) -> Retry | None:
        """The call's own ``retry=`` (a ``Retry``), else this handle's."""
        own = kwargs.get("retry")
        return own if isinstance(own, Retry) else policy_of(self.retry)

    def _run(self, call: Call[R], kwargs: Mapping[str, Any], *, safe: bool) -> R:
        policy = self._policy(kwargs)
        attempt = 1
        while True:
            client, kwargs, done = self._lend(kwargs)
            try:
                return call(client, kwargs)
            except ConnectionClosed as exc:
                self._discard(client, exc)
                attempt += 1
                if policy is None or attempt > policy.attempts or not policy.allows(exc, safe):
                    raise
            finally:
                if done is not None:
                    done()

    def _run_tool(self, name: str, call: Call[R], kwargs: Mapping[str, Any]) -> R:
        """Run a call of the tool ``name``; after a dead server, again on a new one only as the
        policy allows: a tool whose annotations say it changes nothing, or any if ``idempotent``."""
        policy = self._policy(kwargs)
        attempt = 1
        client, kwargs, done = self._lend(kwargs)
        while True:
            try:
                return call(client, kwargs)
            except ConnectionClosed as exc:
                self._discard(client, exc)
                attempt += 1
                if policy is None or attempt > policy.attempts or not policy.transient(exc):
                    raise
                dead = exc
            finally:
                if done is not None:
                    done()
            client, kwargs, done = self._lend(kwargs)
            try:
                allowed = policy.idempotent or policy.allows(dead, self._safe_tool(client, name, kwargs))
            except BaseException:
                if done is not None:
                    done()
                raise
            if not allowed:
                if done is not None:
                    done()
                raise dead

    def _safe_tool(self, client: Client, name: str, kwargs: Mapping[str, Any]) -> bool:
        """Whether the tool's annotations say running it twice is harmless (listed once on
        ``client`` if it was not seen yet)."""
        if name not in self._tool_safety:
            self._learn(client.list_tools(timeout=kwargs.get("timeout", DEFAULT)))
        return self._tool_safety.get(name, False)

    def _learn(self, tools: list[t.ToolDef]) -> list[t.ToolDef]:
        self._tool_safety.update({tool.name: safe_tool(tool) for tool in tools})
        return tools
