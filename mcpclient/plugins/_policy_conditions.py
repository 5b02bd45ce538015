"""The conditions a policy rule puts on a call's arguments: ``Under``, ``OneOf``, ``MaxSize``.

Each says one of three things of a call (a ``Verdict``): it holds (True), it does not hold
(False), or it cannot tell (None): the value is one the server may read otherwise than the
client can see (``~``, ``$HOME``, a NUL, blanks around a path, a relative path where the
server's directory is not known, a non-string where a path is wanted, ``"0"`` where ``0`` is
listed). A rule treats "cannot tell" as a match for ``deny`` and ``ask`` and as no match for
``allow``: a rule that cannot judge a value fails closed.

A list value is judged item by item: it holds when every item holds, does not hold when no
item holds and every item is judged, and cannot tell otherwise (some items hold, or an item
cannot be judged, or the list is empty). So a ``deny`` fires when any item is under its root,
and an ``allow`` only when every item is.
"""

from __future__ import annotations

import json
import math
import os
import sys
import unicodedata
from typing import Any, Iterable, Mapping, Optional, Union
from urllib.parse import unquote, urlsplit

import attrs

__all__ = ["Condition", "MaxSize", "OneOf", "Under", "Verdict", "all_hold", "each_item", "loose_name", "to_json"]

#: True: holds; False: does not hold; None: cannot tell.
Verdict = Optional[bool]
PathLike = Union[str, "os.PathLike[str]"]
_CASELESS = sys.platform in ("win32", "darwin")
#: Lists inside lists deeper than this are not judged (cannot tell).
_MAX_DEPTH = 32
#: What a lenient server reads as a truth value (pydantic's lax booleans), as the number it is.
_TRUTHS = {"true": 1.0, "t": 1.0, "yes": 1.0, "y": 1.0, "on": 1.0,
           "false": 0.0, "f": 0.0, "no": 0.0, "n": 0.0, "off": 0.0}


def all_hold(verdicts: Iterable[Verdict]) -> Verdict:
    """Every one holds (three-valued "and"): one that does not decides, else one that cannot tell."""
    result: Verdict = True
    for verdict in verdicts:
        if verdict is False:
            return False
        if verdict is None:
            result = None
    return result


def each_item(verdicts: list[Verdict]) -> Verdict:
    """A list's verdict from its items' (the module docstring): all hold, none holds, or cannot tell."""
    if verdicts and all(verdict is True for verdict in verdicts):
        return True
    if verdicts and all(verdict is False for verdict in verdicts):
        return False
    return None


def to_json(value: Any) -> str:
    """``value`` as canonical JSON text (sorted keys), for comparing values."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def loose_name(name: str) -> str:
    """A tool name or glob as a lenient server might match it: compatibility forms, case, and
    blanks and separators (``-``, ``_``, ``.``, ``/``...) ignored; glob characters kept."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(char for char in folded if char.isalnum() or char in "*?[]!")


class Condition:
    """A condition on one argument of a call (``Under``, ``OneOf``, ``MaxSize``).

    ``judge(value, directory)`` gives the ``Verdict`` on one value (not a list: ``check``
    takes a list item by item); ``directory`` is where the server resolves a relative path,
    when the client knows it (None: it does not).
    """

    argument: str | None
    #: Whether a list value is judged item by item (``MaxSize`` measures it whole).
    itemwise = True

    def judge(self, value: Any, directory: str | None) -> Verdict:  # pragma: no cover - abstract
        raise NotImplementedError

    def absent(self) -> Verdict:
        """The verdict when the call leaves the argument out and its tool gives no default:
        no value is sent, so none is under a root or in a set."""
        return False

    def check(self, arguments: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None,
              directory: str | None = None) -> Verdict:
        """The verdict on ``arguments`` (a JSON object as sent); an argument left out is
        judged at its default in ``defaults`` (the tool's input schema), when it has one."""
        if self.argument is None:
            return self.judge(dict(arguments), directory)
        if self.argument in arguments:
            value = arguments[self.argument]
        elif defaults and self.argument in defaults:
            value = defaults[self.argument]
        else:
            return self.absent()
        return self._value(value, directory, 0)

    def _value(self, value: Any, directory: str | None, depth: int) -> Verdict:
        if not self.itemwise or not isinstance(value, list):
            return self.judge(value, directory)
        if self.whole(value):
            return True
        if depth >= _MAX_DEPTH:
            return None
        return each_item([self._value(item, directory, depth + 1) for item in value])

    def whole(self, value: list[Any]) -> bool:
        """Whether a list value holds as a whole, before its items are judged."""
        return False


