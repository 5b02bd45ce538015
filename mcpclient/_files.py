"""Private files written whole: the one atomic-write helper for what the client keeps on disk."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_private"]


def write_private(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` so that a reader sees the old file or the new one, never half.

    The bytes go to a temporary file in the same directory (created by ``mkstemp``: mode 0600,
    ``O_EXCL``, so nobody else can have opened it), are flushed to disk, then renamed over
    ``path``. On any failure the temporary file is removed and the error propagates: the caller
    says what could not be kept and why.
    """
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix or ".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
