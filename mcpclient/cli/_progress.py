"""A progress bar for tool calls that report progress: tqdm when installed, else a line.

The label and the server's progress messages are shown cleaned (``_text.clean``, cut to
``MESSAGE`` characters): a message cannot move the cursor nor break the bar's line.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
from typing import Any, Callable, TextIO

from .._core.text import clean

__all__ = ["Progress", "supports_progress"]

ProgressCallback = Callable[[float, "float | None", "str | None"], None]
#: How much of a label or a progress message is shown.
MESSAGE = 200


def supports_progress(call_tool: Callable[..., Any]) -> bool:
    """Whether this client's ``call_tool`` takes ``on_progress`` (newer mcpclient)."""
    try:
        return "on_progress" in inspect.signature(call_tool).parameters
    except (TypeError, ValueError):
        return False


class Progress:
    """Shows progress on ``stream`` (a terminal); ``callback`` is ``on_progress``.

    Uses ``tqdm`` (the ``cli`` extra) if it is installed, else rewrites one line. Use it as a
    context manager so the bar is closed when the call ends.
    """

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = clean(label, MESSAGE)
        self.stream = stream or sys.stderr
        self._bar: Any = None
        self._lock = threading.Lock()
        self._shown = False
        try:
            self._tqdm: Any = importlib.import_module("tqdm").tqdm
        except ImportError:
            self._tqdm = None

    def callback(self, progress: float, total: float | None, message: str | None) -> None:
        with self._lock:
            if self._tqdm is not None:
                if self._bar is None:
                    self._bar = self._tqdm(total=total, desc=self.label, file=self.stream, leave=False)
                if total is not None and self._bar.total != total:
                    self._bar.total = total
                self._bar.n = progress
                if message:
                    self._bar.set_postfix_str(clean(message, MESSAGE), refresh=False)
                self._bar.refresh()
                return
            of = f"/{total:g}" if total is not None else ""
            self.stream.write(f"\r{self.label}: {progress:g}{of} {clean(message or '', MESSAGE)}\x1b[K")
            self.stream.flush()
            self._shown = True

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
            elif self._shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
