"""The "not given" timeout sentinel shared by every blocking call."""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT", "DEFAULT_TIMEOUT"]

#: The timeout of every call unless the client or the call says otherwise, in seconds.
DEFAULT_TIMEOUT = 60.0


class _Default:
    def __repr__(self) -> str:
        return "<default>"


#: "Not given": use the client's timeout. (None means "no limit".)
DEFAULT: Any = _Default()
