"""Remembered approvals of project servers: what ``mcpclient trust`` writes and ``config`` reads.

One JSON file, ``approved-servers.json`` in mcpclient's config directory
(``$XDG_CONFIG_HOME/mcpclient``, else ``~/.config/mcpclient``; ``%APPDATA%\\mcpclient`` on
Windows). It maps each project config file, by its real path, to the servers of it you
approved, each with the SHA-256 of its entry as written: an entry that changes (or moves to
another file or project) no longer matches, so mcpclient asks again.

The directory is made 0700 and the file 0600, written through a temporary file and a rename.
A store the project could have written is not believed: one inside the project
(``XDG_CONFIG_HOME`` pointing into it), a symbolic link, or a file or directory another user
owns or others can write to is ignored with a warning, and refused for writing (ownership
and modes are POSIX checks, skipped where ``os.getuid`` does not exist).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
from pathlib import Path
from typing import Any, Iterable, Mapping, Union

from .._core.exceptions import ConfigError
from .._core.files import write_private
from .project import Project, directory_from_environment

__all__ = ["Approvals", "entry_digest", "file_key", "store_path"]

log = logging.getLogger(__name__)

PathLike = Union[str, "os.PathLike[str]"]

FILE_NAME = "approved-servers.json"
VERSION = 1


def entry_digest(raw: Any) -> str:
    """The SHA-256 of a server entry as written (its JSON, keys sorted)."""
    text = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_key(path: PathLike) -> str:
    """How a config file is named in the store: its real path."""
    return os.path.normcase(os.path.realpath(path))


def store_path(environ: Mapping[str, str], project: Project) -> Path | None:
    """Where approvals are kept; None when ``XDG_CONFIG_HOME`` (``APPDATA``) puts them in the project."""
    if os.name == "nt":
        name, default = "APPDATA", Path.home() / "AppData" / "Roaming"
    else:
        name, default = "XDG_CONFIG_HOME", Path.home() / ".config"
    base, from_env = directory_from_environment(environ.get(name), default)
    path = base / "mcpclient" / FILE_NAME
    if from_env and project.contains(path):
        log.warning("ignoring the approvals file %s: %s points into the project %s", path, name, project.root)
        return None
    return path


def _problem(info: os.stat_result, what: str) -> str | None:
    """Why a file or directory of the store cannot be believed, or None."""
    if stat.S_ISLNK(info.st_mode):
        return f"{what} is a symbolic link"
    if not hasattr(os, "getuid"):
        return None
    if info.st_uid != os.getuid():
        return f"{what} belongs to another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{what} can be written by other users"
    return None


class Approvals:
    """The approvals file at ``path``; None remembers nothing and refuses to store."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._files: dict[str, dict[str, str]] | None = None

    def __repr__(self) -> str:
        return f"<Approvals {str(self.path)!r}>"

    def approved(self, file: PathLike, name: str, digest: str) -> bool:
        """Whether server ``name`` of ``file`` was approved with exactly this entry."""
        return self.files().get(file_key(file), {}).get(name) == digest

    def files(self) -> dict[str, dict[str, str]]:
        """Approved servers (name to digest) by config file; read once, empty if unusable."""
        if self._files is None:
            self._files = self._read()
        return self._files

    def _read(self) -> dict[str, dict[str, str]]:
        if self.path is None:
            return {}
        try:
            problem = _problem(os.lstat(self.path.parent), f"the directory {self.path.parent}")
            if problem is None:
                fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                with os.fdopen(fd, "rb") as fh:
                    problem = _problem(os.fstat(fh.fileno()), str(self.path))
                    data = json.load(fh) if problem is None else None
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring the approvals file %s: %s", self.path, getattr(exc, "strerror", None) or exc)
            return {}
        if problem is not None:
            log.warning("ignoring the approvals file %s: %s", self.path, problem)
            return {}
        files = data.get("files") if isinstance(data, dict) and data.get("version") == VERSION else None
        if not isinstance(files, dict):
            log.warning("ignoring the approvals file %s: not a version %d approvals file", self.path, VERSION)
            return {}
        return {str(f): {str(n): str(d) for n, d in servers.items()}
                for f, servers in files.items() if isinstance(servers, dict)}

    def add(self, file: PathLike, servers: Mapping[str, str]) -> None:
        """Remember ``servers`` (name to digest) of ``file``; raises ``ConfigError`` if it cannot."""
        self._files = None  # another run may have written meanwhile
        files = dict(self.files())
        files[file_key(file)] = {**files.get(file_key(file), {}), **servers}
        self._write(files)

    def remove(self, files: Iterable[str]) -> int:
        """Forget every approval of these files (as ``files()`` names them); how many servers."""
        self._files = None
        kept = dict(self.files())
        gone = sum(len(kept.pop(f, {})) for f in set(files))
        if gone:
            self._write(kept)
        return gone

    def _write(self, files: dict[str, dict[str, str]]) -> None:
        if self.path is None:
            raise ConfigError("cannot remember approvals: XDG_CONFIG_HOME (APPDATA) points into the project; "
                              "unset it, or pass --trust-project (trust_project=True) for each run instead")
        directory = self.path.parent
        payload = json.dumps({"version": VERSION, "files": files}, indent=1, sort_keys=True).encode("utf-8")
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            problem = _problem(os.lstat(directory), f"the directory {directory}")
            if problem is not None:
                raise ConfigError(f"cannot remember approvals in {self.path}: {problem}; fix that, or pass "
                                  "--trust-project (trust_project=True) for each run instead")
            write_private(self.path, payload)
        except OSError as exc:
            raise ConfigError(f"cannot write the approvals file {self.path}: {exc.strerror or exc}") from exc
        self._files = files
