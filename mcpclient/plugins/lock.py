"""The tool lockfile: what each server offered when you reviewed it, and what to do when it changes.

``mcpclient lock`` writes ``mcp.lock``; ``Plugins(lock="mcp.lock", on_change=...)`` compares the
server's tools with it when the client opens and again on every ``tools/list_changed`` (and
each ``tools/list`` result on the way to the caller). A tool whose description, input or
output schema or annotations differ from the lockfile, or that the lockfile does not have, is:

* ``"refuse"`` (the default): left out of ``list_tools()`` and refused when called
  (``ToolChanged``, with the diff), until you review it and run ``mcpclient lock`` again;
* ``"warn"``: used, with a warning (logger ``mcpclient.lock``) that shows the diff;
* ``"update"``: used, and the lockfile rewritten with what the server offers now.

Prompts and resource templates are compared too and reported (never refused: they run no code
of the server's on your behalf). A removed tool is reported. The file (see docs/policy.md)::

    {"servers": {"fs": {"server": {"name": "fs-server", "version": "1.2.0"},
                        "tools": {"read_file": {"hash": "sha256:...", "description": "...",
                                                "inputSchema": {...}, "annotations": {...}}},
                        "prompts": {...}, "resourceTemplates": {...}}},
     "version": 1}

is JSON with sorted keys, two-space indents and ASCII only, so it diffs well in review and
the same servers always write the same bytes. A server is named by the name you gave it (a
config entry's, a ``ClientGroup``'s: ``Lock(path, server=name)``), else by its ``serverInfo``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, Union

import attrs

from .._core.exceptions import ConfigError, MCPError, ToolChanged
from .._core.files import write_atomic
from .._core.text import clean
from ..extensions import Extension, Message, Middleware, Next, Options, Session, Until, WaitLock
from ..types import Implementation
from ._call_time import CallTime

__all__ = ["KINDS", "ON_CHANGE", "Change", "Lock", "LockFile", "ToolLock", "compare", "describe", "entry_for"]

log = logging.getLogger("mcpclient.lock")

PathLike = Union[str, "os.PathLike[str]"]
VERSION = 1
ON_CHANGE: tuple[str, ...] = ("refuse", "warn", "update")
#: What is locked: the listing method, the result key, and the fields hashed per item.
KINDS: Mapping[str, tuple[str, str, tuple[str, ...]]] = {
    "tools": ("tools/list", "tools", ("description", "inputSchema", "outputSchema", "annotations")),
    "prompts": ("prompts/list", "prompts", ("description", "arguments")),
    "resourceTemplates": ("resources/templates/list", "resourceTemplates", ("uriTemplate", "description", "mimeType")),
}
#: The server capability each kind needs before it is listed.
_CAPABILITY = {"tools": "tools", "prompts": "prompts", "resourceTemplates": "resources"}
MAX_PAGES = 1000
#: How long a comparison no call waits for (on connect, after list_changed) may list.
BACKGROUND_TIMEOUT = 30.0

Request = Callable[[str, "dict[str, Any] | None"], "dict[str, Any]"]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def fingerprint(kind: str, item: Mapping[str, Any]) -> dict[str, Any]:
    """An item's lockfile entry: its hashed fields as sent, and ``hash`` of them."""
    fields = {key: item[key] for key in KINDS[kind][2] if item.get(key) is not None}
    return {**fields, "hash": "sha256:" + hashlib.sha256(_canonical(fields).encode("ascii")).hexdigest()}


def entry_for(request: Request, capabilities: Mapping[str, Any], server_info: Any) -> dict[str, Any]:
    """A server's lockfile entry, listing (all pages) what its capabilities declare."""
    info = server_info if isinstance(server_info, Implementation) else None
    entry: dict[str, Any] = {"server": {"name": info.name if info else None, "version": info.version if info else None}}
    for kind, (method, key, _fields) in KINDS.items():
        if kind != "tools" and _CAPABILITY[kind] not in capabilities:
            continue
        entry[kind] = _items(kind, _list_all(request, method, key))
    return entry


def _list_all(request: Request, method: str, key: str) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        result = request(method, {"cursor": cursor} if cursor else None)
        page = result.get(key) if isinstance(result, dict) else None
        items += page if isinstance(page, list) else []
        cursor = result.get("nextCursor") if isinstance(result, dict) else None
        if not isinstance(cursor, str) or not cursor:
            break
    return items


