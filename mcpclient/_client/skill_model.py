"""What a skill is (SEP-2640, ``io.modelcontextprotocol/skills``) and how its files are verified.

A skill is a directory of files, minimally ``SKILL.md``, each served as a resource. The
server lists skills (``skills/list``) or describes one (``skills/get``) with an entry giving
the SKILL.md frontmatter and a manifest of every file with its SHA-256 digest and size.

The rules mcpclient keeps, from the extension's "Integrity and Verification" section:

* Nothing is read ahead of need: listing reads no file; ``load_skill`` reads SKILL.md only,
  ``read_skill_file`` one file, when called.
* Every file read is checked against the entry before it is returned: its size, its digest,
  and, for SKILL.md, its YAML frontmatter field by field. A file the entry does not list is a
  failure too. On any mismatch ``SkillVerificationError`` is raised and the content is dropped.
* A skill whose files are ``"dynamic"`` has no digests to check: it is refused unless the
  caller passes ``allow_dynamic=True`` (its frontmatter is still compared).

The frontmatter is server text parsed as YAML, so it is parsed last and bounded: size and
digest are checked first, the frontmatter may hold at most ``MAX_FRONTMATTER_BYTES``, and it
is read by a safe loader that refuses aliases (so an alias bomb cannot expand: there is
nothing to expand) and nesting deeper than ``_bounded.MAX_DEPTH``. An entry's frontmatter
nested deeper than that is refused too. The YAML is never expanded into more values than
its own text holds.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from attrs import frozen

from .. import types as t
from .._core import bounded as _bounded
from .._core.exceptions import MCPError, ProtocolError, SkillVerificationError

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

log = logging.getLogger("mcpclient")

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_MD = "SKILL.md"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_FRONTMATTER = re.compile(r"---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
#: The largest SKILL.md frontmatter parsed, in characters (the extension's fields need a few KiB).
MAX_FRONTMATTER_BYTES = 64 * 1024


@frozen(kw_only=True)
class SkillFile:
    """One file of a skill, as its entry lists it: URI, ``sha256:<hex>`` digest, size in bytes."""

    uri: str
    digest: str
    size: int


@frozen(kw_only=True)
class Skill:
    """One skill, from ``skills/list`` or ``skills/get``; reading it needs ``load_skill``.

    ``uri`` is the URI of its SKILL.md (with the server, the skill's identity: names are
    labels, not unique). ``frontmatter`` is the SKILL.md frontmatter as the server rendered
    it; ``name`` and ``description`` come from it. ``files`` lists every file with its digest
    and size, SKILL.md included, or is None for a ``"dynamic"`` skill, which has no manifest.
    """

    uri: str
    name: str
    description: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...] | None

    @property
    def dynamic(self) -> bool:
        return self.files is None

    @property
    def root(self) -> str:
        """The skill's directory URI: ``uri`` without ``/SKILL.md``."""
        return self.uri[: -len(SKILL_MD) - 1]

    def file(self, path: str) -> SkillFile | None:
        """The listed file at ``path`` (relative to the skill's root, or a full URI), if any."""
        uri = self.resolve(path)
        return next((f for f in self.files or () if f.uri == uri), None)

    def resolve(self, path: str) -> str:
        """The URI of ``path``: a full URI is kept, a relative path is joined to ``root``."""
        return path if "://" in path else f"{self.root}/{path.lstrip('/')}"


def read_entry(entry: Any) -> Skill:
    """A ``Skill`` from a wire entry; ``ProtocolError`` if the entry breaks the extension's rules."""
    if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
        raise ProtocolError(f"a skill entry needs a uri: {_bounded.excerpt(entry, 200)}")
    uri = entry["uri"]
    frontmatter = entry.get("frontmatter")
    if not isinstance(frontmatter, dict):
        raise ProtocolError(f"skill {uri}: the entry has no frontmatter object")
    if _bounded.deeper_than(frontmatter):
        raise ProtocolError(f"skill {uri}: the entry's frontmatter nests deeper than {_bounded.MAX_DEPTH} levels")
    name, description = frontmatter.get("name"), frontmatter.get("description")
    if not isinstance(name, str) or not isinstance(description, str):
        raise ProtocolError(f"skill {uri}: the frontmatter lacks a name or a description")
    if not uri.endswith(f"/{name}/{SKILL_MD}"):
        raise ProtocolError(f"skill {uri}: the URI must end with /{name}/{SKILL_MD} (the frontmatter name)")
    resources = entry.get("resources")
    if resources == "dynamic":
        files = None
    elif isinstance(resources, list):
        files = tuple(_read_file(item, uri) for item in resources)
        if not any(f.uri == uri for f in files):
            raise ProtocolError(f"skill {uri}: the resources do not list {SKILL_MD} itself")
    else:
        raise ProtocolError(f'skill {uri}: resources must be a list or "dynamic", got {_bounded.excerpt(resources, 100)}')
    return Skill(uri=uri, name=name, description=description, frontmatter=frontmatter, files=files)


def _read_file(item: Any, skill_uri: str) -> SkillFile:
    root = skill_uri[: -len(SKILL_MD) - 1]
    if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
        raise ProtocolError(f"skill {skill_uri}: a resources entry has no uri: {_bounded.excerpt(item, 100)}")
    uri, digest, size = item["uri"], item.get("digest"), item.get("size")
    if uri != skill_uri and not uri.startswith(root + "/"):
        raise ProtocolError(f"skill {skill_uri}: {uri} is outside the skill's directory")
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise ProtocolError(f"skill {skill_uri}: {uri} has no sha256:<64 lowercase hex> digest")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ProtocolError(f"skill {skill_uri}: {uri} has no size in bytes")
    return SkillFile(uri=uri, digest=digest, size=size)


