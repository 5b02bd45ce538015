"""ClientGroup: several MCP servers used as one, each tool under its server's prefix.

    >>> from mcpclient import ClientGroup
    >>> with ClientGroup.from_config("mcp.json") as group:       # or ClientGroup({name: target})
    ...     print([tool.name for tool in group.list_tools()])    # ["github__search", "fs__read", ...]
    ...     group.call_tool("fs__read", {"path": "README.md"})
    ...     print(group.errors)                                  # {"broken": ConnectionClosed(...)}

Servers open in parallel threads within ``open_timeout``; one that fails is kept in
``errors`` and the others work. Leaving the ``with`` block closes every client.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Iterator, Mapping, NoReturn, Sequence, SupportsIndex

import attrs

from . import ai
from . import types as t
from ._build.open import Target, named, open_client, opening
from ._client.batch import map_tool as _map_tool
from ._client.client import DEFAULT, Client
from ._core.exceptions import MCPError, RequestTimeout, UnknownToolError
from ._core.llm_names import MAX_NAME_LENGTH, sanitize, unique_names
from .apps import visible_to_model
from .plugins.transform import ToolTransforms

__all__ = ["ClientGroup", "UnknownToolError"]

log = logging.getLogger(__name__)

#: How long ``open()`` waits for all servers together, in seconds.
DEFAULT_OPEN_TIMEOUT = 30.0


class ClientGroup:
    """Several servers behind one object: tools under ``server{separator}tool`` names.

    ``servers`` maps a name to a target: a command (list of strings), an http(s) URL, a
    ``Transport`` (for example ``mcpclient.testing.FakeServer``) or a ``config.ServerConfig``.
    ``separator`` joins server and tool names (default ``"__"``); with ``sanitize`` (default)
    the joined names follow the LLM tool-name rules (``^[a-zA-Z0-9_-]{1,64}$``, unique).
    ``open_timeout`` bounds opening all servers; ``timeout`` is every client's call timeout.
    ``transforms`` maps a server name to its tool transformations: a
    ``plugins.transform.ToolTransforms``, or a dict in a config entry's shape (``tools``,
    ``include_tags``, ``exclude_tags``: see docs/config.md); a config entry brings its own.
    Other keyword arguments are ``connect``'s (``handlers``, ``plugins``, ``http``, ``stdio``...),
    for each server.

    Safe to share between threads once open. A server that fails to open, or fails while its
    tools are listed, is recorded in ``errors`` (name to exception) and left out.
    """

    def __init__(
        self,
        servers: Mapping[str, Target],
        *,
        separator: str = "__",
        sanitize: bool = True,
        open_timeout: float = DEFAULT_OPEN_TIMEOUT,
        timeout: float | None = DEFAULT,
        transforms: Mapping[str, ToolTransforms | Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        if not separator:
            raise ValueError("separator must not be empty")
        self.transforms: dict[str, ToolTransforms] = {}
        for name, given in (transforms or {}).items():
            made = given if isinstance(given, ToolTransforms) else ToolTransforms.from_entry(
                given, where=f"the transforms of server {name!r}")
            if made is not None:
                self.transforms[name] = made
        self.servers: dict[str, Target] = dict(servers)
        self.separator = separator
        self.sanitize = sanitize
        self.open_timeout = open_timeout
        self.timeout = timeout
        self.options = opening("ClientGroup()", options)
        self.clients: dict[str, Client] = {}
        self.errors: dict[str, BaseException] = {}
        self._routes: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_config(
        cls, path: Any = None, *, names: Sequence[str] | None = None, trust_project: bool = False, **kwargs: Any
    ) -> ClientGroup:
        """A group of the servers in a config file (or the usual files, see ``config.load``).

        ``names`` picks some of them; a name not in the file raises ``config.ConfigError``.
        ``trust_project`` consents, for this group, to the servers of project config files
        (files inside the checkout you are in, see ``config.load``): they are started and their
        variables expanded. Without it, a project's server you have not approved
        (``mcpclient trust``) does not open: its ``ConfigError``, saying how to consent, is
        kept in ``errors`` like any server's failure.
        """
        from .config import ConfigError, load

        entries = load(path, trust_project=trust_project)
        if names is not None:
            unknown = [n for n in names if n not in entries]
            if unknown:
                known = ", ".join(sorted(entries)) or "none"
                raise ConfigError(f"no server named {', '.join(map(repr, unknown))} in the config (known: {known})")
            entries = {n: entries[n] for n in names}
        return cls(entries, **kwargs)

    def __repr__(self) -> str:
        return f"<ClientGroup {len(self.clients)} open, {len(self.errors)} failed>"

    # -- life cycle -------------------------------------------------------------------------

    def open(self) -> ClientGroup:
        """Open every server in parallel; return once all are open or failed, or the
        ``open_timeout`` has passed (the late ones are recorded in ``errors`` as
        ``RequestTimeout`` and closed when they finish). Never raises for a server's failure.
        """
        deadline = time.monotonic() + self.open_timeout
        threads = []
        for name, target in self.servers.items():
            if name in self.clients:
                continue
            thread = threading.Thread(target=self._open_one, args=(name, target), daemon=True,
                                      name=f"mcpclient-group-open-{name}")
            thread.start()
            threads.append((name, thread))
        for _, thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            for name, thread in threads:
                if thread.is_alive() and name not in self.clients and name not in self.errors:
                    self.errors[name] = RequestTimeout(
                        f"server {name!r} did not open within {self.open_timeout} s",
                        method="initialize", timeout=self.open_timeout,
                    )
        for name, error in self.errors.items():
            log.warning("server %r is not available: %s", name, error)
        return self

    def _open_one(self, name: str, target: Target) -> None:
        try:
            options = named(self.options, name)
            if name in self.transforms:
                options["extensions"] = [self.transforms[name].extension(), *options.get("extensions", ())]
            if self.timeout is not DEFAULT:
                options["timeout"] = self.timeout
            client = open_client(target, options, open_timeout=self.open_timeout)
        except Exception as exc:
            with self._lock:
                self.errors.setdefault(name, exc)
            return
        with self._lock:
            keep = not self._closed and name not in self.errors
            if keep:
                self.clients[name] = client
        if not keep:
            client.close()  # too late: open() gave up on it, or the group was closed

    def close(self) -> None:
        """Close every client (in parallel, so slow servers do not add up); idempotent."""
        with self._lock:
            self._closed = True
            clients = list(self.clients.values())
            self.clients.clear()
            self._routes.clear()
        threads = [threading.Thread(target=c.close, name="mcpclient-group-close", daemon=True) for c in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise TypeError(
            "a ClientGroup cannot be pickled: it holds live connections; to pass one to another process, use "
            "mcpclient.SharedGroup(servers, **options), which pickles as its servers and opens its own group "
            "in each process"
        )

    def __enter__(self) -> ClientGroup:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getitem__(self, name: str) -> Client:
        """The open client of server ``name``; ``KeyError`` (with its error) if it failed."""
        try:
            return self.clients[name]
        except KeyError:
            why = f": {self.errors[name]}" if name in self.errors else ""
            raise KeyError(f"server {name!r} is not open{why}") from None

    def __contains__(self, name: object) -> bool:
        return name in self.clients

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, _ in self._open_clients()])

    def _open_clients(self) -> list[tuple[str, Client]]:
        """The open clients in the order the servers were given (not the order they opened)."""
        with self._lock:
            return [(name, self.clients[name]) for name in self.servers if name in self.clients]

    def __len__(self) -> int:
        return len(self.clients)

    # -- tools ------------------------------------------------------------------------------

    def _name(self, server: str, tool: str) -> str:
        joined = f"{server}{self.separator}{tool}"
        return sanitize(joined, max_length=MAX_NAME_LENGTH) if self.sanitize else joined

    def list_tools(self, *, timeout: float | None = DEFAULT) -> list[t.ToolDef]:
        """Every open server's tools, with prefixed names, in server order.

        A server that fails while listing is recorded in ``errors`` and skipped.
        """
        listed: list[tuple[str, t.ToolDef]] = []
        for server, client in self._open_clients():
            try:
                listed += [(server, tool) for tool in client.list_tools(timeout=timeout)]
            except MCPError as exc:
                log.warning("listing the tools of %r failed: %s", server, exc)
                with self._lock:
                    self.errors[server] = exc
        names = [self._name(server, tool.name) for server, tool in listed]
        if self.sanitize:
            names = unique_names(names)
        with self._lock:
            self._routes = {name: (server, tool.name) for name, (server, tool) in zip(names, listed)}
        return [attrs.evolve(tool, name=name) for name, (_, tool) in zip(names, listed)]

    def tools(self, *, timeout: float | None = DEFAULT) -> list[ai.Tool]:
        """``ai.Tool`` objects with prefixed names, run through this group.

        Tools meant for an MCP App view only (visibility without ``"model"``) are left out;
        ``call_tool`` still runs them.
        """
        return [
            ai.Tool(name=d.name, description=d.description, schema=d.input_schema, client=self)
            for d in self.list_tools(timeout=timeout)
            if visible_to_model(d)
        ]

    map_tool = _map_tool

    def route(self, name: str) -> tuple[str, str]:
        """``(server, tool)`` for a prefixed name; lists the tools once if it is not known.

        Raises ``UnknownToolError`` when no open server offers it.
        """
        with self._lock:
            found = self._routes.get(name)
        if found is None:
            self.list_tools()
            with self._lock:
                found = self._routes.get(name)
        if found is None:
            server = name.split(self.separator, 1)[0]
            if server in self.errors:
                raise UnknownToolError(f"tool {name!r}: server {server!r} is not available: {self.errors[server]}", tool=name)
            known = ", ".join(sorted(self._routes)) or "none"
            raise UnknownToolError(f"no server in this group offers a tool {name!r} (known: {known})", tool=name)
        return found

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: Any = DEFAULT, **kwargs: Any
    ) -> t.ToolResult:
        """Run the prefixed tool ``name`` on its server; other keyword arguments (such as
        ``on_progress``) go to ``Client.call_tool``."""
        server, tool = self.route(name)
        if timeout is not DEFAULT:
            kwargs["timeout"] = timeout
        result: t.ToolResult = self[server].call_tool(tool, arguments, **kwargs)
        return result
