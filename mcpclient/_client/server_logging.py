"""Where server log messages (``notifications/message``) go.

To Python logging, unless the user set a callback: ``mcpclient.server``, or a child of it named
after the server's ``logger`` field (``mcpclient.server.db``). Python never frees a logger, so
a server naming a new logger in every message would grow the process without end: only the
first ``MAX_SERVER_LOGGERS`` distinct plain names (letters, digits, ``_``, ``-`` and ``.``
between them, at most ``MAX_NAME`` characters) get a child logger in a process. Any other name
is logged on ``mcpclient.server`` itself, the name shown in the message. Every record carries
the server's logger name, cleaned and bounded, as ``record.mcp_logger`` (None without one).

The message is ``[server name] data`` (``[server name/logger] data`` on the shared logger),
each part cleaned by ``_text.clean``: a newline in the data cannot forge a log line, an escape
sequence cannot reach the terminal that shows the log.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any, Callable

from .. import types as t
from .._core.text import clean

__all__ = ["LOG_LEVELS", "LogRouter", "MAX_NAME", "MAX_SERVER_LOGGERS", "SERVER_LOGGER"]

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
#: How many server logger names get a child logger of their own, in one process.
MAX_SERVER_LOGGERS = 64
#: The longest server logger name kept (in the message, ``mcp_logger`` and a child's name).
MAX_NAME = 64
#: At most three dots: each level of a dotted name is a logger of Python's too.
_PLAIN = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+){0,3}")
#: A server's message data is cut to this many characters in a log line.
MAX_DATA = 10_000

_children: set[str] = set()
_children_lock = threading.Lock()


def _logger_for(name: str | None) -> tuple[logging.Logger, bool]:
    """The logger for a server's logger ``name``, and whether it is a child of its own."""
    if name is None:
        return logging.getLogger(SERVER_LOGGER), False
    if len(name) <= MAX_NAME and _PLAIN.fullmatch(name):
        with _children_lock:
            if name in _children or len(_children) < MAX_SERVER_LOGGERS:
                _children.add(name)
                return logging.getLogger(f"{SERVER_LOGGER}.{name}"), True
    return logging.getLogger(SERVER_LOGGER), False


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
        logger, own = _logger_for(name)
        python_level = _PYTHON_LEVELS[level]
        if logger.isEnabledFor(python_level):
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=repr)
            source = clean(server.name if server and server.name else "server", 200)
            shown_name = None if name is None else clean(name, MAX_NAME)
            if shown_name is not None and not own:
                source += "/" + shown_name
            logger.log(python_level, "[%s] %s", source, clean(text, MAX_DATA), extra={"mcp_logger": shown_name})
