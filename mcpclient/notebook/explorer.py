"""The notebook explorer: pick a server and a tool, fill its form, run it, see the result.

An anywidget (``pip install 'mcpclient[apps]'``). The kernel side holds the client and does
everything that touches the server; the front end (``page.ESM``) only draws and relays. What
it is given of the server (the server's and tools' names, titles, descriptions, the form's
labels) is cleaned text (``forms``); the result is HTML that passed the sanitiser
(``results.result_html``, nh3).

A run is one ``client.call_tool`` on a thread of its own, so the cell that showed the widget
has ended and the kernel still reads the widget's messages: the Cancel button reaches the
call's ``CancelToken`` (the client's real cancel: the server is told), and the server's
progress moves the bar. The call ends by its result, its timeout, the cancel, or the client's
``close()``. "Copy as code" writes the ``client.call_tool(...)`` cell for what the form holds,
puts it on the clipboard where the browser allows, shows it, and keeps it for ``%mcp code``,
which inserts it as the next cell.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Mapping

from .. import types as t
from .._client.client import Client
from .._core.cancel import CancelToken
from .._core.exceptions import MCPError, RequestCancelled
from .._core.source import is_name
from .._core.text import clean
from .forms import FormField, fields_of, read_form
from .page import ESM
from .results import call_code, result_html, table

__all__ = ["explorer"]

log = logging.getLogger(__name__)

#: Opens the server a person typed in the server box: (client, its name to show), or raises
#: ``TargetError``.
Opener = Callable[[str], "tuple[Client, str]"]



def _by_shown_name(tools: list[t.ToolDef]) -> dict[str, t.ToolDef]:
    """The tools by the name the page shows (cleaned; made distinct): the page names a tool by it."""
    found: dict[str, t.ToolDef] = {}
    for tool in tools:
        shown = base = clean(tool.name, 200)
        count = 1
        while shown in found:
            count += 1
            shown = f"{base} ({count})"
        found[shown] = tool
    return found


def _widget_class() -> Any:
    import anywidget
    import traitlets

    class Explorer(anywidget.AnyWidget):
        """The explorer of one client's tools (``explorer()`` makes one)."""

        _esm = ESM
        target = traitlets.Unicode("").tag(sync=True)
        server = traitlets.Unicode("").tag(sync=True)
        tools: Any = traitlets.List([]).tag(sync=True)
        tool = traitlets.Unicode("").tag(sync=True)
        description = traitlets.Unicode("").tag(sync=True)
        fields: Any = traitlets.List([]).tag(sync=True)
        problems = traitlets.Dict({}).tag(sync=True)
        status = traitlets.Unicode("idle").tag(sync=True)
        message = traitlets.Unicode("").tag(sync=True)
        progress = traitlets.Float(0.0).tag(sync=True)
        result_html = traitlets.Unicode("").tag(sync=True)
        code = traitlets.Unicode("").tag(sync=True)

        def __init__(self, client: Client | None, *, name: str, server: str = "", opener: Opener | None = None,
                     target: str = "") -> None:
            super().__init__(target=target)
            self.client: Client | None = None
            self.client_name = name
            self.opener = opener
            #: The last run's ``ToolResult`` and its table (``results.table``), for the next cell.
            self.result: t.ToolResult | None = None
            self.table: Any = None
            self.error: BaseException | None = None
            self._defs: dict[str, t.ToolDef] = {}
            self._fields: list[FormField] = []
            self._token: CancelToken | None = None
            self._thread: threading.Thread | None = None
            self._lock = threading.Lock()
            self.observe(self._tool_chosen, names="tool")
            self.on_msg(self._on_front_end)
            if client is not None:
                self.use(client, server)

        def _say(self, status: str, message: str) -> None:
            with self.hold_sync():  # one update: the state and its words together
                self.status, self.message = status, message

        # -- the server and its tools

        def use(self, client: Client, server: str = "") -> None:
            """Explore ``client``'s tools; beside the box the server's name and version (or ``server``)."""
            tools = client.list_tools()
            info = client.server_info
            self.client = client
            self._defs = _by_shown_name(tools)
            first = next(iter(self._defs), "")
            with self.hold_sync():
                self.server = clean(f"{info.name} {info.version}" if info else server, 200)
                self.tools = [{"name": shown, "title": clean(tool.title or "", 200)} for shown, tool in self._defs.items()]
                self._say("idle", f"{len(tools)} tools")
                if self.tool == first:
                    self._show_tool(first)
                self.tool = first

        def _tool_chosen(self, change: Any) -> None:
            self._show_tool(change["new"])

        def _show_tool(self, name: str) -> None:
            tool = self._defs.get(name)
            self._fields = fields_of(tool.input_schema) if tool else []
            self.problems = {}
            self.code = ""
            self.description = clean(tool.description or "", 2000) if tool else ""
            self.fields = [f.spec() for f in self._fields]

        # -- what the front end asks

        def _on_front_end(self, _widget: Any, content: Any, _buffers: Any) -> None:
            if not isinstance(content, dict):
                return
            kind = content.get("kind")
            values: dict[str, Any] = content["values"] if isinstance(content.get("values"), dict) else {}
            if kind == "connect" and isinstance(content.get("target"), str):
                self.connect(content["target"])
            elif kind == "run":
                self.run(values)
            elif kind == "cancel":
                self.cancel()
            elif kind == "code":
                self.copy_code(values)

        def connect(self, text: str) -> None:
            """Open the server ``text`` names (on a thread) and explore it."""
            if self.opener is None:
                self._say("error", "this explorer shows a client of yours: run %mcp explore SERVER for another server")
                return
            opener = self.opener
            self.target = text
            self._say("connecting", "connecting...")

            def work() -> None:
                try:
                    client, shown = opener(text)
                    self.use(client, shown)
                except (MCPError, ValueError, OSError) as exc:
                    self._say("error", clean(exc, 500))
            threading.Thread(target=work, name="mcpclient-explorer-connect", daemon=True).start()

        def _arguments(self, values: Mapping[str, Any]) -> dict[str, Any] | None:
            arguments, problems = read_form(self._fields, values)
            self.problems = problems
            if problems:
                self._say("invalid", "check the fields marked in red")
                return None
            return arguments

        def copy_code(self, values: Mapping[str, Any]) -> str | None:
            """The ``client.call_tool(...)`` cell for what the form holds (shown and kept)."""
            arguments = self._arguments(values)
            tool = self._defs.get(self.tool)
            if arguments is None or tool is None:
                return None
            self.code = call_code(self.client_name, tool.name, arguments)
            return self.code

        def run(self, values: Mapping[str, Any]) -> bool:
            """Start the chosen tool with the form's ``values``; False if the form is not valid."""
            client, tool = self.client, self._defs.get(self.tool)
            arguments = self._arguments(values)
            if client is None or arguments is None or tool is None:
                return False
            name = tool.name
            with self._lock:
                if self._thread is not None and self._thread.is_alive():
                    return False
                self._token = token = CancelToken()
                with self.hold_sync():
                    self.progress, self.result_html = -1.0, ""
                    self._say("running", f"running {clean(name, 200)}...")
                self._thread = threading.Thread(target=self._call, args=(client, name, arguments, token),
                                                name="mcpclient-explorer-call", daemon=True)
                self._thread.start()
            return True

        def _progress(self, progress: float, total: float | None, message: str | None) -> None:
            with self.hold_sync():  # one update: the bar and its words together
                self.progress = min(1.0, progress / total) if total else -1.0
                self.message = clean(message or f"{progress:g}" + (f" of {total:g}" if total else ""), 300)

        def _call(self, client: Client, name: str, arguments: dict[str, Any], token: CancelToken) -> None:
            try:
                result = client.call_tool(name, arguments, on_progress=self._progress, cancel=token)
            except RequestCancelled:
                self._say("cancelled", "cancelled")
                return
            except MCPError as exc:
                self.error = exc
                self._say("error", clean(exc, 500))
                return
            except Exception as exc:  # a bug of ours: shown, logged, never lost in a thread
                log.exception("the explorer's call of %r failed", clean(name, 200))
                self.error = exc
                self._say("error", clean(exc, 500))
                return
            self.result, self.table = result, table(result)
            with self.hold_sync():
                self.result_html = result_html(result)
                self._say("error" if result.is_error else "done",
                          "the tool reported an error" if result.is_error else "done")

        def cancel(self) -> None:
            """Cancel the running call (the server is told); nothing when none runs."""
            token = self._token
            if token is not None:
                token.cancel("cancelled in the explorer")

        def wait(self, timeout: float | None = None) -> bool:
            """Wait for the running call to end; whether it has."""
            thread = self._thread
            if thread is not None:
                thread.join(timeout)
                return not thread.is_alive()
            return True

    return Explorer


_CLASS: Any = None


def explorer(client: Client | None = None, *, name: str = "client", server: str = "",
             opener: Opener | None = None, target: str = "") -> Any:
    """An ``Explorer`` widget for ``client`` (or, with ``opener``, for the server typed in its box).

    ``name`` is the variable the copied code calls (``client.call_tool(...)``): a Python name
    (else ``ValueError``). Needs anywidget (the ``apps`` extra); raises ``ImportError`` saying so.
    """
    global _CLASS
    if not is_name(name):
        raise ValueError(f"{name!r} is not a Python variable name")
    if _CLASS is None:
        try:
            _CLASS = _widget_class()
        except ImportError as exc:
            raise ImportError("the explorer needs anywidget: pip install 'mcpclient[apps]'") from exc
    return _CLASS(client, name=name, server=server, opener=opener, target=target)