def _items(kind: str, listed: Sequence[Any]) -> dict[str, Any]:
    return {item["name"]: fingerprint(kind, item) for item in listed
            if isinstance(item, dict) and isinstance(item.get("name"), str)}


# -- comparing ------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Change:
    """One difference: ``kind`` ("tools", "prompts", "resourceTemplates"), ``name``, ``what``
    ("added", "removed", "changed") and ``details`` (lines saying what changed, cleaned)."""

    kind: str
    name: str
    what: str
    details: tuple[str, ...] = ()

    def __str__(self) -> str:
        singular = {"tools": "tool", "prompts": "prompt", "resourceTemplates": "resource template"}[self.kind]
        head = f"{singular} {clean(json.dumps(self.name), 120)} {self.what}"
        return "\n".join([head, *(f"    {line}" for line in self.details)])


def compare(locked: Mapping[str, Any] | None, current: Mapping[str, Any]) -> list[Change]:
    """What differs between a server's locked entry and its ``current`` one, tools first."""
    changes: list[Change] = []
    for kind in KINDS:
        if kind not in current and (locked is None or kind not in locked):
            continue
        old = (locked or {}).get(kind) or {}
        new = current.get(kind) or {}
        for name in sorted(set(old) | set(new)):
            if name not in old:
                changes.append(Change(kind=kind, name=name, what="added"))
            elif name not in new:
                changes.append(Change(kind=kind, name=name, what="removed"))
            elif old[name].get("hash") != new[name].get("hash"):
                changes.append(Change(kind=kind, name=name, what="changed", details=tuple(_details(old[name], new[name]))))
    return changes


def _details(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    for key in sorted((set(old) | set(new)) - {"hash"}):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if key == "description" and (isinstance(before, str) or isinstance(after, str)):
            lines.append("description:")
            for line in difflib.unified_diff(str(before or "").splitlines(), str(after or "").splitlines(),
                                             lineterm="", n=0):
                if not line.startswith(("---", "+++", "@@")):
                    lines.append("  " + clean(line, 300))
        else:
            lines += [clean(line, 300) for line in _paths(key, before, after)]
    return lines


def _paths(path: str, before: Any, after: Any) -> list[str]:
    """The JSON paths where ``before`` and ``after`` differ, with both values."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            out += _paths(f"{path}.{key}", before.get(key, _ABSENT), after.get(key, _ABSENT))
        return out
    if before == after:
        return []
    if before is _ABSENT:
        return [f"{path}: added {_canonical(after)[:200]}"]
    if after is _ABSENT:
        return [f"{path}: removed (was {_canonical(before)[:200]})"]
    return [f"{path}: {_canonical(before)[:200]} -> {_canonical(after)[:200]}"]


class _Absent:
    def __repr__(self) -> str:
        return "absent"


_ABSENT: Any = _Absent()


def describe(server: str, changes: Sequence[Change]) -> str:
    """The changes of one server as a readable report."""
    return "\n".join([f"server {clean(json.dumps(server), 80)}:", *(f"  {change}" for change in changes)])


# -- the file ---------------------------------------------------------------------------------------


class LockFile:
    """``mcp.lock`` at ``path``: read it, update one server's entry (written atomically)."""

    def __init__(self, path: PathLike) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()

    def read(self) -> dict[str, Any]:
        """The servers' entries by name; ``{}`` when the file does not exist.

        Raises ``ConfigError`` when it cannot be read or is not a lockfile.
        """
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the lockfile {self.path}: {exc}") from exc
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict) or data.get("version") != VERSION:
            raise ConfigError(f"{self.path} is not an mcpclient lockfile (version {VERSION}); "
                              "write it again with mcpclient lock")
        return servers

    def entry(self, server: str) -> dict[str, Any] | None:
        found = self.read().get(server)
        return found if isinstance(found, dict) else None

    def update(self, entries: Mapping[str, Mapping[str, Any]]) -> None:
        """Set the entries of ``entries``' servers, keeping the others; atomic (rename), and
        with the mode of any file you commit (0666 less the umask), not a private one's."""
        with self._lock:
            servers = self.read()
            servers.update({name: dict(entry) for name, entry in entries.items()})
            text = json.dumps({"servers": servers, "version": VERSION}, sort_keys=True, indent=2, ensure_ascii=True)
            try:
                # A file to review and commit: the usual mode (0644 under the usual umask).
                write_atomic(Path(os.path.abspath(self.path)), (text + "\n").encode("ascii"))
            except OSError as exc:
                raise ConfigError(f"cannot write the lockfile {self.path}: {exc}") from exc


