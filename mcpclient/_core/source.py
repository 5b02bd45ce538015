"""Python source that holds text mcpclient did not write: the one way generated code takes it.

Every code generator (``mcpclient record --pytest``, ``mcpclient stubs``, the notebook
explorer's "copy as code") puts a server's or a recording's values into the code it writes
in three ways only, all from here, and never inside a string literal of its own template:

* ``literal(value)``: a Python expression that evaluates to a JSON value equal to ``value``:
  ``repr`` of ``str``, ``int``, ``float``, ``bool`` and ``None`` and of lists and dicts of
  them, and nothing else (any other type is a ``TypeError``, so no object's own ``__repr__``
  is ever written). It is ASCII: each other character is a ``\\x``, ``\\u`` or ``\\U`` escape
  inside its string literal, so the file reads the same in any encoding and no character can
  hide or reorder code. A float that is not finite is ``float('nan')``; a value nested deeper
  than ``MAX_NESTING`` (which the Python parser may refuse) is ``json.loads('...')`` of its
  JSON text, and the caller imports ``json`` (``needs_json``).
* ``doc_lines(text)``: lines for a docstring or a comment. Each is ``clean``ed (controls,
  line and paragraph separators, bidi and other format characters and lone surrogates are
  shown as escapes: nothing can end a comment line or hide in one), then ``\\`` and ``"`` are
  escaped, so no line can end a ``\"\"\"`` docstring, start an escape sequence (``\\N{...}``)
  in it or join it to the next line.
* ``identifier(text, ...)``: a new name of ASCII letters, digits and ``_``, no keyword.

A generator never writes such text on a module's first two lines (where a comment could be
read as an encoding declaration).
"""

from __future__ import annotations

import hashlib
import json
import keyword
import math
import pprint
import re
from typing import Any, Iterable

from .text import clean_lines

__all__ = ["MAX_IDENTIFIER", "MAX_NESTING", "doc_lines", "identifier", "is_name", "literal", "needs_json"]

#: How long a generated identifier may grow before it is cut (with a hash of the original).
MAX_IDENTIFIER = 80
#: How deeply a value nests before ``literal`` writes it as ``json.loads(...)`` (the Python
#: parser refuses about 200 nested brackets).
MAX_NESTING = 50
_JSON_CALL = "json.loads("


class _NotFinite(float):
    """A float ``pprint`` writes as ``float('nan')`` (its ``repr`` would be the name ``nan``)."""

    def __repr__(self) -> str:
        return f"float({str(float(self))!r})"


def _checked(value: Any, depth: int) -> Any:
    """``value`` with its non-finite floats marked; ``TypeError`` for anything that is not
    JSON data (exact types: a subclass could write its own ``repr``); ``_TooDeep`` past
    ``MAX_NESTING``."""
    if value is None or type(value) in (bool, str, int):
        return value
    if type(value) is float:
        return value if math.isfinite(value) else _NotFinite(value)
    if depth >= MAX_NESTING:
        raise _TooDeep
    if type(value) is list:
        return [_checked(item, depth + 1) for item in value]
    if type(value) is dict:
        if not all(type(key) is str for key in value):
            raise TypeError("a generated literal's dict keys must be strings")
        return {key: _checked(item, depth + 1) for key, item in value.items()}
    raise TypeError(f"a generated literal holds JSON data only, not {type(value).__name__}")


class _TooDeep(Exception):
    pass


def literal(value: Any, *, indent: int = 0, width: int | None = 120) -> str:
    """``value`` (JSON data) as an ASCII Python expression equal to it (see the module).

    Laid out by ``pprint`` within ``width`` columns, continuation lines indented by ``indent``
    spaces (the column the expression starts at); on one line when ``width`` is None.
    """
    try:
        marked = _checked(value, 0)
    except _TooDeep:
        try:
            text = json.dumps(value, ensure_ascii=True, allow_nan=True)
        except RecursionError:
            raise ValueError("a value nests too deeply to be written as code") from None
        return f"{_JSON_CALL}{literal(text, indent=indent + len(_JSON_CALL), width=width)})"
    text = repr(marked) if width is None else pprint.pformat(marked, width=max(60, width - indent), sort_dicts=False)
    # Non-ASCII characters stand only inside the string literals repr wrote: an escape there is
    # the same character.
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    return text.replace("\n", "\n" + " " * indent)


def needs_json(code: str) -> bool:
    """Whether a ``literal`` needs ``import json`` where it runs."""
    return code.startswith(_JSON_CALL)


def doc_lines(text: str) -> list[str]:
    """``text`` as docstring or comment lines (see the module); blank lines at either end dropped."""
    lines = [line.rstrip() for line in clean_lines(text, 2000)]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return [line.replace("\\", "\\\\").replace('"', '\\"') for line in lines]


def is_name(text: str) -> bool:
    """Whether ``text`` can name a variable in code (``result = text.call_tool(...)``)."""
    return text.isidentifier() and not keyword.iskeyword(text)


def _is_reserved(name: str) -> bool:
    return keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in ("self", "cls")


def identifier(text: str, taken: set[str], *, fallback: str, avoid: Iterable[str] = ()) -> str:
    """A new ASCII, non-keyword Python identifier for ``text``, not in ``taken`` nor ``avoid``;
    added to ``taken``. Leading underscores are dropped (such names read as private)."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", text).lstrip("_") or fallback
    if name[0].isdigit():
        name = f"{fallback}_{name}"
    if len(name) > MAX_IDENTIFIER:
        name = name[: MAX_IDENTIFIER - 9] + "_" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    blocked = set(avoid)
    if _is_reserved(name) or name in blocked:
        name += "_"
    base, number = name, 1
    while name in taken or name in blocked or _is_reserved(name):
        number += 1
        name = f"{base}_{number}"
    taken.add(name)
    return name
