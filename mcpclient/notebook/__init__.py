"""Jupyter niceties: results render as HTML on their own; this adds lists, ``%mcp`` and the explorer.

``ToolResult``, ``ResourceContents``, ``PromptMessage`` and ``ToolDef`` display as HTML (text,
images as data URIs, errors in red, everything from the server escaped) with no setup. Lists,
as ``client.list_tools()`` returns them, are plain Python lists; to show them as HTML too::

    %load_ext mcpclient.notebook          # or: mcpclient.notebook.enable()

The extension also registers the ``%mcp`` magic (``mcpclient.notebook.magics``): ``%mcp
explore SERVER`` shows the explorer (``mcpclient.notebook.explorer``), a widget to pick a tool,
fill a form made from its ``inputSchema``, run it with a progress bar and a cancel button,
see the result, and copy the call as code.

A client opened in one cell keeps working in the next: its reader is a daemon thread, not
an event loop tied to the cell.
"""

from __future__ import annotations

from typing import Any

from .. import types as t
from .._display.html import to_html
from .explorer import explorer
from .magics import register

__all__ = ["enable", "explorer", "load_ipython_extension"]

_SHOWN = (t.ToolDef, t.ToolResult, t.ResourceContents, t.PromptMessage, t.Prompt, t.Resource)


def _list_html(value: Any) -> str | None:
    if value and all(isinstance(v, _SHOWN) for v in value):
        return to_html(value)
    return None  # IPython then falls back to the plain repr


def load_ipython_extension(ipython: Any) -> None:
    """Register an HTML formatter for lists of mcpclient values and the ``%mcp`` magic (``%load_ext``)."""
    formatter = ipython.display_formatter.formatters["text/html"]
    formatter.for_type(list, _list_html)
    register(ipython)


def enable() -> bool:
    """Do what ``%load_ext mcpclient.notebook`` does; False when not inside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ipython = get_ipython()
    if ipython is None:
        return False
    load_ipython_extension(ipython)
    return True
