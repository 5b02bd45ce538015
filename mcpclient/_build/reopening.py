"""A call on a client that is replaced when its server dies: what ``SharedClient`` and a pooled
key's ``PooledClient`` share.

Each gets its client from ``_lend(kwargs)``: the open client (opened first if need be, the wait
bounded by the call's time and cancel), the call's keyword arguments with what is left of its
time, and what to run once the call is over (None: nothing; a pool gives its slot back). A call
that finds the server dead (``ConnectionClosed``) drops the client (``_discard``): the next call
opens a new one. Whether the failed call is sent again on the new one is ``retry``'s: "fail"
never; "safe" sends again, once, the requests that change nothing, and a tool call only when
the tool's annotations say running it twice is harmless. Nothing else is ever sent twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Tuple, TypeVar

from .. import types as t
from .._core.exceptions import ConnectionClosed
from .._core.methods import resendable_tool
from .._core.timeouts import DEFAULT

if TYPE_CHECKING:
    from .._client.client import Client

__all__ = ["RETRY_MODES", "Lent", "Reopening", "check_retry", "safe_tool"]

R = TypeVar("R")
#: ``call(client, kwargs)``: one call on a client, with the keyword arguments it is given.
Call = Callable[["Client", Mapping[str, Any]], R]
#: What ``_lend`` gives: the client, the call's keyword arguments, what to run after the call.
Lent = Tuple["Client", Mapping[str, Any], Optional[Callable[[], None]]]

RETRY_MODES = ("fail", "safe")


def check_retry(retry: str) -> str:
    """``retry`` if it is one of ``RETRY_MODES``, else ``ValueError``."""
    if retry not in RETRY_MODES:
        raise ValueError(f"retry must be one of {', '.join(RETRY_MODES)}, got {retry!r}")
    return retry


def safe_tool(tool: t.ToolDef) -> bool:
    """Whether the tool's annotations say running it twice is harmless (``_methods.resendable_tool``)."""
    return resendable_tool(tool.annotations)


class Reopening:
    """``_run`` and ``_run_tool`` over ``_lend`` and ``_discard`` (see the module docstring)."""

    retry: str
    #: Whether each tool seen is harmless to run twice (from ``list_tools``).
    _tool_safety: dict[str, bool]

    def _lend(self, kwargs: Mapping[str, Any]) -> Lent:
        raise NotImplementedError

    def _discard(self, client: Client, error: BaseException) -> None:
        raise NotImplementedError

    def _run(self, call: Call[R], kwargs: Mapping[str, Any], *, safe: bool) -> R:
        client, kwargs, done = self._lend(kwargs)
        try:
            return call(client, kwargs)
        except ConnectionClosed as exc:
            self._discard(client, exc)
            if not (safe and self.retry == "safe"):
                raise
        finally:
            if done is not None:
                done()
        client, kwargs, done = self._lend(kwargs)
        try:
            return call(client, kwargs)
        finally:
            if done is not None:
                done()

    def _run_tool(self, name: str, call: Call[R], kwargs: Mapping[str, Any]) -> R:
        """Run a call of the tool ``name``; after a dead server, once more on a new one only with
        ``retry="safe"`` and a tool whose annotations say it changes nothing."""
        client, kwargs, done = self._lend(kwargs)
        try:
            return call(client, kwargs)
        except ConnectionClosed as exc:
            self._discard(client, exc)
            if self.retry != "safe":
                raise
            dead = exc
        finally:
            if done is not None:
                done()
        fresh, kwargs, done = self._lend(kwargs)
        try:
            if name not in self._tool_safety:
                self._learn(fresh.list_tools(timeout=kwargs.get("timeout", DEFAULT)))  # tells whether a retry is harmless
            if not self._tool_safety.get(name, False):
                raise dead
            return call(fresh, kwargs)
        finally:
            if done is not None:
                done()

    def _learn(self, tools: list[t.ToolDef]) -> list[t.ToolDef]:
        self._tool_safety.update({tool.name: safe_tool(tool) for tool in tools})
        return tools
