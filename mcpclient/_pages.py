"""Pagination: every ``*/list`` request followed to its last page, within one time budget.

One helper for tools, resources, templates, prompts, tasks and skills, so that each keeps the
same bounds: the whole listing shares the caller's timeout (a server cannot stretch it page
by page), a server that repeats a cursor or paginates without end is stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from ._exceptions import ProtocolError
from ._rpc.cancel import Cancel
from ._timeouts import Deadline

if TYPE_CHECKING:
    from ._conversation import Conversation

__all__ = ["MAX_PAGES", "pages"]

#: A server that keeps paginating past this many pages is treated as broken.
MAX_PAGES = 10_000


def pages(session: Conversation, method: str, timeout: float | None, cancel: Cancel | None = None) -> Iterator[dict[str, Any]]:
    """Yield each page ``method`` returns, first to last, all within ``timeout`` seconds.

    Raises ``ProtocolError`` when the server repeats a cursor (or sends one that is not a
    string) or goes past ``MAX_PAGES``, and what ``Conversation.call`` raises.
    """
    deadline = Deadline(timeout)
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        params = {"cursor": cursor} if cursor is not None else None
        page = session.call(method, params, timeout=deadline.remaining(), cancel=cancel)
        yield page
        cursor = page.get("nextCursor")
        if cursor is None or cursor == "":
            return
        if not isinstance(cursor, str) or cursor in seen:
            raise ProtocolError(f"the server repeated the {method!r} cursor {cursor!r}; stopping")
        seen.add(cursor)
    raise ProtocolError(f"the server paginated {method!r} past {MAX_PAGES} pages; stopping")
