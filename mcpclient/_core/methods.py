"""What the protocol says about methods that every layer needs: which change nothing.

One list, read by the conversation (a request whose reply stream broke is sent again once,
and the HTTP transports may send again one that broke before any reply: the conversation
marks it ``SendOptions.resendable``) and by ``SharedClient(retry="safe")``; and one rule for
tools, which change nothing when their annotations say so (the client's calls of such a tool
are marked the same way).
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["CHANGE_NOTHING", "resendable_tool"]

#: Requests that change nothing on the server: safe to send again when it is not known
#: whether the first one arrived (``tools/call`` is one only for a tool ``resendable_tool``
#: accepts).
CHANGE_NOTHING = frozenset({
    "server/discover", "ping", "tools/list", "prompts/list", "resources/list",
    "resources/templates/list", "resources/read", "prompts/get", "completion/complete",
})


def resendable_tool(annotations: Mapping[str, Any] | None) -> bool:
    """Whether a tool with these annotations (``ToolDef.annotations``) may run twice harmlessly:
    ``readOnlyHint`` or ``idempotentHint`` is true."""
    if not isinstance(annotations, Mapping):
        return False
    return annotations.get("readOnlyHint") is True or annotations.get("idempotentHint") is True
