"""Skills' data: ``Skill``, ``SkillFile`` and the verification of a read (kept in
``mcpclient._skill_model``, below the client core, since ``Client.list_skills`` returns them)."""

from ..._skill_model import (
    MAX_FRONTMATTER_BYTES,
    SKILLS_EXTENSION,
    Skill,
    SkillFile,
    bytes_of,
    check_frontmatter,
    decode,
    read_entry,
)

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "SKILLS_EXTENSION",
    "Skill",
    "SkillFile",
    "bytes_of",
    "check_frontmatter",
    "decode",
    "read_entry",
]
