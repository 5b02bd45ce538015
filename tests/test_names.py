"""Tool names LLM APIs accept: sanitized, short enough, unique, stable."""

from __future__ import annotations

import hashlib
import re

from mcpclient._core.llm_names import sanitize, unique_names

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_invalid_characters_become_underscores():
    assert sanitize("files.read/v2 beta") == "files_read_v2_beta"
    assert sanitize("") == "_"


def test_long_names_keep_a_hash_of_the_original():
    a, b = sanitize("x" * 70 + "a"), sanitize("x" * 70 + "b")
    assert len(a) == len(b) == 64 and a != b and VALID.match(a)


def test_duplicates_are_numbered_in_order_and_stay_valid():
    names = unique_names(["a.b", "a_b", "a-b", "a.b", "y" * 80, "y" * 80])
    assert names[:4] == ["a_b", "a_b_2", "a-b", "a_b_3"]
    assert len(set(names)) == 6 and all(VALID.match(n) for n in names)
    # Stable: a name depends only on the names before it, so adding a tool at the end (or
    # listing again in another process: no hash() involved) renames none of the others.
    assert unique_names(["a.b", "a_b"]) == ["a_b", "a_b_2"]
    assert unique_names(["a.b", "a_b", "c", "a.b"])[:2] == ["a_b", "a_b_2"]
    assert sanitize("y" * 80) == "y" * 55 + "_" + hashlib.sha1(b"y" * 80).hexdigest()[:8]
