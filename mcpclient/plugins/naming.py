"""The name a server is known by to the policy gate and the lockfile: the one you gave it.

A config entry's name, a ``ClientGroup``'s key: ``named(options, name)`` binds the ``policy``
and ``lock`` of a client's ``Plugins`` to it (a policy or lock already bound keeps its name), so
a rule for ``"fs"`` and the lockfile's ``"fs"`` entry mean the server you call fs, whatever
name the server gives itself.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from .lock import Lock
from .policy import Policy

__all__ = ["named"]


def named(options: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``options`` with its ``policy`` and ``lock`` bound to the server name ``name``."""
    out = dict(options)
    policy = out.get("policy")
    if isinstance(policy, Policy) and policy.server is None:
        out["policy"] = policy.for_server(name)
    lock = out.get("lock")
    if isinstance(lock, (str, os.PathLike)):
        out["lock"] = Lock(os.fspath(lock), name)
    elif isinstance(lock, Lock) and lock.server is None:
        out["lock"] = lock.for_server(name)
    return out
