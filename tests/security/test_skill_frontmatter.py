"""A hostile SKILL.md frontmatter is refused before it can cost time or memory.

Its YAML is server text: an alias bomb (a few hundred bytes that expand to millions of
values), a frontmatter larger than any skill needs, or one nested thousands of levels deep is
refused with a ``SkillVerificationError``, quickly, and only after the size and digest of the
file matched the entry (scripted servers: no real server serves a hostile skill).
"""

from __future__ import annotations

import time

import pytest

from mcpclient import Client, SkillVerificationError
from tests.test_skills import SKILL_URI, entry, skills_server
from tests.helpers import RELEASED_WITHIN

pytestmark = pytest.mark.timeout(60)

HEAD = "---\nname: pdf-processing\ndescription: d\n"
LISTED = {"name": "pdf-processing", "description": "d"}


def alias_bomb(levels: int = 6) -> str:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    return HEAD + "\n".join(lines) + "\n---\nbody\n"


def _load(transport, text: str, listed_text: str | None = None) -> tuple[SkillVerificationError, float]:
    listed = entry(text if listed_text is None else listed_text, frontmatter=LISTED)
    server = skills_server(transport, entries=[listed], files={SKILL_URI: text})
    try:
        with Client(transport, timeout=5) as client:
            skill = client.list_skills()[0]
            started = time.monotonic()
            with pytest.raises(SkillVerificationError) as info:
                client.load_skill(skill)
            return info.value, time.monotonic() - started
    finally:
        server.stop()


def test_an_alias_bomb_is_refused_at_its_first_alias(transport):
    error, elapsed = _load(transport, alias_bomb())
    assert "alias" in str(error)
    assert elapsed < RELEASED_WITHIN  # (expanding the bomb would not end)


def test_a_bomb_whose_digest_does_not_match_is_never_parsed(transport):
    error, _ = _load(transport, alias_bomb(), listed_text=alias_bomb().replace("lol", "lal"))
    assert "digest" in str(error)


def test_a_frontmatter_larger_than_any_skill_needs_is_refused_unparsed(transport):
    text = HEAD + "padding: '" + "x" * 100_000 + "'\n---\nbody\n"  # the limit is 64 KiB
    error, elapsed = _load(transport, text)
    assert "larger than" in str(error)
    assert elapsed < RELEASED_WITHIN


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{a: ", "}")])
def test_a_frontmatter_nested_thousands_deep_is_a_clear_error(transport, opening, closing):
    depth = 5000
    text = HEAD + f"deep: {opening * depth}x{closing * depth}\n---\nbody\n"
    error, elapsed = _load(transport, text)
    assert "deeper than" in str(error)
    assert elapsed < RELEASED_WITHIN
