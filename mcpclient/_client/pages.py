"""Pagination: every ``*/list`` request followed to its last page, within one time budget.

``pages`` is the client core's (tools, resources, templates, prompts), over the conversation;
a plug-in's listings (tasks, skills) go through ``Session.pages``. Both walk the pages with
``_protocol.reads.walk_pages``, so each keeps the same bounds: the whole listing shares the
caller's timeout (a server cannot stretch it page by page), a server that repeats a cursor
or paginates without end is stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Iterator, TypeVar

import attrs

from .._core.exceptions import ProtocolError
from .._core.options import CallOptions
from .._protocol.reads import MAX_PAGES, walk_pages

if TYPE_CHECKING:
    from .conversation import Conversation

__all__ = ["ALL_PAGES", "MAX_PAGES", "Page", "page_cursor", "pages"]

T = TypeVar("T")


class _AllPages:
    def __repr__(self) -> str:
        return "<all pages>"


#: The default of ``list_*(cursor=...)``: every page. Any string, or None (the first page),
#: asks for one page instead.
ALL_PAGES: Any = _AllPages()


@attrs.frozen(kw_only=True)
class Page(Generic[T]):
    """One page of a listing: its ``items``, and the cursor of the next (None after the last)."""

    items: list[T]
    next_cursor: str | None = None


def page_cursor(page: dict[str, Any], method: str) -> str | None:
    """The ``nextCursor`` of one page; None (or "") means it was the last."""
    cursor = page.get("nextCursor")
    if cursor is None or cursor == "":
        return None
    if not isinstance(cursor, str):
        raise ProtocolError(f"the server's {method!r} nextCursor is not a string: {cursor!r:.100}")
    return cursor


def pages(conversation: Conversation, method: str, options: CallOptions) -> Iterator[dict[str, Any]]:
    """Yield each page ``method`` returns, first to last, all within ``options.timeout`` seconds
    (each page's request with what is left of it, the listing's ``cancel`` and ``meta``).

    Raises ``ProtocolError`` when the server repeats a cursor (or sends one that is not a
    string) or goes past ``MAX_PAGES``, and what ``Conversation.call`` raises.
    """

    def fetch(params: dict[str, Any] | None, left: float | None) -> dict[str, Any]:
        return conversation.call(method, params, CallOptions(left, cancel=options.cancel, meta=options.meta))

    return walk_pages(method, options.timeout, fetch)
