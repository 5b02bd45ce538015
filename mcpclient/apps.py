"""MCP Apps (SEP-1865, extension ``io.modelcontextprotocol/ui``): a tool's interactive view.

A server links a tool to an HTML view (a ``ui://`` resource of type
``text/html;profile=mcp-app``) in the tool's ``_meta.ui``. With ``Client(apps=True)`` (or
``connect(..., apps=True)``) mcpclient declares the extension, reads each tool's link into
``ToolDef.ui``, and fetches a view once per connection (``Client.read_ui_resource``). In a
live Jupyter front end with the ``apps`` extra installed, a tool result then renders as the
view (``mcpclient._apps_widget``); everywhere else it shows as any other result.

The visibility rule holds with or without ``apps=True``: a tool whose ``_meta.ui.visibility``
lacks ``"model"`` is never offered to a model (``visible_to_model``), and only a tool whose
visibility includes ``"app"`` may be called by a view (``visible_to_app``). Calling any tool
from Python yourself still works.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Mapping

from attrs import field, frozen

from . import types as t
from ._app_sources import source
from ._exceptions import ProtocolError

if TYPE_CHECKING:
    from ._calls import Calls

__all__ = [
    "EXTENSION",
    "MIME_TYPE",
    "PERMISSIONS",
    "UIResource",
    "allow_attribute",
    "content_security_policy",
    "visible_to_app",
    "visible_to_model",
]

log = logging.getLogger("mcpclient")

EXTENSION = "io.modelcontextprotocol/ui"
#: The one view type mcpclient renders (the spec's only type so far).
MIME_TYPE = "text/html;profile=mcp-app"
#: The ``ui.permissions`` the spec defines, and the Permission Policy feature of each.
PERMISSIONS: dict[str, str] = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")

def visible_to_model(tool: t.ToolDef) -> bool:
    """Whether a model may be offered ``tool``: its visibility includes ``"model"``.

    SEP-1865: a host MUST NOT include a tool in the agent's tool list when its visibility
    lacks ``"model"``. A tool with no ``_meta.ui`` is visible (the default is both).
    """
    return tool.ui is None or "model" in tool.ui.visibility


def visible_to_app(tool: t.ToolDef) -> bool:
    """Whether a view of the same server may call ``tool``: its visibility includes ``"app"``."""
    return tool.ui is None or "app" in tool.ui.visibility


def _domains(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    kept = []
    for item in value:
        found = source(item)
        if found is None:
            log.warning("MCP App view: ignoring the %s entry %r: it is not one public web origin", key, item)
        else:
            kept.append(found)
    return tuple(kept)


@frozen(kw_only=True)
class UIResource:
    """A tool's view as read with ``resources/read``, and its ``_meta.ui``.

    ``csp`` maps each declared key (``connectDomains``, ``resourceDomains``,
    ``frameDomains``, ``baseUriDomains``) to its well-formed origins, or is None when the
    server declared no ``csp`` (the spec's restrictive default then applies).
    ``permissions`` are the spec's four (``PERMISSIONS``) the server asked for; ``domain``
    is kept but not used (a notebook renders every view at an opaque origin).
    """

    uri: str
    html: str = field(repr=False)
    mime_type: str = MIME_TYPE
    csp: Mapping[str, tuple[str, ...]] | None = None
    permissions: tuple[str, ...] = ()
    domain: str | None = None
    prefers_border: bool | None = None

    @classmethod
    def from_contents(cls, contents: t.ResourceContents) -> UIResource:
        """Read one ``resources/read`` entry: text or base64 blob (decoded as UTF-8)."""
        mime = (contents.mime_type or "").replace(" ", "").lower()
        if mime != MIME_TYPE:
            raise ProtocolError(f"the view {contents.uri!r} is {contents.mime_type!r}, not {MIME_TYPE!r}")
        if contents.text is not None:
            html = contents.text
        elif contents.blob is not None:
            try:
                html = contents.blob.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ProtocolError(f"the view {contents.uri!r} is not UTF-8 text: {exc}") from exc
        else:
            raise ProtocolError(f"the view {contents.uri!r} has neither text nor blob")
        meta = contents.meta.get("ui") if isinstance(contents.meta, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        raw_csp = meta.get("csp")
        csp = {k: _domains(raw_csp.get(k), k) for k in CSP_KEYS} if isinstance(raw_csp, dict) else None
        raw_perms = meta.get("permissions")
        perms = tuple(k for k in PERMISSIONS if isinstance(raw_perms, dict) and isinstance(raw_perms.get(k), dict))
        domain = meta.get("domain")
        border = meta.get("prefersBorder")
        return cls(
            uri=contents.uri, html=html, mime_type=MIME_TYPE, csp=csp, permissions=perms,
            domain=domain if isinstance(domain, str) else None,
            prefers_border=border if isinstance(border, bool) else None,
        )


def content_security_policy(resource: UIResource) -> str:
    """The Content Security Policy a view runs under, from its declared domains only.

    With no ``csp`` declared it is the spec's restrictive default. Declared domains widen
    only their own directives (the spec's construction); on top of it, and stricter than the
    spec's example, ``connect-src`` is ``'none'`` unless domains are declared (a notebook's
    ``'self'`` would be the Jupyter server), and objects, form targets and nested frames are
    refused unless declared.
    """
    csp = resource.csp
    if csp is None:
        return (
            "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; "
            "frame-src 'none'; object-src 'none'; base-uri 'self'; form-action 'none'"
        )

    def extra(key: str) -> str:
        return "".join(" " + d for d in csp.get(key, ()))

    resources = extra("resourceDomains")
    connect = " ".join(csp.get("connectDomains", ())) or "'none'"
    frames = " ".join(csp.get("frameDomains", ())) or "'none'"
    base = " ".join(csp.get("baseUriDomains", ())) or "'self'"
    return (
        f"default-src 'none'; script-src 'self' 'unsafe-inline'{resources}; "
        f"style-src 'self' 'unsafe-inline'{resources}; img-src 'self' data:{resources}; "
        f"font-src 'self'{resources}; media-src 'self' data:{resources}; connect-src {connect}; "
        f"frame-src {frames}; object-src 'none'; base-uri {base}; form-action 'none'"
    )


def allow_attribute(resource: UIResource) -> str:
    """The iframe ``allow`` attribute: the spec's permissions the server asked for, nothing else."""
    return "; ".join(PERMISSIONS[p] for p in resource.permissions)


class AppViews:
    """One connection's MCP Apps state: the tools seen, the views read (cached), live views.

    Built per connection by ``Client`` when ``apps=True``; a view is read once with
    ``resources/read`` and kept for the connection's life. ``close()`` tears down every
    view still shown (the client is closing).
    """

    def __init__(self, calls: Calls) -> None:
        self._calls = calls
        self._lock = threading.Lock()
        self._views: dict[str, UIResource] = {}
        self._tools: dict[str, t.ToolDef] = {}
        self._closers: list[Callable[[], None]] = []
        self._pool: ThreadPoolExecutor | None = None
        self.closed = False

    def run(self, work: Callable[[], None]) -> None:
        """Run a view's request on this connection's small pool (never the comm thread)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mcpclient-app")
            pool = self._pool
        pool.submit(work)

    def stop(self) -> None:
        """End the pool (after the connection closed, so its calls end at once)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def learn(self, tools: list[t.ToolDef]) -> None:
        with self._lock:
            self._tools = {tool.name: tool for tool in tools}

    def tool(self, name: str, timeout: float | None) -> t.ToolDef | None:
        """The tool ``name`` as last listed; lists the tools once if it is not known yet."""
        with self._lock:
            known = self._tools.get(name)
        if known is None:
            self.learn(self._calls.list_tools(timeout))
            with self._lock:
                known = self._tools.get(name)
        return known

    def read(self, uri: str, timeout: float | None) -> UIResource:
        """The view at ``uri``, read once per connection (``resources/read``)."""
        with self._lock:
            cached = self._views.get(uri)
        if cached is not None:
            return cached
        contents = [c for c in self._calls.read_resource(uri, timeout) if c.uri == uri] or None
        if contents is None:
            raise ProtocolError(f"the server's resources/read of {uri!r} returned no contents for it")
        view = UIResource.from_contents(contents[0])
        log.info("MCP App view %r: Content-Security-Policy %r", uri, content_security_policy(view))
        with self._lock:
            self._views[uri] = view
        return view

    def on_close(self, closer: Callable[[], None]) -> None:
        """Run ``closer`` when the client closes (a shown view's teardown)."""
        with self._lock:
            if not self.closed:
                self._closers.append(closer)
                return
        closer()

    def close(self) -> None:
        with self._lock:
            self.closed = True
            closers, self._closers = self._closers, []
        for closer in closers:
            try:
                closer()
            except Exception:  # a view's teardown must not stop the client's close
                log.exception("tearing down an MCP App view failed")


@frozen(kw_only=True)
class AppCall:
    """What a view needs of the call that produced a result: the client, the tool, its input."""

    client: Any  # the Client (typed loosely: this module is below it)
    tool: str
    arguments: Mapping[str, Any]


@frozen(kw_only=True)
class AppResult(t.ToolResult):
    """A ``ToolResult`` from a client with ``apps=True``: it knows the call that made it.

    In a live Jupyter front end (with the ``apps`` extra) it renders as the tool's view, if
    the tool has one; anywhere else, and for a tool without a view, it shows as a plain
    ``ToolResult``. It is a ``ToolResult`` in every other respect.
    """

    call: AppCall = field(eq=False, repr=False)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any] | None:
        from ._apps_widget import mimebundle

        return mimebundle(self)
