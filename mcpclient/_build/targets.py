"""Words that name a server, read as a target: the command line's reading, and the notebook's.

``resolve_target`` takes a URL, a ``.py`` script, a name from the config files, or a command
given after ``--``. The config files are read through the ``load`` the caller passes (the
config layer stands above this one), a function taking ``include_disabled``.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Mapping

from .open import ServerEntry

__all__ = ["Load", "TargetError", "resolve_target"]

#: ``load(include_disabled=False)``: the configured servers by name (``mcpclient.config.load``
#: with the caller's files and consent).
Load = Callable[..., Mapping[str, ServerEntry]]


class TargetError(ValueError):
    """The words name no server; the message says what to give instead."""


def resolve_target(word: str | None, *, load: Load, command: list[str] | None = None,
                   headers_given: bool = False) -> Any:
    """What to connect to: the ``--`` command, a URL, a ``.py`` script, or a config name.

    Without ``word``, ``MCPCLIENT_SERVER`` names the server; since project tooling (``.env``
    loaders, direnv) can set it, it may name a configured server (a project's one still
    needs consent) or a URL without ``headers_given`` (``-H``), never a script.
    Raises ``TargetError``.
    """
    if command is not None:
        return command
    if word is None:
        word = os.environ.get("MCPCLIENT_SERVER")
        if word is not None:
            _check_environment_target(word, headers_given)
    if word is None:
        servers = load()
        if len(servers) == 1:
            return next(iter(servers.values()))
        known = ", ".join(sorted(servers)) or "none found"
        raise TargetError(
            "no server given: name one from your config files (" + known + "), give a URL, "
            "or put the command after '--'"
        )
    if word.lower().startswith(("http://", "https://")):
        return word
    if word.endswith(".py") and os.path.isfile(word):
        return [sys.executable, word]
    servers = load()
    if word in servers:
        return servers[word]
    disabled = load(include_disabled=True).get(word)
    if disabled is not None:
        raise TargetError(
            f"the server {word!r} is disabled in {disabled.source or 'its config file'} "
            '("disabled": true); remove that line to use it'
        )
    known = ", ".join(sorted(servers)) or "no config file found"
    raise TargetError(f"no server named {word!r} in the config files ({known}); give a URL, a .py file, or -- COMMAND")


def _check_environment_target(word: str, headers_given: bool) -> None:
    """Refuse what ``MCPCLIENT_SERVER`` must not choose: a script to run, or where -H goes."""
    if word.endswith(".py") and not word.lower().startswith(("http://", "https://")):
        raise TargetError(f"MCPCLIENT_SERVER names the script {word!r}: mcpclient runs a script only when you name "
                          "it on the command line (a project's tooling can set environment variables)")
    if headers_given and word.lower().startswith(("http://", "https://")):
        raise TargetError("MCPCLIENT_SERVER names a URL, and -H would send your headers there: give the URL on the "
                          "command line (a project's tooling can set environment variables)")