def bytes_of(contents: list[t.ResourceContents], uri: str, skill: Skill) -> bytes:
    """The raw bytes of the one content entry for ``uri`` (text is UTF-8, as on the wire)."""
    matching = [c for c in contents if c.uri == uri] or (contents if len(contents) == 1 else [])
    if len(matching) != 1:
        raise SkillVerificationError(
            f"resources/read returned {len(contents)} content entries, none of them alone for this file",
            uri=uri, skill=skill.uri,
        )
    content = matching[0]
    if content.blob is not None:
        return content.blob
    return (content.text or "").encode("utf-8")


def decode(data: bytes, skill: Skill) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillVerificationError(f"{SKILL_MD} is not UTF-8 text", uri=skill.uri, skill=skill.uri) from exc


def check_frontmatter(skill: Skill, text: str) -> None:
    """Compare SKILL.md's YAML frontmatter with the entry's, field by field."""
    text = text[1:] if text.startswith("\ufeff") else text
    head = text[: MAX_FRONTMATTER_BYTES + 16]  # room for the delimiters around the largest frontmatter
    found = _FRONTMATTER.match(head)
    if found is None:
        if _FRONTMATTER.match(text[: MAX_FRONTMATTER_BYTES * 16]) is not None:
            raise SkillVerificationError(
                f"the frontmatter is larger than {MAX_FRONTMATTER_BYTES} characters; refused unparsed",
                uri=skill.uri, skill=skill.uri,
            )
        raise SkillVerificationError(f"{SKILL_MD} has no --- delimited frontmatter", uri=skill.uri, skill=skill.uri)
    if len(found.group(1)) > MAX_FRONTMATTER_BYTES:
        raise SkillVerificationError(
            f"the frontmatter is larger than {MAX_FRONTMATTER_BYTES} characters; refused unparsed",
            uri=skill.uri, skill=skill.uri,
        )
    parsed = _json_like(_load_yaml(found.group(1), skill))
    if not isinstance(parsed, dict):
        raise SkillVerificationError("the frontmatter is not a mapping", uri=skill.uri, skill=skill.uri)
    differing = sorted(
        str(key) for key in set(parsed) | set(skill.frontmatter) if not _same(parsed.get(key), skill.frontmatter.get(key))
    )
    if differing:
        raise SkillVerificationError(
            f"the frontmatter differs from the entry's in {', '.join(differing)}", uri=skill.uri, skill=skill.uri
        )


def _load_yaml(source: str, skill: Skill) -> Any:
    """The frontmatter's value, read by ``_frontmatter_loader``; ``SkillVerificationError`` if
    it is not YAML, uses an alias, nests too deep or holds a value YAML cannot build."""
    try:
        import yaml
    except ImportError as exc:
        raise MCPError(
            "verifying a skill's frontmatter needs PyYAML: pip install 'mcpclient[skills]'"
        ) from exc
    loader = _frontmatter_loader()(source)
    try:
        return loader.get_single_data()
    except _Refused as exc:
        raise SkillVerificationError(f"the frontmatter {exc}; refused", uri=skill.uri, skill=skill.uri) from None
    except yaml.YAMLError as exc:
        reason = str(exc)[:300]
        raise SkillVerificationError(f"the frontmatter is not valid YAML ({reason})", uri=skill.uri, skill=skill.uri) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a date, a number or a !!binary YAML cannot build
        reason = f"{type(exc).__name__}: {exc}"[:300]
        raise SkillVerificationError(f"the frontmatter holds a value YAML cannot build ({reason})",
                                     uri=skill.uri, skill=skill.uri) from None
    finally:
        loader.dispose()


class _Refused(Exception):
    """The frontmatter uses what the loader refuses (an alias, too deep a nesting)."""


_LOADER: Any = None


def _frontmatter_loader() -> Any:
    """PyYAML's pure-Python ``SafeLoader``, refusing aliases and nesting past ``MAX_DEPTH``.

    Aliases are refused as the composer meets them, before any node is built or shared, so
    an alias bomb ends at its first ``*alias``. Nesting is counted as nodes are composed
    (PyYAML's composer recurses once per level).
    """
    global _LOADER
    if _LOADER is None:
        import yaml

        class FrontmatterLoader(yaml.SafeLoader):
            depth = 0

            def compose_node(self, parent: Any, index: Any) -> Any:
                if self.check_event(yaml.AliasEvent):
                    raise _Refused("uses a YAML alias (*name), which mcpclient does not expand")
                self.depth += 1
                try:
                    if self.depth > _bounded.MAX_DEPTH:
                        raise _Refused(f"nests deeper than {_bounded.MAX_DEPTH} levels")
                    return super().compose_node(parent, index)
                finally:
                    self.depth -= 1

        _LOADER = FrontmatterLoader
    return _LOADER


def _json_like(value: Any) -> Any:
    """YAML values as the JSON an entry carries: dates become ISO 8601 strings."""
    import datetime  # here: only a skill's YAML frontmatter brings dates

    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _json_like(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_like(v) for v in value]
    return value


def _same(a: Any, b: Any) -> bool:
    """JSON equality: True is not 1, 1 is 1.0, and order matters in lists only."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b
