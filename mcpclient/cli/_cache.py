"""``--cache DIR``: the command's results and remembered discoveries in a ``FileStore``, so
repeated runs skip the era probe and reuse fresh lists (docs/cli.md#a-cache-across-runs)."""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..cache import FileStore, Partition
from ._args import UsageError

__all__ = ["cache_options"]


def cache_options(directory: str, target: Any, headers: Mapping[str, str] | None) -> dict[str, Any]:
    """``cache=`` and ``cache_partition=`` for a run with ``--cache directory``.

    The partition is the run's authorization context: the HTTP headers it sends (the ones
    given on the command line and the config entry's), as a digest only, so runs with another
    token never see each other's private results. The directory is the user's own (0700):
    runs without headers share one partition.
    """
    try:
        store = FileStore(directory)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--cache {directory!r} cannot be used: {exc}") from exc
    sent = {**dict(getattr(target, "headers", None) or {}), **dict(headers or {})}
    name = json.dumps(sorted((key.lower(), value) for key, value in sent.items()))
    return {"cache": store, "cache_partition": Partition(f"mcpclient-cli {name}")}
