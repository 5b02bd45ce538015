"""``SharedGroup``: a ``ClientGroup`` per process, for web apps that use several servers.

The group is opened lazily in each process, like ``SharedClient``'s client. A member whose
server dies makes the whole group reopen on the next call (a ``ClientGroup`` opens its
servers together, in parallel, so this costs one open's time, not one per server).
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Mapping, Sequence

from . import ai
from . import types as t
from ._build.open import Target, credentials_of, opening
from ._build.process_local import ProcessLocal, error_line
from ._build.reopening import RetryOption, check_retry, policy_of
from ._build.shared import call_bounds, open_within, release_inherited, safe_tool, server_of
from ._build.travel import check_travels, made, option_items, received
from ._client.batch import map_tool as _map_tool
from ._core.exceptions import ConnectionClosed, MCPError
from ._core.timeouts import DEFAULT, DEFAULT_TIMEOUT
from .group import ClientGroup

__all__ = ["SharedGroup"]

#: What ``ClientGroup`` takes besides ``connect``'s keywords (``SharedGroup`` passes them on).
GROUP_OPTIONS = tuple(name for name in inspect.signature(ClientGroup.__init__).parameters if name not in ("self", "servers", "options"))


class SharedGroup:
    """A process-aware ``ClientGroup``: create it once (``SharedGroup.from_config(...)``).

    ``servers`` and keyword arguments are ``ClientGroup``'s. ``retry`` is as for
    ``SharedClient`` after a dead server: "fail" (default) or "safe" (retry once the tool calls
    whose annotations say they are read-only or idempotent, and listings), or a
    ``mcpclient.Retry`` (once, and any tool call when it says ``idempotent``).

    Pickles as its servers and options, like ``SharedClient``: a worker process that
    receives it opens its own group on first use, one per process.
    """

    #: A dead server is replaced by the next call: ``map_tool`` fails that item, not the batch.
    reopens_connections = True

    def __init__(self, servers: Mapping[str, Target], *, retry: RetryOption = "fail", **options: Any) -> None:
        self.servers = dict(servers)
        self.retry = check_retry(retry)
        self._policy = policy_of(retry)
        self._options = opening("SharedGroup()", options, own=GROUP_OPTIONS)
        #: What each server's client sends (the one account of each): no health answer shows it.
        self._credentials = [credentials_of(target, self._options) for target in self.servers.values()]
        self._holder: ProcessLocal[ClientGroup] = ProcessLocal(
            self._open, _close_group, _release_group, lock_timeout=None, what="the MCP server group",
            redact=self._redact,
        )
        # The timeout of a call that gives none: each member client's.
        timeout = options.get("timeout", DEFAULT)
        self._timeout: float | None = DEFAULT_TIMEOUT if timeout is DEFAULT else timeout
        self._safe: dict[str, bool] = {}
        self._ident = made(self)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the servers and options; raise ``TypeError`` naming what cannot travel."""
        servers = [(f"the server {name!r}", target) for name, target in self.servers.items()]
        check_travels("this SharedGroup", [*servers, *option_items(self._options)])
        return (_received_group, (self._ident, (self.servers, self.retry, dict(self._options))))

    @classmethod
    def from_config(
        cls, path: Any = None, *, names: Sequence[str] | None = None, trust_project: bool = False,
        retry: RetryOption = "fail", **options: Any,
    ) -> SharedGroup:
        """The servers of a config file (see ``ClientGroup.from_config``), read now, opened
        on first use in each process."""
        entries = ClientGroup.from_config(path, names=names, trust_project=trust_project).servers
        return cls(entries, retry=retry, **options)

    def _redact(self, text: str) -> str:
        for credentials in self._credentials:
            text = credentials.redactor.redact(text)
        return text

    def _line(self, error: BaseException) -> str:
        return error_line(error, self._redact)

    def _open(self) -> ClientGroup:
        group = ClientGroup(self.servers, **self._options).open()
        if not group.clients:
            errors = "; ".join(f"{name}: {error}" for name, error in group.errors.items())
            group.close()
            raise ConnectionClosed(f"no server of the group could be opened ({errors or 'none configured'})")
        return group

    def get(self) -> ClientGroup:
        """This process's open ``ClientGroup`` (opened now if there is none)."""
        return self._holder.get()

    def close(self) -> None:
        """Close this process's group; the next call opens it again."""
        self._holder.close()

    @property
    def opened(self) -> int:
        return self._holder.opened

    @property
    def errors(self) -> dict[str, BaseException]:
        """The servers of this process's group that failed (empty before it opens)."""
        group = self._holder.current()
        return dict(group.errors) if group is not None else {}

    def __repr__(self) -> str:
        group = self._holder.current()
        state = f"{len(group.clients)} open, {len(group.errors)} failed" if group is not None else "not open"
        error = f", last error {self._holder.last_error!r}" if self._holder.last_error else ""
        return f"<SharedGroup {state} in pid {os.getpid()}, opened {self._holder.opened}x{error}>"

    def list_tools(self, *, timeout: float | None = DEFAULT) -> list[t.ToolDef]:
        group, kwargs = open_within(self._holder, {"timeout": timeout}, self._timeout)
        try:
            tools = group.list_tools(**kwargs)
        except ConnectionClosed as exc:
            self._holder.discard(group, exc)
            if self._policy is None or not self._policy.allows(exc, changes_nothing=True):
                raise
            group, kwargs = open_within(self._holder, kwargs, self._timeout)
            tools = group.list_tools(**kwargs)
        self._safe.update({tool.name: safe_tool(tool) for tool in tools})
        return tools

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: Any = DEFAULT, **kwargs: Any
    ) -> t.ToolResult:
        """Run the prefixed tool ``name``; other keyword arguments go to ``Client.call_tool``."""
        group, options = open_within(self._holder, {"timeout": timeout, **kwargs}, self._timeout)
        try:
            return group.call_tool(name, arguments, **options)
        except ConnectionClosed as exc:
            self._holder.discard(group, exc)
            if self._policy is None or not self._policy.transient(exc):
                raise
            fresh, options = open_within(self._holder, options, self._timeout)
            if not self._policy.idempotent and name not in self._safe:
                self._safe.update({tool.name: safe_tool(tool) for tool in fresh.list_tools()})
            if not self._policy.allows(exc, changes_nothing=self._safe.get(name, False)):
                raise
            return fresh.call_tool(name, arguments, **options)

    map_tool = _map_tool

    def tools(self, *, timeout: float | None = DEFAULT) -> list[ai.Tool]:
        """``ai.Tool`` objects with prefixed names, run through this shared group."""
        return [
            ai.Tool(name=d.name, description=d.description, schema=d.input_schema, client=self)
            for d in self.list_tools(timeout=timeout)
        ]

    def health(self, *, timeout: float = 2.0) -> dict[str, Any]:
        """A ping of every server of this process's group: ``{"ok": all answered, "servers":
        {name: {"ok": ..., "error": ...}}, "pid", "opened", "last_error"}``."""
        servers: dict[str, dict[str, Any]] = {}
        try:
            group = self._holder.get(call_bounds({"timeout": timeout}, self._timeout))
        except MCPError as exc:
            self._holder.note_error(exc)
            group = None
        if group is not None:
            for name in self.servers:
                if name in group.errors or name not in group:
                    error = group.errors.get(name)
                    servers[name] = {"ok": False, "error": self._line(error) if error else "not open"}
                    continue
                client = group[name]
                try:
                    client.ping(timeout=timeout)
                    servers[name] = {"ok": True, "server": server_of(client)}
                except MCPError as exc:
                    self._holder.note_error(exc)
                    servers[name] = {"ok": False, "error": self._line(exc)}
        return {
            "ok": bool(servers) and all(entry["ok"] for entry in servers.values()),
            "servers": servers,
            "pid": os.getpid(),
            "opened": self._holder.opened,
            "last_error": self._holder.last_error,
        }


def _received_group(ident: str, spec: tuple[Any, ...]) -> SharedGroup:
    """Unpickle a ``SharedGroup``: this process's one for ``ident`` (made on first receipt)."""
    servers, retry, options = spec

    def build() -> SharedGroup:
        group = SharedGroup(servers, retry=retry, **options)
        group._ident = ident
        return group

    return received(ident, build)


def _close_group(group: ClientGroup) -> None:
    group.close()


def _release_group(group: ClientGroup) -> None:
    for client in list(group.clients.values()):
        release_inherited(client)
