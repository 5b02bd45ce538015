"""The interfaces through which ``Client``'s feature methods reach a built-in extension.

A ``Client`` method that belongs to a feature (``read_ui_resource`` is MCP Apps') stays on
``Client`` for compatibility and delegates: it asks its ``Seam`` for the extension that
implements the feature's interface (``Seam.feature(UIViews)``) and calls it, or says how to
turn the feature on. The interfaces are declared here, with the data types they return, so
the client core knows the interface of a feature and never the module that implements it.
"""

from __future__ import annotations

import abc
from typing import Any, Mapping

from . import types as t
from ._app_views import UIResource
from ._skill_model import Skill

__all__ = ["Skill", "SkillsFeature", "ToolOutputs", "UIResource", "UIViews"]

#: Extra ``_meta`` keys of one call (``Client``'s ``meta=``).
Meta = Mapping[str, Any] | None


class UIViews(abc.ABC):
    """MCP Apps: the views of tools (``Client.read_ui_resource``)."""

    #: What the Client says when no extension implements the interface.
    missing = "MCP Apps are off for this client: create it with apps=True"

    @abc.abstractmethod
    def read_ui_resource(self, uri: str, timeout: float | None) -> UIResource:
        """The view at ``uri`` with its ``_meta.ui``, read once per connection."""


class ToolOutputs(abc.ABC):
    """Output validation: a tool's result checked against the ``outputSchema`` it was listed
    with (``Task.result``; ``call_tool``'s results are checked in the extension's ``result`` hook)."""

    @abc.abstractmethod
    def check(self, tool: str, result: t.ToolResult) -> t.ToolResult:
        """``result`` with its tool's schema attached, checked as the client's mode says."""


class SkillsFeature(abc.ABC):
    """Skills over MCP: ``Client.list_skills``, ``get_skill``, ``load_skill``, ``read_skill_file``.

    Timeouts come resolved (the Client resolves ``DEFAULT``); see those methods for the rest.
    """

    missing = "this client has no skills extension (it was made without the built-in ones)"

    @abc.abstractmethod
    def list_skills(self, timeout: float | None, meta: Meta = None) -> list[Skill]:
        """Every skill the server lists, all pages; no file is read."""

    @abc.abstractmethod
    def get_skill(self, uri: str, timeout: float | None, meta: Meta = None) -> Skill:
        """The entry of the skill whose SKILL.md is at ``uri``."""

    @abc.abstractmethod
    def load_skill(self, skill: Skill | str, allow_dynamic: bool, timeout: float | None, meta: Meta = None) -> str:
        """A skill's SKILL.md, verified against its entry."""

    @abc.abstractmethod
    def read_skill_file(
        self, skill: Skill, path: str, allow_dynamic: bool, timeout: float | None, meta: Meta = None
    ) -> bytes:
        """One file of ``skill``, verified against its entry."""
