"""Files written whole, and directories kept private: what the client keeps on disk.

``write_atomic`` is the one atomic write. ``check_private_directory`` (by path, before each
use) and ``open_private_directory`` (once, keeping a descriptor that later writes and reads go
through) are the one judgement of a directory that holds private or trusted files: a symlink,
something else than a directory, or another user's directory is refused (``UnsafeDirectory``),
and one of the user's own that others may use is closed to them.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "UnsafeDirectory",
    "check_private_directory",
    "open_private_directory",
    "owned_regular_file",
    "write_atomic",
    "write_private",
]

#: How many temporary names are tried before giving up (each is 16 random hex digits).
_TRIES = 100


def write_atomic(
    path: Path, payload: bytes, *, mode: int = 0o666, dir_fd: int | None = None, sync: bool = True
) -> None:
    """Write ``payload`` to ``path`` so that a reader sees the old file or the new one, never half.

    The bytes go to a new temporary file in the same directory (``O_CREAT | O_EXCL``, so
    nobody else can have opened it, created with ``mode`` less the umask: ``0o666`` gives
    the usual 0644 of a file meant to be shared or committed, ``0o600`` a private one), are
    flushed to disk, then renamed over ``path``. On any failure the temporary file is removed
    and the error propagates: the caller says what could not be kept and why.

    ``dir_fd``: ``path`` is relative to that open directory (``open_private_directory``), so the
    file lands in the directory that was checked whatever its path names now. ``sync=False``
    skips the flush to disk, for files that may be lost in a crash (a cache).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(_TRIES):
        tmp = path.parent / f".tmp-{secrets.token_hex(8)}{path.suffix or '.tmp'}"
        try:
            fd = os.open(tmp, flags, mode, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary name beside {path}")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def write_private(path: Path, payload: bytes) -> None:
    """``write_atomic`` for a file only its owner may read (mode 0600: tokens, approvals)."""
    write_atomic(path, payload, mode=0o600)


class UnsafeDirectory(ValueError):
    """A directory not safe for private or trusted files: a symlink, not a directory, or another
    user's. The message names it and says why."""



def _users() -> bool:
    """Whether this platform has users (``os.getuid``): elsewhere only symlinks are refused."""
    return hasattr(os, "getuid")

#: Whether directories can be held open and files opened relative to them (POSIX).
DIRECTORY_DESCRIPTORS = hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd


def _judge(info: os.stat_result, directory: Path, what: str) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeDirectory(f"the {what} {directory} is a symbolic link; refusing to use it")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeDirectory(f"the {what} {directory} is not a directory")
    if _users() and info.st_uid != os.getuid():
        raise UnsafeDirectory(
            f"the {what} {directory} belongs to another user (uid {info.st_uid}); refusing to use it: choose one of your own"
        )


def check_private_directory(directory: Path, what: str, *, closed: int = 0o022) -> bool | None:
    """Judge ``directory`` by its path, not following a symlink; call it before each use.

    Returns None when it does not exist, False when it is sound, True when it was the user's
    own but open to others by a bit of ``closed`` and was made 0700 (the caller says so in a
    log line). Raises ``UnsafeDirectory`` for a symlink, a non-directory or another user's
    directory, and ``OSError`` when it cannot be read or repaired.
    """
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return None
    _judge(info, directory, what)
    if _users() and stat.S_IMODE(info.st_mode) & closed:
        os.chmod(directory, 0o700)
        return True
    return False


def open_private_directory(directory: Path, what: str, *, closed: int = 0o077) -> int | None:
    """Make ``directory`` (0700, with its parents) if missing, judge it, and hold it open.

    Returns a descriptor of the directory that was judged, opened without following a
    symlink: files opened relative to it (``dir_fd=``) stay in that directory even when its
    path is later pointed elsewhere. A directory of the user's own open to others by a bit of
    ``closed`` is made 0700. Returns None where the platform has no directory descriptors
    (Windows): the caller then judges the path before each use (``check_private_directory``).
    Raises ``UnsafeDirectory`` or ``OSError``; the caller closes the descriptor.
    """
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not DIRECTORY_DESCRIPTORS:
        check_private_directory(directory, what, closed=closed)
        return None
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            _judge(os.lstat(directory), directory, what)  # says which (a symlink, not a directory)
        raise
    try:
        info = os.fstat(fd)
        _judge(info, directory, what)
        if stat.S_IMODE(info.st_mode) & closed:
            os.fchmod(fd, 0o700)  # ours: close it to others before anything is written
    except BaseException:
        os.close(fd)
        raise
    return fd


def owned_regular_file(fd: int) -> bool:
    """Whether the open file ``fd`` is a regular file of this user's own (on a platform with users)."""
    info = os.fstat(fd)
    return stat.S_ISREG(info.st_mode) and (not _users() or info.st_uid == os.getuid())
