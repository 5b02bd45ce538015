"""The conformance suite's client scenarios for the skills extension (SEP-2640).

Each behaves like an application that shows the user the server's skills and loads one when
asked: it lists skills (reading no file), and in the verify scenarios loads the listed skill
and then reads its supporting files, which it must never reach when SKILL.md fails
verification. The mock servers judge: ``sep-2640-client-no-prefetch`` that listing reads
nothing, ``sep-2640-client-verify-{digest,size,frontmatter}`` that a tampered SKILL.md stops
the load before any supporting file is read.

``tests/conformance/client.py`` dispatches here with ``SCENARIOS.update(scenarios(connect))``.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from mcpclient import Client, SkillVerificationError

log = logging.getLogger("conformance-client")

Connect = Callable[..., Client]
Run = Callable[[str, str, dict[str, Any]], None]


def browse(client: Client) -> None:
    """List the skills, as a skill picker would: no file is read."""
    for skill in client.list_skills():
        log.info("skill %s (%s): %s", skill.name, skill.uri, skill.description)


def load_everything(client: Client) -> None:
    """Load each listed skill, then read its supporting files; a failed check stops that skill."""
    for skill in client.list_skills():
        try:
            text = client.load_skill(skill)
        except SkillVerificationError as exc:
            log.warning("not loading skill %s: %s", skill.name, exc)
            continue
        log.info("loaded %s (%d characters)", skill.uri, len(text))
        for listed in skill.files or ():
            if listed.uri != skill.uri:
                data = client.read_skill_file(skill, listed.uri)
                log.info("read %s (%d bytes)", listed.uri, len(data))


def scenarios(connect: Connect) -> dict[str, Run]:
    """The skills scenarios, bound to the harness's ``connect(url, version)``."""

    def run_browse(url: str, version: str, context: dict[str, Any]) -> None:
        with connect(url, version) as client:
            browse(client)

    def run_load(url: str, version: str, context: dict[str, Any]) -> None:
        with connect(url, version) as client:
            load_everything(client)

    return {
        "sep-2640-client-no-prefetch": run_browse,
        "sep-2640-client-verify-digest": run_load,
        "sep-2640-client-verify-size": run_load,
        "sep-2640-client-verify-frontmatter": run_load,
    }