@attrs.frozen(init=False)
class Under(Condition):
    """The argument is a path inside one of ``roots`` once made absolute and resolved (``..``,
    symbolic links, case on Windows and macOS); a ``file://`` URI is read as its path.

    A relative path is taken from the server's directory when the client knows it (a stdio
    server's working directory), and cannot be judged otherwise. Cannot be judged either: a
    non-string, a path with a NUL, blanks around it, a leading ``~``, a ``$`` (a server may
    expand ``$HOME``), a backslash (on POSIX: a separator to some servers), a URI with a host,
    a query or a fragment. A root may start with ``~`` (your home); a relative root is taken
    from the current directory when the rule is made.
    """

    argument: str
    roots: tuple[str, ...]

    def __init__(self, argument: str, *roots: PathLike) -> None:
        if not roots:
            raise ValueError("Under needs at least one root")
        self.__attrs_init__(argument, tuple(_root(root) for root in roots))

    def judge(self, value: Any, directory: str | None) -> Verdict:
        paths = _readings(value, directory)
        if paths is None:
            return None
        return each_item([self._inside(path) for path in paths])

    def _inside(self, path: str) -> Verdict:
        try:
            resolved = _resolved(path)
            bases = [_resolved(root) for root in self.roots]
        except (OSError, ValueError):
            return None
        for base in bases:
            try:
                if os.path.commonpath([base, resolved]) == base:
                    return True
            except ValueError:  # another drive on Windows
                continue
        return False


def _root(root: PathLike) -> str:
    text = os.fspath(root)
    if not isinstance(text, str) or not text or "\x00" in text:
        raise ValueError(f"Under takes directory paths as roots, got {root!r}")
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):
        raise ValueError(f"Under cannot find the home directory of the root {text!r}")
    return os.path.abspath(expanded)


def _plain(text: str) -> bool:
    """Whether a path reads the same to every server (nothing a server might expand or cut)."""
    return (bool(text) and text == text.strip() and "\x00" not in text and not text.startswith("~")
            and "$" not in text and (os.sep == "\\" or "\\" not in text) and (os.name != "nt" or "%" not in text))


def _readings(value: Any, directory: str | None) -> list[str] | None:
    """The absolute paths a server may read ``value`` as (None: it cannot be judged)."""
    if not isinstance(value, str):
        return None
    texts = [value]
    if value[:5].lower() == "file:":
        parts = urlsplit(value)
        if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
            return None
        texts = [unquote(parts.path), parts.path]  # decoded, as a server should; as sent, as some do
    paths = []
    for text in texts:
        if not _plain(text):
            return None
        if not os.path.isabs(text):
            if directory is None:
                return None  # relative to a directory the client does not know
            text = os.path.join(directory, text)
        paths.append(text)
    return paths


def _resolved(path: str) -> str:
    resolved: str = os.path.normcase(os.path.realpath(path))
    return resolved.casefold() if _CASELESS else resolved


@attrs.frozen(init=False)
class OneOf(Condition):
    """The argument's value is one of ``values``, compared as JSON values (``1`` is not ``"1"``).

    A value equal to one only loosely, as a lenient server may take it (``"1"``, ``1.0`` or
    ``true`` for ``1``; ``" Delete"`` for ``"delete"``), and a ``null`` or an object that is
    not listed, cannot be judged.
    """

    argument: str
    values: tuple[Any, ...]

    def __init__(self, argument: str, values: Iterable[Any]) -> None:
        self.__attrs_init__(argument, tuple(values))

    def judge(self, value: Any, directory: str | None) -> Verdict:
        key = to_json(value)
        if any(to_json(listed) == key for listed in self.values):
            return True
        if value is None or isinstance(value, dict):
            return None
        near = _loose(value)
        if any(near & _loose(listed) for listed in self.values):
            return None
        return False

    def whole(self, value: list[Any]) -> bool:
        key = to_json(value)
        return any(to_json(listed) == key for listed in self.values)


def _loose(value: Any) -> set[tuple[str, Any]]:
    """What a lenient server may take ``value`` for: the number it stands for, its text folded."""
    if isinstance(value, (bool, int, float)):
        try:
            number = float(value)
        except OverflowError:
            return set()
        return {("n", number)} if math.isfinite(number) else set()
    if not isinstance(value, str):
        return set()
    text = unicodedata.normalize("NFKC", value).strip().casefold()
    keys: set[tuple[str, Any]] = {("s", text)}
    if text in _TRUTHS:
        keys.add(("n", _TRUTHS[text]))
    try:
        number = float(text)
    except ValueError:
        return keys
    if math.isfinite(number):
        keys.add(("n", number))
    return keys


@attrs.frozen(init=False)
class MaxSize(Condition):
    """The argument (``None``: all the arguments) is at most ``size`` bytes (UTF-8 text or
    JSON); left out, it holds. Every JSON value has a size: it can always be judged."""

    argument: str | None
    size: int
    itemwise = False

    def __init__(self, argument: str | None, size: int) -> None:
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"MaxSize needs a size in bytes, got {size!r}")
        self.__attrs_init__(argument, size)

    def absent(self) -> Verdict:
        return True

    def judge(self, value: Any, directory: str | None) -> Verdict:
        text = value if isinstance(value, str) else to_json(value)
        return len(text.encode("utf-8", "surrogatepass")) <= self.size
