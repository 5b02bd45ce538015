"""What a blocking call checks as it starts, before anything is sent.

* ``check_progress_callback``: an ``on_progress`` that cannot take ``(progress, total,
  message)`` is a ``TypeError`` at once, not a traceback in the log at each progress notice.
* ``warn_if_on_event_loop``: a blocking call made on the thread of a running asyncio event
  loop (an ASGI app's handler, a coroutine) stalls the loop until it returns; say so once per
  process, with ``warnings`` (the application can avoid it: ``asyncio.to_thread``).
"""

from __future__ import annotations

import sys
import threading
import warnings
from typing import Any

__all__ = ["check_progress_callback", "first_frame_outside", "warn_if_on_event_loop"]

_warned = False


def check_progress_callback(on_progress: Any) -> None:
    """Raise ``TypeError`` unless ``on_progress(progress, total, message)`` can be called.

    A callable whose signature cannot be read (some builtins) is taken as it is."""
    if not callable(on_progress):
        raise TypeError(f"on_progress must be callable as on_progress(progress, total, message), "
                        f"got {type(on_progress).__name__}")
    import inspect  # here, not at import: only calls that report progress pay for it

    try:
        signature = inspect.signature(on_progress)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(0.0, None, None)
    except TypeError as exc:
        name = getattr(on_progress, "__qualname__", None) or type(on_progress).__name__
        raise TypeError(
            f"on_progress is called with three arguments, on_progress(progress, total, message), "
            f"and {name}{signature} cannot take them ({exc}): give it three parameters, e.g. "
            f"lambda progress, total, message: ..."
        ) from None


def warn_if_on_event_loop(method: str) -> None:
    """Warn, once per process, when this thread runs an asyncio event loop: the blocking call
    ``method`` stalls every task of that loop until it returns.

    A Jupyter kernel's cells are the exception: a cell holds the kernel's loop whatever it
    does, and blocking calls in cells are what this client is for."""
    global _warned
    if _warned:
        return
    asyncio = sys.modules.get("asyncio")
    if asyncio is None or asyncio.events._get_running_loop() is None:
        return
    if "ipykernel" in sys.modules and threading.current_thread() is threading.main_thread():
        return
    _warned = True
    warnings.warn(
        f"mcpclient: a blocking {method!r} runs on the thread of a running asyncio event loop, which "
        "serves nothing else until it returns; run the call in a thread instead: "
        "await asyncio.to_thread(client.call_tool, ...) (see docs/threading.md). Said once.",
        RuntimeWarning, stacklevel=first_frame_outside(),
    )


def first_frame_outside() -> int:
    """The ``stacklevel`` of the first caller outside mcpclient, seen from the function that
    calls ``warnings.warn`` (and this): a warning then names the user's line, however deep in
    mcpclient it is raised."""
    package = __name__.partition(".")[0]
    frame = sys._getframe(1)  # the warning function's: stacklevel 1
    level = 1
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != package and not module.startswith(package + "."):
            return level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return 1
