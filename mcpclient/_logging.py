"""Where server log messages (``notifications/message``) go."""

from __future__ import annotations

import json
import logging
from typing import Any, Callable

from . import types as t

__all__ = ["LOG_LEVELS", "LogRouter"]

#: MCP's syslog-style levels, least severe first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

_PYTHON_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

#: The logger server messages go to by default; a server's ``logger`` name becomes a child.
SERVER_LOGGER = "mcpclient.server"


class LogRouter:
    """Routes each server log message to a user callback, or to Python logging."""

    def __init__(self) -> None:
        self.handler: Callable[[str, Any, str | None], None] | None = None

    def route(self, params: dict[str, Any], server: t.Implementation | None) -> None:
        level = params.get("level")
        level = level if isinstance(level, str) and level in _PYTHON_LEVELS else "info"
        data = params.get("data")
        name = params.get("logger")
        name = name if isinstance(name, str) and name else None
        if self.handler is not None:
            self.handler(level, data, name)
            return
        logger = logging.getLogger(f"{SERVER_LOGGER}.{name}" if name else SERVER_LOGGER)
        python_level = _PYTHON_LEVELS[level]
        if logger.isEnabledFor(python_level):
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=repr)
            logger.log(python_level, "[%s] %s", server.name if server and server.name else "server", text)
