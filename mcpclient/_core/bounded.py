"""Walks over values a server sent that never recurse and never grow past a bound.

Decoded JSON can nest as deep as the decoder allows (about a thousand levels) and YAML or a
fallback decoder deeper still; Python code that walks such a value recursively (a copy, a
comparison, ``repr``) ends in ``RecursionError``, which would kill the thread doing it. These
helpers walk with an explicit stack instead:

- ``excerpt``: a ``repr``-like text of a value cut at ``limit`` characters, built only that
  far (a 64 MiB reply is not turned into a 64 MiB string to keep 200 characters of it);
- ``map_strings``: a copy of a JSON value with a function applied to every string (keys too);
  a container nested deeper than ``MAX_DEPTH`` is replaced by ``TOO_DEEP``, not walked;
- ``deeper_than``: whether a value nests deeper than a bound;
- ``loads_shallow``: ``json.loads`` for a text too deep for it: every container nested deeper
  than ``MAX_DEPTH`` becomes the string ``TOO_DEEP``, so the rest (a reply's id, its error
  code and message) is still read.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

__all__ = ["MAX_DEPTH", "TOO_DEEP", "deeper_than", "excerpt", "loads_shallow", "map_strings"]

#: The deepest nesting kept; deeper containers are replaced by ``TOO_DEEP``.
MAX_DEPTH = 100
TOO_DEEP = "[nested too deep]"

_STRUCTURE = re.compile(r'["\[\]{}]')
_STRING_END = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def excerpt(value: Any, limit: int = 200) -> str:
    """A ``repr`` of ``value`` cut at ``limit`` characters ("..." marks a cut); never raises.

    Dicts, lists, tuples and strings are written as ``repr`` writes them, with an explicit
    stack and only as far as ``limit``; anything else is its own ``repr``, cut.
    """
    parts: list[str] = []
    size = 0
    stack: list[Any] = [value]
    while stack and size <= limit:
        item = stack.pop()
        if isinstance(item, _Text):
            text = item.text
        elif isinstance(item, str):
            text = repr(item[: limit + 1])
        elif isinstance(item, dict):
            stack.append(_Text("}"))
            entries = list(_dict_entries(item, limit - size))
            for key, element, last in reversed(entries):
                if not last:
                    stack.append(_Text(", "))
                stack.append(element)
                stack.append(_Text(": "))
                stack.append(key)
            text = "{"
        elif isinstance(item, (list, tuple)):
            close, opening = ("]", "[") if isinstance(item, list) else (")", "(")
            stack.append(_Text(close))
            shown = item[: max(0, limit - size) // 2 + 1]
            for index in range(len(shown) - 1, -1, -1):
                if index < len(shown) - 1:
                    stack.append(_Text(", "))
                stack.append(shown[index])
            text = opening
        else:
            try:
                text = repr(item)
            except Exception:  # noqa: BLE001 - an excerpt must not fail
                text = f"<{type(item).__name__}>"
        parts.append(text)
        size += len(text)
    joined = "".join(parts)
    return joined if len(joined) <= limit and not stack else joined[:limit] + "..."


class _Text:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _dict_entries(value: dict[Any, Any], room: int) -> Any:
    """(key, value, is last) for as many entries as ``room`` characters could show."""
    count = len(value)
    for index, (key, element) in enumerate(value.items()):
        if index > max(0, room) // 4:
            return
        yield key, element, index == count - 1


def map_strings(value: Any, function: Callable[[str], str], max_depth: int = MAX_DEPTH) -> Any:
    """A copy of the JSON ``value`` with ``function`` applied to every string, keys included.

    A dict or list nested deeper than ``max_depth`` is replaced by ``TOO_DEEP``. Other values
    are kept as they are (not copied).
    """
    if isinstance(value, str):
        return function(value)
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 1)]
    while stack:
        source, parent, slot, depth = stack.pop()
        if depth > max_depth:
            parent[slot] = TOO_DEEP
            continue
        copy: Any
        if isinstance(source, dict):
            copy = {}
            for key, item in source.items():
                key = function(key) if isinstance(key, str) else key
                if isinstance(item, (dict, list)):
                    copy[key] = None
                    stack.append((item, copy, key, depth + 1))
                else:
                    copy[key] = function(item) if isinstance(item, str) else item
        else:
            copy = [None] * len(source)
            for index, item in enumerate(source):
                if isinstance(item, (dict, list)):
                    stack.append((item, copy, index, depth + 1))
                else:
                    copy[index] = function(item) if isinstance(item, str) else item
        parent[slot] = copy
    return root[0]


def deeper_than(value: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Whether ``value`` has a dict, list or tuple nested more than ``max_depth`` deep."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth + 1 > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return False


def loads_shallow(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` with every container nested deeper than ``max_depth`` read as
    ``TOO_DEEP``: for a text ``json.loads`` refuses with ``RecursionError``.

    Raises ``ValueError`` (``json.JSONDecodeError``) when what is left is not JSON.
    """
    kept: list[str] = []
    depth = 0
    start = 0  # where the text to keep resumes
    cut = -1  # where the container being dropped began
    position = 0
    while True:
        found = _STRUCTURE.search(text, position)
        if found is None:
            break
        char = found.group()
        position = found.end()
        if char == '"':
            end = _STRING_END.match(text, position)
            if end is None:
                break  # an unterminated string: json.loads says where
            position = end.end()
        elif char in "[{":
            depth += 1
            if depth == max_depth + 1:
                cut = found.start()
        elif depth > 0:
            if depth == max_depth + 1:
                kept.append(text[start:cut])
                kept.append(json.dumps(TOO_DEEP))
                start = position
            depth -= 1
    if depth > max_depth:  # unbalanced: drop the rest, json.loads reports the truncation
        kept.append(text[start:cut])
        start = len(text)
    kept.append(text[start:])
    return json.loads("".join(kept))
