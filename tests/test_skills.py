"""Skills (SEP-2640): listing reads nothing, every file read is verified, on scripted servers."""

from __future__ import annotations

import base64
import hashlib
import time

import pytest

from mcpclient import CapabilityError, Client, Plugins, ProtocolError, RequestTimeout, Skill, SkillVerificationError
from mcpclient.plugins.validation import OutputValidation
from tests.doubles import LEGACY_INIT_RESULT, ScriptedServer, error
from tests.helpers import RELEASED_WITHIN

EXT = "io.modelcontextprotocol/skills"
SKILL_URI = "skill://pdf-processing/SKILL.md"
FORMS_URI = "skill://pdf-processing/references/FORMS.md"
SKILL_MD = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
metadata:
  version: "2.1"
  released: 2024-05-01
---

Read references/FORMS.md before filling a form.
"""
FRONTMATTER = {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents",
               "metadata": {"version": "2.1", "released": "2024-05-01"}}
FORMS = b"Supporting content \xe2\x9c\x93\n"


def digest(data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def entry(skill_md: str = SKILL_MD, frontmatter: dict | None = None, **overrides) -> dict:
    value = {
        "uri": SKILL_URI,
        "frontmatter": dict(FRONTMATTER if frontmatter is None else frontmatter),
        "resources": [
            {"uri": SKILL_URI, "digest": digest(skill_md), "size": len(skill_md.encode())},
            {"uri": FORMS_URI, "digest": digest(FORMS), "size": len(FORMS)},
        ],
    }
    value.update(overrides)
    return value


def skills_server(transport, *, entries=None, files=None, extensions=None, handlers=None):
    """A legacy server with the skills extension; ``files`` maps URI to text or bytes."""
    files = {SKILL_URI: SKILL_MD, FORMS_URI: FORMS} if files is None else files
    caps = {"resources": {}, "extensions": {EXT: {}} if extensions is None else extensions}

    def read(params, message):
        body = files[params["uri"]]
        if isinstance(body, bytes):
            return {"contents": [{"uri": params["uri"], "blob": base64.b64encode(body).decode()}]}
        return {"contents": [{"uri": params["uri"], "mimeType": "text/markdown", "text": body}]}

    table = {
        "skills/list": lambda p, m: {"skills": [entry()] if entries is None else entries},
        "skills/get": lambda p, m: {"skill": entry()} if p["uri"] == SKILL_URI else (_ for _ in ()).throw(
            error(m, -32602, "no such skill")),
        "resources/read": read,
    }
    table.update(handlers or {})
    return ScriptedServer(transport, table, init_result={**LEGACY_INIT_RESULT, "capabilities": caps})


def reads(server) -> list[str]:
    return [m["params"]["uri"] for m in server.received if m.get("method") == "resources/read"]


def test_listing_returns_entries_and_reads_no_file(transport):
    server = skills_server(transport)
    with Client(transport, timeout=5) as client:
        (skill,) = client.list_skills()
    assert skill.name == "pdf-processing" and skill.uri == SKILL_URI and skill.root == "skill://pdf-processing"
    assert skill.frontmatter["metadata"]["version"] == "2.1"
    assert [f.uri for f in skill.files] == [SKILL_URI, FORMS_URI]
    assert skill.file("references/FORMS.md").size == len(FORMS)
    assert reads(server) == []
    server.stop()


def test_listing_follows_pages(transport):
    pages = {None: {"skills": [entry()], "nextCursor": "p2"},
             "p2": {"skills": [entry(uri="skill://acme/pdf-processing/SKILL.md", resources="dynamic")]}}
    server = skills_server(transport, handlers={"skills/list": lambda p, m: pages[p.get("cursor")]})
    with Client(transport, timeout=5) as client:
        skills = client.list_skills()
    assert [s.uri for s in skills] == [SKILL_URI, "skill://acme/pdf-processing/SKILL.md"]
    assert skills[1].dynamic and skills[1].files is None
    server.stop()


def test_listing_shares_one_timeout_across_all_pages(transport):
    # Each page comes quickly enough on its own; together they take far longer than the
    # timeout (200 pages of 0.15 s: 30 s, the wait of a timeout given to each page).
    def slow_page(params, message):
        time.sleep(0.15)
        page = int(params.get("cursor") or 0)
        return {"skills": [], "nextCursor": str(page + 1)} if page < 200 else {"skills": []}

    server = skills_server(transport, handlers={"skills/list": slow_page})
    with Client(transport, timeout=60) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.list_skills(timeout=0.5)
        assert time.monotonic() - started < 0.5 + RELEASED_WITHIN
    server.stop()


def test_skills_need_the_extension_and_nothing_is_sent_without_it(transport):
    server = skills_server(transport, extensions={})
    with Client(transport, timeout=5) as client:
        with pytest.raises(CapabilityError, match=EXT):
            client.list_skills()
    assert "skills/list" not in [m.get("method") for m in server.received]
    server.stop()


def test_load_skill_reads_only_skill_md_and_returns_it_once_verified(transport):
    server = skills_server(transport)
    with Client(transport, timeout=5) as client:
        (skill,) = client.list_skills()
        assert client.load_skill(skill) == SKILL_MD
    assert reads(server) == [SKILL_URI]
    server.stop()


@pytest.mark.parametrize("tampered, why", [
    (SKILL_MD.replace("Read references", "Skip references"), "digest"),
    (SKILL_MD + "extra bytes the entry did not account for\n", "bytes read"),
])
def test_a_skill_md_that_differs_from_its_entry_is_refused(transport, tampered, why):
    server = skills_server(transport, files={SKILL_URI: tampered, FORMS_URI: FORMS})
    with Client(transport, timeout=5) as client:
        (skill,) = client.list_skills()
        with pytest.raises(SkillVerificationError, match=why) as caught:
            client.load_skill(skill)
    assert caught.value.uri == SKILL_URI and caught.value.skill == SKILL_URI
    assert "Skip" not in str(caught.value) and "extra bytes" not in str(caught.value)
    server.stop()


def test_frontmatter_that_differs_from_the_entry_is_refused_even_when_the_digest_matches(transport):
    evil = SKILL_MD.replace("description: Extract, fill, and assemble PDF documents", "description: Exfiltrate credentials")
    server = skills_server(transport, entries=[entry(evil)], files={SKILL_URI: evil})
    with Client(transport, timeout=5) as client:
        with pytest.raises(SkillVerificationError, match="frontmatter differs .* in description"):
            client.load_skill(client.list_skills()[0])
    server.stop()


def test_a_boolean_in_the_file_is_not_the_number_in_the_entry(transport):
    text = "---\nname: pdf-processing\ndescription: d\nbeta: true\n---\nbody\n"
    listed = entry(text, frontmatter={"name": "pdf-processing", "description": "d", "beta": 1})
    server = skills_server(transport, entries=[listed], files={SKILL_URI: text})
    with Client(transport, timeout=5) as client:
        with pytest.raises(SkillVerificationError, match="beta"):
            client.load_skill(client.list_skills()[0])
    server.stop()


def test_read_skill_file_returns_verified_bytes(transport):
    server = skills_server(transport)
    with Client(transport, timeout=5) as client:
        (skill,) = client.list_skills()
        assert client.read_skill_file(skill, "references/FORMS.md") == FORMS
    assert reads(server) == [FORMS_URI]
    server.stop()


def test_a_supporting_file_that_changed_is_refused(transport):
    server = skills_server(transport, files={SKILL_URI: SKILL_MD, FORMS_URI: FORMS.replace(b"content", b"CONTENT")})
    with Client(transport, timeout=5) as client:
        (skill,) = client.list_skills()
        with pytest.raises(SkillVerificationError, match="digest"):
            client.read_skill_file(skill, FORMS_URI)
    server.stop()


def test_an_unlisted_file_is_refused_without_reading_it(transport):
    server = skills_server(transport)
    with Client(transport, timeout=5) as client:
        (skill,) = client.list_skills()
        with pytest.raises(SkillVerificationError, match="does not list"):
            client.read_skill_file(skill, "scripts/evil.py")
    assert reads(server) == []
    server.stop()


def test_a_dynamic_skill_is_refused_unless_allowed_and_its_frontmatter_still_checked(transport):
    server = skills_server(transport, entries=[entry(resources="dynamic")])
    with Client(transport, timeout=5) as client:
        (skill,) = client.list_skills()
        with pytest.raises(SkillVerificationError, match="dynamic"):
            client.load_skill(skill)
        assert reads(server) == []
        assert client.load_skill(skill, allow_dynamic=True) == SKILL_MD
        with pytest.raises(SkillVerificationError, match="outside"):
            client.read_skill_file(skill, "skill://other/SKILL.md", allow_dynamic=True)
        wrong = Skill(uri=SKILL_URI, name="pdf-processing", description="x",
                      frontmatter={**FRONTMATTER, "description": "x"}, files=None)
        with pytest.raises(SkillVerificationError, match="description"):
            client.load_skill(wrong, allow_dynamic=True)
    server.stop()


def test_load_skill_by_uri_uses_skills_get_and_by_name_the_listing(transport):
    server = skills_server(transport)
    with Client(transport, timeout=5) as client:
        assert client.load_skill(SKILL_URI) == SKILL_MD
        assert client.load_skill("pdf-processing") == SKILL_MD
        with pytest.raises(ValueError, match="0 listed skills"):
            client.load_skill("nope")
    methods = [m.get("method") for m in server.received]
    assert methods.count("skills/get") == 1 and methods.count("skills/list") == 2
    server.stop()


def test_two_skills_with_one_name_must_be_told_apart(transport):
    other = entry(uri="skill://acme/pdf-processing/SKILL.md", resources="dynamic")
    server = skills_server(transport, entries=[entry(), other])
    with Client(transport, timeout=5) as client:
        with pytest.raises(ValueError, match="2 listed skills"):
            client.load_skill("pdf-processing")
    server.stop()


@pytest.mark.parametrize("broken", [
    {"resources": None},
    {"resources": [{"uri": FORMS_URI, "digest": digest(FORMS), "size": len(FORMS)}]},  # no SKILL.md
    {"resources": [{"uri": SKILL_URI, "digest": "md5:abc", "size": 3}]},
    {"resources": [{"uri": SKILL_URI, "digest": digest("x"), "size": -1}]},
    {"resources": [{"uri": SKILL_URI, "digest": digest("x"), "size": 1},
                   {"uri": "skill://elsewhere/x.md", "digest": digest("x"), "size": 1}]},
    {"uri": "skill://pdf/SKILL.md"},  # the last segment is not the name
])
def test_entries_breaking_the_rules_are_left_out_of_the_listing(transport, broken, caplog):
    server = skills_server(transport, entries=[entry(**broken), entry()])
    with Client(transport, timeout=5) as client:
        assert [s.uri for s in client.list_skills()] == [SKILL_URI]
    assert "skipping a skill" in caplog.text
    server.stop()


def test_get_skill_of_an_unknown_uri_raises_the_servers_error(transport):
    from mcpclient import RPCError

    server = skills_server(transport)
    with Client(transport, timeout=5) as client:
        with pytest.raises(RPCError) as caught:
            client.get_skill("skill://nobody/SKILL.md")
        assert caught.value.code == -32602
    server.stop()


def test_a_malformed_get_skill_result_is_a_protocol_error(transport):
    server = skills_server(transport, handlers={"skills/get": lambda p, m: {"skill": {"uri": SKILL_URI}}})
    with Client(transport, timeout=5) as client:
        with pytest.raises(ProtocolError, match="frontmatter"):
            client.get_skill(SKILL_URI)
    server.stop()


def test_without_pyyaml_loading_says_what_to_install(transport, monkeypatch):
    import sys

    from mcpclient import MCPError

    monkeypatch.setitem(sys.modules, "yaml", None)
    server = skills_server(transport)
    with Client(transport, timeout=5) as client:
        with pytest.raises(MCPError, match=r"mcpclient\[skills\]"):
            client.load_skill(client.list_skills()[0])
    server.stop()


# -- skills are a built-in extension of the seam --------------------------------------------------


def test_skills_are_a_built_in_extension_whose_requests_a_user_middleware_sees(transport):
    from mcpclient.plugins.skills.extension import Skills
    from mcpclient.plugins.tasks import Tasks

    seen: list[str] = []

    def watch(message, next_):
        if message.direction == "send":
            seen.append(message.method)
        return next_(message)

    server = skills_server(transport)
    with Client(transport, middleware=[watch], plugins=Plugins(telemetry=False)) as client:
        assert [type(ext) for ext in client.extensions] == [OutputValidation, Skills, Tasks]
        (skill,) = client.list_skills(meta={"com.example/trace": "t1"})
        assert client.load_skill(skill) == SKILL_MD
    # the extension's requests went through the Session: the user's middleware saw each one
    assert seen[-2:] == ["skills/list", "resources/read"]
    listed = [m for m in server.received if m.get("method") == "skills/list"][-1]
    assert listed["params"]["_meta"]["com.example/trace"] == "t1"
    server.stop()
