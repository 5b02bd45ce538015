"""Tool names that LLM APIs accept: ``^[a-zA-Z0-9_-]{1,64}$``, unique, stable."""

from __future__ import annotations

import hashlib
import re
from typing import Iterable

__all__ = ["MAX_NAME_LENGTH", "sanitize", "unique_names"]

#: OpenAI and Anthropic both cap function/tool names at 64 characters.
MAX_NAME_LENGTH = 64

_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize(name: str, *, max_length: int = MAX_NAME_LENGTH) -> str:
    """Replace every character an LLM API refuses with ``_`` and fit ``max_length``.

    A name that had to be shortened ends with 8 hex digits of a hash of the original, so
    two long names that share a beginning stay distinct.
    """
    clean = _INVALID.sub("_", name) or "_"
    if len(clean) <= max_length:
        return clean
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    return f"{clean[: max_length - 9]}_{digest}"


def unique_names(names: Iterable[str], *, max_length: int = MAX_NAME_LENGTH) -> list[str]:
    """Sanitize each name, in order, then make duplicates distinct with ``_2``, ``_3``...

    The result depends only on the input order, so two calls on the same names agree.
    """
    result: list[str] = []
    taken: set[str] = set()
    for name in names:
        candidate = sanitize(name, max_length=max_length)
        n = 1
        base = candidate
        while candidate in taken:
            n += 1
            suffix = f"_{n}"
            candidate = base[: max_length - len(suffix)] + suffix
        taken.add(candidate)
        result.append(candidate)
    return result
