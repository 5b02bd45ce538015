"""The tool lockfile (``mcp.lock``): pin what your servers offer, and notice when it changes.

    >>> client = mcpclient.connect(["python", "server.py"],  # doctest: +SKIP
    ...                            plugins=mcpclient.Plugins(lock="mcp.lock", on_change="refuse"))

``mcpclient lock [SERVER ...]`` writes the file, ``mcpclient lock --check`` fails on drift (for
CI), and ``assert_locked`` does the same from a test. What is locked and what ``on_change``
does are described in ``mcpclient.plugins.lock`` and docs/policy.md.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence, Union

from ._build.open import Target, open_client, opening
from ._core.exceptions import ToolChanged
from .plugins.lock import Change, Lock, LockFile, compare, describe, entry_for

__all__ = ["Change", "Lock", "LockFile", "ToolChanged", "assert_locked", "check", "snapshot", "write"]

PathLike = Union[str, "os.PathLike[str]"]


def snapshot(client: Any) -> dict[str, Any]:
    """The lockfile entry of an open ``Client``'s server (tools, prompts, resource templates)."""
    return entry_for(lambda method, params: client.request(method, params), client.server_capabilities,
                     client.server_info)


def _snapshots(servers: Mapping[str, Target], options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    entries = {}
    options = opening("mcpclient.lock", options)
    for name, target in servers.items():
        with open_client(target, options) as client:
            entries[name] = snapshot(client)
    return entries


def check(servers: Mapping[str, Target], path: PathLike = "mcp.lock", **options: Any) -> dict[str, list[Change]]:
    """What differs between ``servers`` (name to target) and the lockfile; nothing is written.

    A server missing from the lockfile shows each of its tools as added. ``options`` go to
    each client (``timeout=``, ``protocol=``...).
    """
    locked = LockFile(path)
    return {name: compare(locked.entry(name), entry) for name, entry in _snapshots(servers, options).items()}


def write(servers: Mapping[str, Target], path: PathLike = "mcp.lock", **options: Any) -> dict[str, list[Change]]:
    """Write the entries of ``servers`` to the lockfile (others kept); returns what changed."""
    lockfile = LockFile(path)
    entries = _snapshots(servers, options)
    changes = {name: compare(lockfile.entry(name), entry) for name, entry in entries.items()}
    lockfile.update(entries)
    return changes


def assert_locked(path: PathLike = "mcp.lock", *, servers: Mapping[str, Target] | None = None,
                  config: PathLike | Sequence[PathLike] | None = None, names: Sequence[str] | None = None,
                  trust_project: bool = False, **options: Any) -> None:
    """For a project's tests: raise ``AssertionError`` with the diff when a server drifted.

    ``servers`` (name to target), or the servers of ``config`` (``names`` picks some), as
    ``mcpclient lock --check`` reads them. A project's own tests name its own config file,
    which is a project file: pass ``trust_project=True`` to start its servers (as
    ``mcpclient lock --check --trust-project`` does). A name in ``names`` that the config does
    not have, or no server at all, fails too: a check of nothing never passes.
    """
    if servers is None:
        from .config import load

        entries = load(config, trust_project=trust_project)
        unknown = [n for n in names or () if n not in entries]
        if unknown:
            raise AssertionError(f"no server named {', '.join(map(repr, unknown))} in the config "
                                 f"(known: {', '.join(sorted(entries)) or 'none'})")
        servers = {n: e for n, e in entries.items() if names is None or n in names}
    if not servers:
        raise AssertionError(f"no servers to check against {os.fspath(path)}")
    drift = {name: changes for name, changes in check(servers, path, **options).items() if changes}
    if drift:
        report = "\n".join(describe(name, changes) for name, changes in drift.items())
        raise AssertionError(f"the servers differ from {os.fspath(path)} (review, then run mcpclient lock):\n{report}")
