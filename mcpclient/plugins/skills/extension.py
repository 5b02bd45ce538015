"""``Skills``: skills served over MCP (SEP-2640) as a built-in extension of the public seam.

The client side of ``io.modelcontextprotocol/skills``: ``skills/list`` and ``skills/get``
through the extension's ``Session``, and every file read (``resources/read``) verified
against the skill's entry before it is returned (``model``: sizes, digests, frontmatter).
Nothing is read ahead of need. Every Client has one; its public methods delegate to it
through the ``SkillsFeature`` interface.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping, Optional, Sequence

from ... import types as t
from ..._client.features import SkillsFeature
from ..._client.skill_model import SKILLS_EXTENSION, Skill, bytes_of, check_frontmatter, decode, read_entry
from ..._core import bounded as _bounded
from ..._core.exceptions import CapabilityError, ClientClosedError, ProtocolError, SkillVerificationError
from ...extensions import Extension, Options, Session

__all__ = ["Skills"]

log = logging.getLogger("mcpclient")
#: Extra ``_meta`` keys of one call (``Client``'s ``meta=``).
Meta = Optional[Mapping[str, Any]]


class Skills(Extension, SkillsFeature):
    """Skills: list them, load one, read its files, each verified, through the ``Session``.

    Every Client has one (skills need no option: the server's declaration decides), and
    ``Client.list_skills``, ``get_skill``, ``load_skill`` and ``read_skill_file`` call it.
    """

    def __init__(self) -> None:
        self._session: Session | None = None

    def bind(self, session: Session) -> None:
        self._session = session

    def list_skills(self, timeout: float | None, meta: Meta = None) -> list[Skill]:
        self._require_skills("skills/list")
        skills: list[Skill] = []
        for page in self._bound().pages("skills/list", options=Options(timeout=timeout, meta=meta)):
            entries = page.get("skills")
            if not isinstance(entries, list):
                raise ProtocolError(f"the server's skills/list result has no skills list: {_bounded.excerpt(page, 200)}")
            for entry in entries:
                try:
                    skills.append(read_entry(entry))
                except ProtocolError as exc:
                    log.warning("skipping a skill the server listed: %s", exc)
        return skills

    def get_skill(self, uri: str, timeout: float | None, meta: Meta = None) -> Skill:
        self._require_skills("skills/get")
        result = self._bound().request("skills/get", {"uri": uri}, options=Options(timeout=timeout, meta=meta))
        return read_entry(result.get("skill"))

    def load_skill(self, skill: Skill | str, allow_dynamic: bool, timeout: float | None, meta: Meta = None) -> str:
        entry = self._skill_entry(skill, timeout, meta)
        data = self._verified_read(entry, entry.uri, allow_dynamic, timeout, meta)
        text = decode(data, entry)
        check_frontmatter(entry, text)
        return text

    def read_skill_file(
        self, skill: Skill, path: str, allow_dynamic: bool, timeout: float | None, meta: Meta = None
    ) -> bytes:
        return self._verified_read(skill, skill.resolve(path), allow_dynamic, timeout, meta)

    # -- helpers ------------------------------------------------------------------------------

    def _require_skills(self, method: str) -> None:
        extensions = self._bound().server_capabilities.get("extensions")
        if not (isinstance(extensions, dict) and SKILLS_EXTENSION in extensions):
            raise CapabilityError(f"extensions.{SKILLS_EXTENSION}", method)

    def _skill_entry(self, skill: Skill | str, timeout: float | None, meta: Meta) -> Skill:
        if isinstance(skill, Skill):
            return skill
        if not isinstance(skill, str):
            raise TypeError(f"skill must be a Skill, a SKILL.md URI or a name, got {type(skill).__name__}")
        if "://" in skill:
            return self.get_skill(skill, timeout, meta)
        matches = [s for s in self.list_skills(timeout, meta) if s.name == skill]
        if len(matches) != 1:
            found = ", ".join(s.uri for s in matches) or "none"
            raise ValueError(f"{len(matches)} listed skills are named {skill!r} ({found}); pass a Skill or its URI")
        return matches[0]

    def _verified_read(self, skill: Skill, uri: str, allow_dynamic: bool, timeout: float | None, meta: Meta) -> bytes:
        if skill.files is None:
            if not allow_dynamic:
                raise SkillVerificationError(
                    'the skill\'s files are "dynamic", so nothing can be verified (pass allow_dynamic=True '
                    "to accept unverified content)", uri=uri, skill=skill.uri,
                )
            if uri != skill.uri and not uri.startswith(skill.root + "/"):
                raise SkillVerificationError("the file is outside the skill's directory", uri=uri, skill=skill.uri)
            return bytes_of(self._read(uri, timeout, meta), uri, skill)
        listed = next((f for f in skill.files if f.uri == uri), None)
        if listed is None:
            raise SkillVerificationError("the skill's entry does not list this file", uri=uri, skill=skill.uri)
        data = bytes_of(self._read(uri, timeout, meta), uri, skill)
        if len(data) != listed.size:
            raise SkillVerificationError(
                f"{len(data)} bytes read, the entry says {listed.size}", uri=uri, skill=skill.uri
            )
        import hashlib  # here: only a verified skill needs it, and it costs import time

        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if digest != listed.digest:
            raise SkillVerificationError(
                f"digest {digest} read, the entry says {listed.digest}", uri=uri, skill=skill.uri
            )
        return data

    def _read(self, uri: str, timeout: float | None, meta: Meta) -> list[t.ResourceContents]:
        session = self._bound()
        if "resources" not in session.server_capabilities:
            raise CapabilityError("resources", "resources/read")
        result = session.read_resource(uri, options=Options(timeout=timeout, meta=meta))
        return session.structure_list(result.get("contents", []), t.ResourceContents)

    def _bound(self) -> Session:
        session = self._session
        if session is None:
            raise ClientClosedError("this skills extension belongs to no client yet")
        return session


def skills_extensions(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """Every client has Skills: whether skills are served is the server's to declare."""
    return () if any(isinstance(extension, Skills) for extension in gathered) else (Skills(),)
