"""What the project is (the checkout you are working in), and whether a path lies in it.

A server config file inside the project came with whatever you cloned or unpacked, so
``config`` needs your consent before it starts one of its commands. This module decides what
"inside" means, the same way for every path, however it was named:

* The home directory is ``HOME`` (``USERPROFILE`` on Windows) and is taken as yours: a
  project that can set ``HOME`` for you can already run code through your shell's and git's
  own files there.
* The project is the outermost checkout (a directory holding ``.git``, ``.hg``, ``.svn``,
  ``.jj`` or ``.bzr``) at or above the current directory and below the home directory. With
  none (an unpacked download), it is the whole top directory on the way from home to the
  current directory: working in ``~/Downloads/tool/src``, all of ``~/Downloads``. Outside the
  home directory the same holds below the filesystem root (``/srv``, ``/tmp``), the home
  directory left out. At home, or at the filesystem root (where services start), there is
  no project.
* A path lies in the project when it does as written (relative to the current directory,
  ``..`` folded) or once its symbolic links are followed; either is enough.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import Callable, Union

from attrs import frozen

__all__ = ["MARKERS", "Project", "current_project", "directory_from_environment"]

PathLike = Union[str, "os.PathLike[str]"]

#: What marks the top of a checkout.
MARKERS = (".git", ".hg", ".svn", ".jj", ".bzr")


def _key(path: PathLike) -> PurePath:
    """A path for comparing: absolute, case-folded where the file system folds case."""
    return PurePath(os.path.normcase(os.path.abspath(path)))


def _under(path: PurePath, top: PurePath) -> bool:
    return path == top or top in path.parents


@frozen
class Project:
    """The project tree (``root``; None when there is none) and the home directory."""

    root: Path | None
    home: Path

    def contains(self, path: PathLike) -> bool:
        """Whether ``path`` lies in the project, as written or with its links followed."""
        if self.root is None:
            return False
        root, home = _key(self.root), _key(self.home)
        home_inside = _under(home, root)
        for form in (_key(path), _key(os.path.realpath(path))):
            if _under(form, root) and not (home_inside and _under(form, home)):
                return True
        return False


def current_project(cwd: PathLike | None = None, *, home: PathLike | None = None) -> Project:
    """The project of ``cwd`` (default: the current directory) for the home directory ``home``."""
    home_dir = Path(os.path.realpath(home if home is not None else Path.home()))
    try:
        here = Path(os.path.realpath(cwd if cwd is not None else os.getcwd()))
    except OSError:  # the current directory was removed
        return Project(None, home_dir)
    if _key(here) in (_key(home_dir), _key(here.anchor)):  # at home, or at the root (a service's cwd)
        return Project(None, home_dir)
    base = home_dir if _under(_key(here), _key(home_dir)) else Path(here.anchor)
    top = base / Path(os.path.relpath(here, base)).parts[0]
    checkout = None
    for directory in (here, *here.parents):
        if directory == top.parent:
            break
        if any(os.path.lexists(directory / marker) for marker in MARKERS):
            checkout = directory
    return Project(checkout or top, home_dir)


def directory_from_environment(value: str | None, default: Path, *,
                               absolute: Callable[[str], bool] = os.path.isabs) -> tuple[Path, bool]:
    """The directory an environment variable such as ``XDG_CONFIG_HOME`` names, else
    ``default``; and whether it came from the variable (so a file there must be judged with
    ``Project.contains``; ``default``, in the home directory, is yours).

    A relative value is ignored, as the XDG base directory rules say: it would name a
    different place in every directory. A value equal to ``default`` counts as ``default``.
    """
    if not value or not absolute(value) or _key(value) == _key(default):
        return default, False
    return Path(value), True