@attrs.frozen
class Lock:
    """``Plugins(lock=Lock(path, server="fs"))``: a lockfile, and the server's name in it."""

    path: str
    server: str | None = None

    def for_server(self, name: str) -> Lock:
        return Lock(self.path, name)


# -- the extension ----------------------------------------------------------------------------------


class ToolLock(Extension):
    """Checks a server's tools against a lockfile (see the module docstring); thread-safe."""

    def __init__(self, lock: Lock | PathLike, *, on_change: str = "refuse") -> None:
        if on_change not in ON_CHANGE:
            raise ValueError(f"on_change is one of {', '.join(ON_CHANGE)}, got {on_change!r}")
        self.lock = lock if isinstance(lock, Lock) else Lock(os.fspath(lock))
        self.file = LockFile(self.lock.path)
        self.on_change = on_change
        self._session: Session | None = None
        self._state = threading.Lock()
        self._changed: dict[str, Change] = {}  # tools that differ from the lock, by name
        self._locked: dict[str, Any] | None = None
        # Each list_changed (and each new connection) is a generation; calls wait for the
        # comparison of the newest one. One comparison runs at a time (``_comparing``).
        self._generation = 0
        self._compared = -1
        self._comparing = WaitLock()  # a stop (the call's cancel, close, death) frees who waits
        self._raw = threading.local()

    def middleware(self) -> Sequence[Middleware]:
        return (self._check,)

    def wants_list_changes(self) -> bool:
        return True  # a changed tool is judged again, in either era

    def bind(self, session: Session) -> None:
        self._session = session
        with self._state:
            self._generation += 1

    def opened(self, session: Session) -> None:
        # Compared in the background, so a slow tools/list never holds connect(); until it
        # is done, each tools/list and tools/call compares first, within its own time.
        session.run(self._compare_logged)

    def _name(self) -> str:
        if self.lock.server is not None:
            return self.lock.server
        info = self._session.server_info if self._session is not None else None
        return info.name if isinstance(info, Implementation) else "(unnamed)"

    def _fresh(self) -> bool:
        with self._state:
            return self._compared == self._generation

    def _compare(self, budget: CallTime | None) -> None:
        """Compare the server's lists with the lockfile unless the newest generation was.

        ``budget``: the call's (None: the background's, bounded by ``BACKGROUND_TIMEOUT``).
        Waits for a comparison another thread runs through the call's ``Until``: raises
        ``RequestTimeout``, ``RequestCancelled``, ``ClientClosedError`` or ``ConnectionClosed``
        at the call's deadline, cancel, close or death (nothing sent), else what the listing raises.
        """
        if self._fresh():
            return
        if budget is not None:
            until = budget.until
            budget.spent = True  # the wait is the call's: what follows gets the rest
        else:
            session = self._session
            what = f"the comparison of the tools with {self.file.path}"
            until = (session.until(what=what) if session is not None else Until(what=what)).within(BACKGROUND_TIMEOUT)
        with until.hold(self._comparing):
            with self._state:
                generation = self._generation
                if self._compared == generation:
                    return
            self._recheck(budget, until)
            with self._state:
                self._compared = max(self._compared, generation)

    def _recheck(self, budget: CallTime | None, until: Until) -> None:
        session = self._session
        if session is None:
            return

        def request(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
            if budget is not None:
                options = budget.request_options(method)
            else:
                options = Options(timeout=until.remaining())
            return session.request(method, params, options=options)

        self._raw.on = True  # this listing is compared as the server sent it, not filtered
        try:
            current = entry_for(request, session.server_capabilities, session.server_info)
        finally:
            self._raw.on = False
        name = self._name()
        locked = self.file.entry(name)
        changes = compare(locked, current)
        if locked is None and self.on_change != "update":
            log.warning("lock: server %s is not in %s: every tool of it is %s (write it with mcpclient lock)",
                        clean(json.dumps(name), 80), self.file.path,
                        "refused" if self.on_change == "refuse" else "unreviewed")
        self._apply(name, locked, current, changes)

    def _apply(self, name: str, locked: dict[str, Any] | None, current: dict[str, Any], changes: list[Change]) -> None:
        if self.on_change == "update":
            if changes or locked is None:
                self.file.update({name: current})
                log.info("lock: updated %s for server %s", self.file.path, clean(json.dumps(name), 80))
                if changes:
                    log.info("lock: what changed:\n%s", describe(name, changes))
            with self._state:
                self._locked, self._changed = current, {}
            return
        refused = {c.name: c for c in changes if c.kind == "tools" and c.what != "removed"}
        with self._state:
            self._locked = locked or {}
            self._changed = refused
        if changes:
            verdict = "refused" if self.on_change == "refuse" else "used anyway (on_change=\"warn\")"
            log.warning("lock: server %s differs from %s; changed and added tools are %s:\n%s",
                        clean(json.dumps(name), 80), self.file.path, verdict, describe(name, changes))

    def _check(self, message: Message, next_: Next) -> Any:
        if message.kind == "notification":
            if message.direction == "receive" and message.method == "notifications/tools/list_changed":
                with self._state:
                    self._generation += 1
                session = self._session
                if session is not None:
                    session.run(self._compare_logged)
            return next_(message)
        if message.direction != "send" or message.method not in ("tools/list", "tools/call"):
            return next_(message)
        if getattr(self._raw, "on", False):
            return next_(message)  # the comparison's own listing
        if not self._fresh():
            # Not compared since the connection opened or a change was announced: compare
            # first, out of this call's time, so nothing unchecked is listed or sent.
            budget = CallTime(message.options, self._session,
                              what=f"the comparison of the tools with {self.file.path}")
            self._compare(budget)
            message = budget.passed_on(message)
        if message.method == "tools/call":
            self._refuse_call(message)
            return next_(message)
        return self._filter(next_(message))

    def _compare_logged(self) -> None:
        try:
            self._compare(None)
        except MCPError as exc:
            if self._session is not None and self._session.is_open:
                log.error("lock: could not compare the server's tools with %s: %s (each call compares first)",
                          self.file.path, exc)

    def _refuse_call(self, message: Message) -> None:
        name = (message.params or {}).get("name")
        if not isinstance(name, str) or self.on_change != "refuse":
            return
        with self._state:
            change = self._changed.get(name)
            locked = self._locked
        if change is None and locked is not None and name not in (locked.get("tools") or {}):
            change = Change(kind="tools", name=name, what="added")
        if change is None:
            return
        raise ToolChanged(
            f"tool {name!r} {change.what} since {self.file.path} was written: refused; review it "
            f"(mcpclient lock --check) and run mcpclient lock to accept it\n{change}",
            tool=name, server=self._name(), diff=str(change),
        )

    def _filter(self, result: Any) -> Any:
        """A ``tools/list`` result with each tool checked against the lock (refused ones left out)."""
        tools = result.get("tools") if isinstance(result, dict) else None
        with self._state:
            locked = self._locked
        if getattr(self._raw, "on", False) or not isinstance(tools, list) or locked is None or self.on_change == "update":
            return result
        old = locked.get("tools") or {}
        kept, found = [], []
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str):
                continue
            mark = fingerprint("tools", tool)
            if name in old and old[name].get("hash") == mark["hash"]:
                kept.append(tool)
                continue
            change = Change(kind="tools", name=name, what="changed" if name in old else "added",
                            details=tuple(_details(old[name], mark)) if name in old else ())
            found.append(change)
            if self.on_change == "warn":
                kept.append(tool)
        if found:
            with self._state:
                known = set(self._changed)
                self._changed.update({c.name: c for c in found})
            fresh = [c for c in found if c.name not in known]
            if fresh:
                log.warning("lock: server %s lists tools that differ from %s (%s):\n%s",
                            clean(json.dumps(self._name()), 80), self.file.path,
                            "refused" if self.on_change == "refuse" else "used anyway",
                            describe(self._name(), fresh))
        if len(kept) == len(tools):
            return result
        return {**result, "tools": kept}


def lock_extensions(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """What ``Plugins(lock=..., on_change=...)`` adds (nothing without ``lock=``)."""
    lock = options.get("lock")
    return () if lock is None else (ToolLock(lock, on_change=options.get("on_change", "refuse")),)
