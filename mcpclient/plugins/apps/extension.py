"""``Apps``: MCP Apps (SEP-1865) as an extension of the public seam.

It declares ``io.modelcontextprotocol/ui`` (with the one view type mcpclient renders) through
``identifier`` and ``settings``, learns the tools from each ``tools/list`` result, turns each
``tools/call`` result into an ``AppResult`` (through ``Extension.result``), and is the
``AppHost`` of the views shown: their requests go through its ``Session``, on the session's
pool, and they are torn down when the client closes. ``Plugins(apps=True)`` adds one.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Mapping, Sequence

from ... import types as t
from ..._client.app_views import EXTENSION, MIME_TYPE, AppCall, AppHost, UIResource, content_security_policy
from ..._client.features import UIViews
from ..._core.exceptions import ClientClosedError, ProtocolError
from ..._core.timeouts import DEFAULT_TIMEOUT
from ..._core.version import __version__
from ...extensions import Call, Extension, Options, Session
from .result import AppResult

__all__ = ["Apps"]

log = logging.getLogger("mcpclient")


class Apps(Extension, UIViews, AppHost):
    """The MCP Apps extension of one Client: the tools seen, the views read, the live views.

    ``timeout`` bounds each request a shown view makes (its tool calls and reads), as the
    client's ``timeout`` bounds a call; ``Plugins(apps=True)`` passes the client's. Views are
    read once per connection (a restart reads them again).
    """

    identifier = EXTENSION
    result_methods = frozenset({"tools/call", "tools/list"})

    def __init__(self, *, timeout: float | None = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self._lock = threading.Lock()
        self._session: Session | None = None
        self._views: dict[str, UIResource] = {}
        self._tools: dict[str, t.ToolDef] = {}
        self._closers: list[Callable[[], None]] = []
        self._closed = False
        self.version = __version__

    def __repr__(self) -> str:
        return f"<Apps {len(self._views)} view(s) read>"

    # -- the seam's hooks --------------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [MIME_TYPE]}

    def bind(self, session: Session) -> None:
        with self._lock:  # a new connection: what the last one told us may be out of date
            self._session = session
            self._views = {}
            self._tools = {}

    def result(self, call: Call, value: Any) -> Any:
        if call.method == "tools/list" and isinstance(value, list):
            self._learn(value)
        elif call.method == "tools/call" and isinstance(value, t.ToolResult) and call.name is not None:
            return AppResult(
                content=value.content, is_error=value.is_error, structured_content=value.structured_content,
                meta=value.meta, call=AppCall(host=self, tool=call.name, arguments=dict(call.arguments or {})),
            )
        return value

    def close(self) -> None:
        """Tear down every view still shown, while the connection can still tell them."""
        with self._lock:
            self._closed = True
            closers, self._closers = self._closers, []
        for closer in closers:
            try:
                closer()
            except Exception:  # a view's teardown must not stop the client's close
                log.exception("tearing down an MCP App view failed")

    # -- UIViews: what Client.read_ui_resource asks ------------------------------------------------

    def read_ui_resource(self, uri: str, timeout: float | None) -> UIResource:
        """The view at ``uri``, read once per connection (``resources/read``)."""
        with self._lock:
            cached = self._views.get(uri)
        if cached is not None:
            return cached
        session = self._bound()
        result = session.read_resource(uri, options=Options(timeout=timeout))
        contents = [c for c in session.structure_list(result.get("contents", []), t.ResourceContents) if c.uri == uri]
        if not contents:
            raise ProtocolError(f"the server's resources/read of {uri!r} returned no contents for it")
        view = UIResource.from_contents(contents[0])
        log.info("MCP App view %r: Content-Security-Policy %r", uri, content_security_policy(view))
        with self._lock:
            self._views[uri] = view
        return view

    # -- AppHost: what a shown view asks -----------------------------------------------------------

    def tool(self, name: str) -> t.ToolDef | None:
        with self._lock:
            known = self._tools.get(name)
        if known is None:
            session = self._bound()
            items = [
                item for page in session.pages("tools/list", options=Options(timeout=self.timeout))
                for item in page.get("tools") or []
            ]
            self._learn(session.structure_list(items, t.ToolDef))
            with self._lock:
                known = self._tools.get(name)
        return known

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        return self._bound().request(
            "tools/call", {"name": name, "arguments": dict(arguments or {})}, options=Options(timeout=self.timeout)
        )

    def read_resource(self, uri: str) -> dict[str, Any]:
        return self._bound().read_resource(uri, options=Options(timeout=self.timeout))

    def run(self, work: Callable[[], None]) -> None:
        self._bound().run(work)

    def on_close(self, closer: Callable[[], None]) -> None:
        with self._lock:
            if not self._closed:
                self._closers.append(closer)
                return
        closer()

    # -- helpers ---------------------------------------------------------------------------------

    def _learn(self, tools: list[t.ToolDef]) -> None:
        with self._lock:
            self._tools = {tool.name: tool for tool in tools}

    def _bound(self) -> Session:
        session = self._session
        if session is None:
            raise ClientClosedError("this MCP Apps extension belongs to no client yet")
        return session


def apps_extensions(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """``apps=True``: MCP Apps, with the client's timeout for its views' requests (none more
    when an ``Apps()`` was given by hand)."""
    if not options.get("apps") or any(isinstance(extension, Apps) for extension in gathered):
        return ()
    return (Apps(timeout=options.get("timeout")),)
