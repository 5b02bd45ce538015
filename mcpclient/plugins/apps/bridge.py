"""The host side of the MCP Apps view protocol (SEP-1865): JSON-RPC with one shown view.

The front end only relays: what the view posts reaches ``Bridge.receive`` and what the
bridge ``post``s reaches the view. Every rule is here, so it is tested without a browser:
``ui/initialize`` answered with the host context, nothing sent to the view before it says
``ui/notifications/initialized`` (then the tool's input and result, in that order), the
view's ``tools/call`` allowed only for tools of the same server whose visibility includes
``"app"``, ``resources/read`` through the same connection, links and messages shown to the
person (a notebook has no model), display modes (``inline``, and ``fullscreen`` and ``pip`` when
the front end can lay the view out so; a mode over the page only at the person's gesture), ``ui/notifications/host-context-changed`` with only
the fields that changed (theme, display mode, container size), and a teardown request before
the view goes away.

No ``ui/notifications/tool-input-partial`` or ``tool-cancelled`` is ever sent: the arguments
come whole from Python, and a view is shown only with its call's result (a cancelled call
raises in the cell and shows no view), so there is neither partial input nor a call to cancel.

Tool calls and reads run on the connection's small pool (``AppHost.run``), never on the caller's thread: in a kernel that
thread handles every comm message, and a slow tool must not stop the notebook.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Mapping

from ... import types as t
from ..._client.app_views import CSP_KEYS, PERMISSIONS, AppHost, UIResource, visible_to_app
from ..._core.exceptions import MCPError, RPCError, method_not_found

__all__ = ["DISPLAY_MODES", "PROTOCOL_VERSION", "Bridge"]

log = logging.getLogger("mcpclient")

PROTOCOL_VERSION = "2026-01-26"
#: Implementation-defined error (the spec's code for a denied request).
DENIED = -32000

#: The spec's display modes; a host offers ``inline`` and those its front end can lay out.
DISPLAY_MODES = ("inline", "fullscreen", "pip")
#: How tall an inline view may grow (its height follows ``ui/notifications/size-changed``).
MAX_INLINE_HEIGHT = 1200

Post = Callable[[dict[str, Any]], None]
Note = Callable[[str, str], None]
Display = Callable[[str], None]


def wire_tool(tool: t.ToolDef) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": tool.name, "inputSchema": tool.input_schema}
    for key, value in (("description", tool.description), ("title", tool.title),
                       ("annotations", tool.annotations), ("_meta", tool.meta)):
        if value:
            wire[key] = value
    return wire


def wire_result(result: t.ToolResult) -> dict[str, Any]:
    wire: dict[str, Any] = {"content": [part.raw or {"type": part.type, "text": part.text} for part in result.content]}
    if result.is_error:
        wire["isError"] = True
    if result.structured_content is not None:
        wire["structuredContent"] = result.structured_content
    if result.meta:
        wire["_meta"] = result.meta
    return wire




class Bridge:
    """One shown view: its protocol state and the answers to its requests.

    ``host`` is the connection the tool ran on (the view's calls go through it: the ``Apps``
    extension of its client), ``tool`` and ``arguments`` the call, ``result`` its result.
    ``post`` sends a message to the view; ``note(kind, text)`` shows something to the person
    ("link", "message", "context", "log", or "ask-display" with a mode: a button of the host's
    that lays the view out so). ``display(mode)``, when given, lays the view out in
    ``"fullscreen"``, ``"pip"`` or ``"inline"``: only then are the first two offered. What the
    front end measures or the person changes (theme, size, a display mode) comes in through
    ``context_changed``; with each message of the view it says whether the person's gesture in
    the view came with it (``env["gesture"]``).
    """

    def __init__(
        self, host: AppHost, tool: t.ToolDef, arguments: Mapping[str, Any], result: t.ToolResult,
        resource: UIResource, post: Post, note: Note, *, run: Callable[[Callable[[], None]], Any] | None = None,
        display: Display | None = None,
    ) -> None:
        self.host = host
        self.tool = tool
        self.arguments = dict(arguments)
        self.result = result
        self.resource = resource
        self._post = post
        self._note = note
        self._run = run or host.run  # the connection's pool, ended when the client closes
        self._display = display
        self._lock = threading.Lock()
        #: Whether ``ui/initialize`` was answered: from then on a context change is notified.
        self.answered = False
        self.initialized = False
        self.closed = False
        self._held: list[dict[str, Any]] = []
        self._next_id = 0
        #: What the view asked the person or the model, kept readable (a notebook has no model).
        self.messages: list[dict[str, Any]] = []
        self.model_context: dict[str, Any] | None = None
        self.logs: list[dict[str, Any]] = []
        self.size: dict[str, Any] = {}
        #: The modes the view declared in ``appCapabilities.availableDisplayModes`` (None: not said).
        self.app_modes: tuple[str, ...] | None = None
        self.host_context: dict[str, Any] = {
            "toolInfo": {"tool": wire_tool(tool)},
            "theme": "light",
            "displayMode": "inline",
            "availableDisplayModes": list(DISPLAY_MODES if display is not None else DISPLAY_MODES[:1]),
            "containerDimensions": {"maxHeight": MAX_INLINE_HEIGHT},
            "platform": "web",
            "userAgent": "mcpclient",
        }
        # Held until the view is initialized; the spec wants tool-input before tool-result.
        self.notify("ui/notifications/tool-input", {"arguments": self.arguments})
        self.notify("ui/notifications/tool-result", wire_result(result))

    # -- to the view -----------------------------------------------------------------------

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification, or hold it until the view is initialized."""
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        with self._lock:
            if not self.initialized:
                self._held.append(message)
                return
        self._post(message)

    def teardown(self, reason: str) -> None:
        """Tell the view it goes away (``ui/resource-teardown``); further requests are refused."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._next_id += 1
            ident = f"host-{self._next_id}"
            initialized = self.initialized
        if initialized:
            self._post({"jsonrpc": "2.0", "id": ident, "method": "ui/resource-teardown", "params": {"reason": reason}})

    def _reply(self, ident: Any, result: Any = None, error: tuple[int, str] | None = None) -> None:
        if error is not None:
            self._post({"jsonrpc": "2.0", "id": ident, "error": {"code": error[0], "message": error[1]}})
        else:
            self._post({"jsonrpc": "2.0", "id": ident, "result": result if result is not None else {}})

    # -- from the view ---------------------------------------------------------------------

    def receive(self, message: Any, env: Mapping[str, Any] | None = None) -> None:
        """Handle one message the view posted (``env``: what the front end knows, e.g. theme)."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            log.warning("MCP App view %r sent a malformed message: %.200r", self.resource.uri, message)
            return
        method = message.get("method")
        if not isinstance(method, str):
            return  # a reply to our teardown request: nothing waits on it
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if "id" not in message:
            self._on_notification(method, params)
            return
        ident = message["id"]
        if self.closed:
            self._reply(ident, error=(DENIED, "the view has been torn down"))
            return
        log.info("MCP App view %r asks %r", self.resource.uri, method)
        try:
            self._on_request(ident, method, params, env or {})
        except RPCError as exc:
            self._reply(ident, error=(exc.code, exc.message))

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "ui/notifications/initialized":
            with self._lock:
                self.initialized = True
                held, self._held = self._held, []
            for message in held:
                self._post(message)
        elif method == "ui/notifications/size-changed":
            self.size = {k: params[k] for k in ("width", "height") if isinstance(params.get(k), (int, float))}
        elif method == "notifications/message":
            self.logs.append(params)
            self._note("log", f"[{params.get('level', 'info')}] {params.get('data', '')}")

    def _on_request(self, ident: Any, method: str, params: dict[str, Any], env: Mapping[str, Any]) -> None:
        if method == "ui/initialize":
            capabilities = params.get("appCapabilities")
            declared = capabilities.get("availableDisplayModes") if isinstance(capabilities, dict) else None
            if isinstance(declared, list):
                self.app_modes = tuple(m for m in declared if isinstance(m, str))
            with self._lock:
                self._apply(env)
                self.answered = True
            self._reply(ident, {
                "protocolVersion": PROTOCOL_VERSION,
                "hostInfo": {"name": "mcpclient", "version": self.host.version},
                "hostCapabilities": self._host_capabilities(),
                "hostContext": self.host_context,
            })
        elif method == "ping":
            self._reply(ident, {})
        elif method == "tools/call":
            self._call_tool(ident, params)
        elif method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                raise RPCError(RPCError.INVALID_PARAMS, "resources/read needs a string uri")
            self._off_thread(ident, lambda: self.host.read_resource(uri))
        elif method == "ui/open-link":
            url = params.get("url")
            if not (isinstance(url, str) and url.lower().startswith(("https://", "http://"))):
                raise RPCError(DENIED, "Invalid URL: only http(s) links are shown")
            self._note("link", url)  # shown to the person as a link, never opened by itself
            self._reply(ident, {})
        elif method == "ui/message":
            self.messages.append(params)
            content = params.get("content")
            text = content.get("text") if isinstance(content, dict) else content
            self._note("message", f"{params.get('role', 'user')}: {text}")
            self._reply(ident, {})
        elif method == "ui/update-model-context":
            self.model_context = params  # each update replaces the last, as the spec says
            self._note("context", _context_text(params))
            self._reply(ident, {})
        elif method == "ui/request-display-mode":
            self._request_display_mode(ident, params.get("mode"), env.get("gesture") is True)
        else:
            raise method_not_found(method, "the host does not handle it")

    def _request_display_mode(self, ident: Any, mode: Any, gesture: bool) -> None:
        """Grant ``mode`` if offered; a mode over the page (full screen, picture-in-picture)
        only with the person's gesture in the view. Without one the answer is the current
        mode and the person is offered the host's button for it: a view cannot cover the
        notebook (and pose as it) by itself."""
        if mode not in DISPLAY_MODES:
            raise RPCError(RPCError.INVALID_PARAMS, f"mode must be one of {', '.join(DISPLAY_MODES)}")
        with self._lock:
            current = self.host_context["displayMode"]
            # The spec: never a mode the view did not declare (if it declared any); else the current one.
            wanted = mode if self._offered(mode) else current
            ask = wanted not in ("inline", current) and not gesture
            granted = current if ask else wanted
            changed = self._apply({"displayMode": granted})
        if changed and self._display is not None:
            self._display(granted)
        self._reply(ident, {"mode": granted})
        if changed:
            self.notify("ui/notifications/host-context-changed", changed)
        if ask:
            self._note("ask-display", wanted)

    def _offered(self, mode: Any) -> bool:
        return mode in self.host_context["availableDisplayModes"] and (self.app_modes is None or mode in self.app_modes)

    # -- from the front end ------------------------------------------------------------------

    def context_changed(self, env: Mapping[str, Any]) -> dict[str, Any]:
        """Take what the front end reports (``theme``, ``width``, ``height``, ``displayMode``).

        The fields of the host context that changed are sent to the view in one
        ``ui/notifications/host-context-changed`` (after ``ui/initialize`` was answered; before,
        its answer carries them) and returned. A display mode the view may not have is ignored.
        """
        with self._lock:
            changed = self._apply(env)
            answered = self.answered
        if changed and answered and not self.closed:
            self.notify("ui/notifications/host-context-changed", changed)
        return changed

    def _apply(self, env: Mapping[str, Any]) -> dict[str, Any]:
        """Fold ``env`` into the host context (under the lock); the fields that changed."""
        context = self.host_context
        fresh: dict[str, Any] = {}
        if env.get("theme") in ("light", "dark"):
            fresh["theme"] = env["theme"]
        mode = env.get("displayMode")
        if mode != context["displayMode"] and (mode == "inline" or self._offered(mode)):  # inline: always back
            fresh["displayMode"] = mode
        mode = fresh.get("displayMode", context["displayMode"])
        width, height = (_pixels(env.get(k)) for k in ("width", "height"))
        old = context["containerDimensions"]
        width = width or old.get("width")
        dimensions: dict[str, Any] | None = None
        if mode == "inline":  # a fixed width and a height the view chooses, up to a maximum
            dimensions = {"maxHeight": MAX_INLINE_HEIGHT}
        elif height:  # the layout fixes both (once the front end has measured them)
            dimensions = {"height": height}
        if dimensions is not None:
            fresh["containerDimensions"] = {"width": width, **dimensions} if width else dimensions
        changed = {k: v for k, v in fresh.items() if context.get(k) != v}
        context.update(changed)
        return changed

    def _host_capabilities(self) -> dict[str, Any]:
        csp = self.resource.csp or {}
        return {
            "openLinks": {},
            "serverTools": {},
            "serverResources": {},
            "logging": {},
            "sandbox": {
                "permissions": {p: {} for p in self.resource.permissions if p in PERMISSIONS},
                "csp": {k: list(csp[k]) for k in CSP_KEYS if csp.get(k)},
            },
        }

    def _call_tool(self, ident: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            raise RPCError(RPCError.INVALID_PARAMS, "tools/call needs a string name and object arguments")

        def call() -> dict[str, Any]:
            tool = self.host.tool(name)  # this client's server only: no cross-server calls
            if tool is None:
                raise RPCError(RPCError.INVALID_PARAMS, f"no tool {name!r} on this view's server")
            if not visible_to_app(tool):
                raise RPCError(DENIED, f"tool {name!r} is not callable from an app (its visibility lacks \"app\")")
            return self.host.call_tool(name, arguments)

        self._off_thread(ident, call)

    def _off_thread(self, ident: Any, work: Callable[[], dict[str, Any]]) -> None:
        def run() -> None:
            try:
                result = work()
            except RPCError as exc:
                self._reply(ident, error=(exc.code, exc.message))
            except MCPError as exc:
                self._reply(ident, error=(DENIED, str(exc)))
            except Exception as exc:  # the view gets an answer whatever happens
                log.exception("MCP App view request failed")
                self._reply(ident, error=(RPCError.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"))
            else:
                self._reply(ident, result)

        self._run(run)


def _pixels(value: Any) -> int | None:
    """A positive size in whole pixels, or None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return round(value)
    return None


def _context_text(params: Mapping[str, Any]) -> str:
    parts = [p.get("text", "") for p in params.get("content") or [] if isinstance(p, dict)]
    text = " ".join(str(p) for p in parts if p)
    if params.get("structuredContent") is not None:
        text += (" " if text else "") + repr(params["structuredContent"])
    return text or "(empty)"

