"""What every reading of a server shares, whoever reads (the client core, or a plug-in through
its ``Session``): a listing followed page by page, and a resource the server does not have.

``walk_pages`` follows a ``*/list`` request to its last page within one time budget: the
whole listing shares the caller's timeout (a server cannot stretch it page by page), and a
server that repeats a cursor or paginates without end is stopped. ``resource_not_found``
reads each way real servers say that a ``resources/read`` named nothing they have.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator

from .._core.exceptions import ProtocolError, ResourceNotFound, RPCError
from .._core.timeouts import Deadline

__all__ = ["MAX_PAGES", "resource_not_found", "walk_pages"]

#: A server that keeps paginating past this many pages is treated as broken.
MAX_PAGES = 10_000

#: How servers word "no such resource" in a -32602 error when they put the URI in the message
#: only (the TypeScript SDK's servers: "Resource demo://x not found").
_NOT_FOUND_WORDS = re.compile(r"not found|unknown resource|no such resource|does(?: not|n't) exist", re.IGNORECASE)


def walk_pages(
    method: str, timeout: float | None, fetch: Callable[[dict[str, Any] | None, float | None], dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """Yield each page of ``method``, first to last, all within ``timeout`` seconds:
    ``fetch(params, seconds_left)`` gets one (``params`` holds the cursor, None for the first).

    Raises ``ProtocolError`` when the server repeats a cursor (or sends one that is not a
    string) or goes past ``MAX_PAGES``, and what ``fetch`` raises.
    """
    deadline = Deadline(timeout)
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        params = {"cursor": cursor} if cursor is not None else None
        page = fetch(params, deadline.remaining())
        yield page
        cursor = page.get("nextCursor")
        if cursor is None or cursor == "":
            return
        if not isinstance(cursor, str) or cursor in seen:
            raise ProtocolError(f"the server repeated the {method!r} cursor {cursor!r}; stopping")
        seen.add(cursor)
    raise ProtocolError(f"the server paginated {method!r} past {MAX_PAGES} pages; stopping")


def resource_not_found(exc: RPCError, uri: str) -> RPCError:
    """``ResourceNotFound`` for each way real servers say it to a ``resources/read``: the spec's
    -32002; -32602 with ``data.uri`` (the Python SDK); -32602 naming the URI in a not-found
    message (the TypeScript SDK, server-everything). Any other error is returned as it is."""
    data = exc.data if isinstance(exc.data, dict) else {}
    named = data.get("uri") == uri or (uri in exc.message and _NOT_FOUND_WORDS.search(exc.message) is not None)
    if exc.code == RPCError.RESOURCE_NOT_FOUND or (exc.code == RPCError.INVALID_PARAMS and named):
        return ResourceNotFound(exc.code, exc.message, exc.data, method=exc.method, request_id=exc.request_id)
    return exc
