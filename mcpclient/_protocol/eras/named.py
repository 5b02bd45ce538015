"""The era classes by the name a session gives (``Session.era``: "legacy" or "modern").

For what reads an era's static rules without holding the era object of a conversation: the
tasks plug-in (``Era.require_tasks``, ``task_params``, ``task_state``,
``blocking_task_result``, ``tools_declare_task_support``) knows its connection only as a
``mcpclient.extensions.Session``.
"""

from __future__ import annotations

from ..._core.exceptions import MCPError
from .base import Era
from .legacy import LegacyEra
from .modern import ModernEra

__all__ = ["ERAS", "era_named"]

#: Every era class, by ``Era.name``.
ERAS: dict[str, type[Era]] = {LegacyEra.name: LegacyEra, ModernEra.name: ModernEra}


def era_named(name: str | None) -> type[Era]:
    """The class of the era ``name``; ``MCPError`` before the session is open (no era yet)."""
    era = ERAS.get(name) if name is not None else None
    if era is None:
        raise MCPError("call initialize() first (or use the client in a with block): the protocol era is not known yet")
    return era
