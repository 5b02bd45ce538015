"""What MCP Apps (SEP-1865) calls a view: the ``UIResource``, its policy, the visibility rule.

A server links a tool to an HTML view (a ``ui://`` resource of type
``text/html;profile=mcp-app``) in the tool's ``_meta.ui``. With ``Plugins(apps=True)`` (or
``connect(..., plugins=Plugins(apps=True))``) mcpclient declares the extension, reads each tool's link into
``ToolDef.ui``, and fetches a view once per connection (``Client.read_ui_resource``). In a
live Jupyter front end with the ``apps`` extra installed, a tool result then renders as the
view (``mcpclient.plugins.apps.widget``); everywhere else it shows as any other result.

The visibility rule holds with or without ``apps=True``: a tool whose ``_meta.ui.visibility``
lacks ``"model"`` is never offered to a model (``visible_to_model``), and only a tool whose
visibility includes ``"app"`` may be called by a view (``visible_to_app``). Calling any tool
from Python yourself still works.
"""

from __future__ import annotations

import abc
import logging
from typing import Any, Callable, Mapping

from attrs import field, frozen

from .. import types as t
from .._core.exceptions import ProtocolError
from .app_sources import source

__all__ = [
    "CSP_KEYS",
    "EXTENSION",
    "MIME_TYPE",
    "PERMISSIONS",
    "AppCall",
    "AppHost",
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


class AppHost(abc.ABC):
    """What a shown view needs of the connection its tool ran on (the ``Apps`` extension).

    A view's requests go to its own server only; each runs off the caller's thread
    (``run``), and each shown view is torn down when the client closes (``on_close``).
    """

    #: What the view is told the host is (``hostInfo.version``).
    version: str = ""

    @abc.abstractmethod
    def tool(self, name: str) -> t.ToolDef | None:
        """The tool ``name`` as last listed (listed once if unknown); None if the server has none."""

    @abc.abstractmethod
    def read_ui_resource(self, uri: str, timeout: float | None) -> UIResource:
        """The view at ``uri``, read once per connection."""

    @abc.abstractmethod
    def call_tool(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Run the tool for the view: the result as the server sent it."""

    @abc.abstractmethod
    def read_resource(self, uri: str) -> dict[str, Any]:
        """``resources/read`` for the view: the result as the server sent it."""

    @abc.abstractmethod
    def run(self, work: Callable[[], None]) -> None:
        """Run a view's request on the connection's pool (never the caller's thread)."""

    @abc.abstractmethod
    def on_close(self, closer: Callable[[], None]) -> None:
        """Run ``closer`` when the client closes (at once if it has closed already)."""


@frozen(kw_only=True)
class AppCall:
    """What a view needs of the call that produced a result: its host, the tool, its input."""

    host: AppHost = field(repr=False)
    tool: str
    arguments: Mapping[str, Any]
