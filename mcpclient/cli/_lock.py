"""``mcpclient lock``: write mcp.lock from the configured servers, or check them against it."""

from __future__ import annotations

from typing import Any, Sequence, TextIO

from .. import config as cfg
from ..lock import check, write
from ..plugins.lock import describe
from ._args import UsageError

__all__ = ["lock_command"]


def lock_command(names: Sequence[str], *, config_path: str | None, trust_project: bool, path: str,
                 check_only: bool, out: TextIO, options: dict[str, Any]) -> bool:
    """Lock (or check) the servers ``names`` (every configured one when empty); True when
    nothing drifted (``--check``) or the file was written."""
    entries = cfg.load(config_path, trust_project=trust_project)
    unknown = [n for n in names if n not in entries]
    if unknown:
        raise UsageError(f"no server named {', '.join(map(repr, unknown))} in the config "
                         f"(known: {', '.join(sorted(entries)) or 'none'})")
    servers = {n: entries[n] for n in (names or list(entries))}
    if not servers:
        raise UsageError("no servers configured to lock")
    changes = (check if check_only else write)(servers, path, **options)
    drifted = {name: found for name, found in changes.items() if found}
    for name, found in drifted.items():
        out.write(describe(name, found) + "\n")
    if check_only:
        out.write(f"{path}: {len(drifted)} of {len(servers)} server(s) differ\n" if drifted
                  else f"{path}: {len(servers)} server(s) match\n")
        return not drifted
    out.write(f"wrote {path} ({len(servers)} server(s))\n")
    return True
