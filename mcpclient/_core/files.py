"""Files written whole: the one atomic-write helper for what the client keeps on disk."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["write_atomic", "write_private"]

#: How many temporary names are tried before giving up (each is 16 random hex digits).
_TRIES = 100


def write_atomic(path: Path, payload: bytes, *, mode: int = 0o666) -> None:
    """Write ``payload`` to ``path`` so that a reader sees the old file or the new one, never half.

    The bytes go to a new temporary file in the same directory (``O_CREAT | O_EXCL``, so
    nobody else can have opened it, created with ``mode`` less the umask: ``0o666`` gives
    the usual 0644 of a file meant to be shared or committed, ``0o600`` a private one), are
    flushed to disk, then renamed over ``path``. On any failure the temporary file is removed
    and the error propagates: the caller says what could not be kept and why.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(_TRIES):
        tmp = path.parent / f".tmp-{secrets.token_hex(8)}{path.suffix or '.tmp'}"
        try:
            fd = os.open(tmp, flags, mode)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary name beside {path}")
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


def write_private(path: Path, payload: bytes) -> None:
    """``write_atomic`` for a file only its owner may read (mode 0600: tokens, approvals)."""
    write_atomic(path, payload, mode=0o600)
