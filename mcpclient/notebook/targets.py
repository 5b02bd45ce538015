"""What the explorer's server box and ``%mcp explore`` take: words that name a server.

The command line's reading (``mcpclient._build.targets.resolve_target``): a URL, a ``.py``
script, a name from the config files, or a command after ``--``; here several words are a
command too (``python server.py``), as a person types it in a box.
"""

from __future__ import annotations

import shlex
from typing import Any

from .. import config as cfg
from .._build.open import describe_target, open_client, opening
from .._build.targets import TargetError, resolve_target
from .._client.client import Client
from .._core.exceptions import MCPError
from .._core.text import clean

__all__ = ["TargetError", "open_words", "resolve_words"]


def resolve_words(text: str) -> Any:
    """The target ``text`` names: a URL, a script, a config entry, or a command (argv list)."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise TargetError(f"cannot read the server {text!r}: {exc}") from None
    if words[:1] == ["--"]:
        words = words[1:]
        if not words:
            raise TargetError("nothing follows '--': give the server command")
        return words
    if not words:
        raise TargetError("give a server: a command, a URL or a name from your config files")
    if len(words) > 1:
        return words
    return resolve_target(words[0], load=cfg.load)


def open_words(text: str, **options: Any) -> tuple[Client, str]:
    """An open client for the server ``text`` names, and a short name of it to show."""
    target = resolve_words(text)
    try:
        client = open_client(target, opening("open_words()", options))
    except (MCPError, OSError) as exc:
        raise TargetError(f"cannot open {clean(describe_target(target), 200)}: {clean(exc, 500)}") from exc
    return client, clean(describe_target(target), 200)
