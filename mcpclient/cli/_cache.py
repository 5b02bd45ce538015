"""``--cache DIR``: the command's results and remembered discoveries in a ``FileStore``, so
repeated runs skip the era probe and reuse fresh lists (docs/cli.md#a-cache-across-runs)."""

from __future__ import annotations

from ..cache import FileStore
from ._args import UsageError

__all__ = ["cache_store"]


def cache_store(directory: str) -> FileStore:
    """The ``Plugins(cache=...)`` of a run with ``--cache directory``.

    No partition: whom a private result belongs to is what the client's one account of
    credentials says (``Credentials.owner``): every credential the run sends (the headers given
    on the command line and the config entry's, the URL's user info and query, a stdio
    server's environment), as a digest only, so runs with other credentials never see each
    other's private results. The directory is the user's own (0700): runs that send no
    credential share what a legacy server answers them.
    """
    try:
        store = FileStore(directory)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--cache {directory!r} cannot be used: {exc}") from exc
    return store
