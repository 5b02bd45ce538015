"""``mcpclient trust``, and the question asked before a project's server starts.

A project's config file may name servers, but mcpclient starts one of its commands (or
connects to one of its URLs) only with your consent (see ``mcpclient.config``). At a terminal
the CLI asks, once or for good; ``mcpclient trust`` approves a project's servers ahead of time.
A remembered approval holds for exactly the entry you saw: a changed entry asks again.

What is shown comes from the project, so every value is printed as JSON with ASCII escapes:
no escape sequence, newline or bidirectional control in it reaches the terminal as such.
"""

from __future__ import annotations

import json
import os
from typing import Sequence, TextIO

from .. import config as cfg
from .._trust.approvals import Approvals, file_key, store_path
from .._trust.project import current_project
from ._args import UsageError
from ._ask import TerminalIO

__all__ = ["ask_consent", "describe", "trust_command"]


def _q(value: object) -> str:
    return json.dumps(value)  # ensure_ascii: control, bidi and other non-ASCII characters as \\u escapes


def describe(entry: cfg.ServerConfig) -> list[str]:
    """What starting ``entry`` would do, one fact a line, every value escaped."""
    lines = [f"  server {_q(entry.name)} in {_q(os.path.abspath(entry.source or ''))}"]
    if entry.url is not None:
        lines.append(f"    url: {_q(entry.url)}")
        lines += [f"    header {_q(k)}: {_q(v)}" for k, v in entry.headers.items()]
    else:
        lines.append(f"    command: {_q([entry.command or '', *entry.args])}")
        if entry.cwd:
            lines.append(f"    in directory: {_q(entry.cwd)}")
        lines += [f"    env {_q(k)}: {_q(v)}" for k, v in entry.env.items()]
    if entry.untrusted:
        lines.append(f"    reads from your environment: {', '.join(_q(v) for v in entry.untrusted)}")
    return lines


def ask_consent(entry: cfg.ServerConfig, terminal: TerminalIO) -> cfg.ServerConfig:
    """Ask the person whether to start a project's ``entry``; the approved entry, or ``ConfigError``."""
    terminal.write("mcpclient: this server comes from a project's config file, not from yours:")
    for line in describe(entry):
        terminal.write(line)
    try:
        answer = terminal.read("Start it? [y] this once, [a] always (until its entry changes), [N] no: ")
    except EOFError:
        answer = ""
    answer = answer.strip().lower()
    if answer in ("a", "always"):
        return cfg.approve(entry, remember=True)
    if answer in ("y", "yes"):
        return cfg.approve(entry)
    raise cfg.ConfigError(f"server {entry.name!r} was not started: you did not approve it")


def trust_command(names: Sequence[str], *, config_path: str | None, yes: bool, list_only: bool, forget: bool,
                  terminal: TerminalIO | None, out: TextIO) -> int:
    """``mcpclient trust [SERVER ...]``: approve a project's servers and remember it."""
    store = Approvals(store_path(os.environ, current_project()))
    if list_only:
        files = store.files()
        for file, servers in sorted(files.items()):
            out.write(f"{_q(file)}: {', '.join(_q(n) for n in sorted(servers))}\n")
        if not files:
            out.write(f"(no approvals in {store.path})\n")
        return 0
    project_entries = {n: e for n, e in cfg.load(config_path).items() if e.project}
    if forget:
        project = current_project()
        mine = {file_key(e.source or "") for e in project_entries.values()}
        mine |= {f for f in store.files() if project.contains(f)}
        gone = store.remove(mine)
        out.write(f"forgot {gone} approved server{'' if gone == 1 else 's'}\n")
        return 0
    unknown = [n for n in names if n not in project_entries]
    if unknown:
        known = ", ".join(sorted(project_entries)) or "none"
        raise UsageError(f"no project server named {', '.join(map(repr, unknown))} (the project's: {known})")
    picked = [project_entries[n] for n in names] if names else [e for e in project_entries.values() if not e.approved]
    if not picked:
        where = config_path or "the project's config files"
        out.write(f"nothing to approve: no server of {where} is waiting for your approval\n")
        return 0
    out.write("These servers come from a project's config file, not from yours:\n")
    for entry in picked:
        out.write("\n".join(describe(entry)) + "\n")
    out.flush()
    if not yes:
        if terminal is None:
            raise UsageError("mcpclient trust asks at a terminal, and there is none here: add --yes to approve "
                             "the servers listed above")
        try:
            answer = terminal.read(f"Start {'this server' if len(picked) == 1 else 'these servers'} whenever you "
                                   "name them, until an entry changes? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            raise UsageError("nothing approved")
    for entry in picked:
        cfg.approve(entry, remember=True)
    out.write(f"approved {len(picked)} server{'' if len(picked) == 1 else 's'} (remembered in {store.path})\n")
    return 0
