"""``AppResult``: the ``ToolResult`` of a client with MCP Apps on, which knows its call."""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from ... import types as t
from ..._client.app_views import AppCall
from .widget import mimebundle

__all__ = ["AppResult"]


@frozen(kw_only=True)
class AppResult(t.ToolResult):
    """A ``ToolResult`` from a client with ``apps=True``: it knows the call that made it.

    In a live Jupyter front end (with the ``apps`` extra) it renders as the tool's view, if
    the tool has one; anywhere else, and for a tool without a view, it shows as a plain
    ``ToolResult``. It is a ``ToolResult`` in every other respect.
    """

    call: AppCall = field(eq=False, repr=False)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any] | None:
        return mimebundle(self, self.call)
