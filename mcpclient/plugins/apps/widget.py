"""A tool's MCP Apps view as a notebook output: an anywidget relaying to ``Bridge``.

The front-end part (``_ESM``) only draws and relays. The view's HTML, behind a doctype and
the Content Security Policy of mcpclient's own (``with_csp``; the same policy is each
iframe's ``csp`` attribute too, which Chromium enforces), runs in an iframe sandboxed with
``allow-scripts allow-forms`` and never ``allow-same-origin``: at an opaque origin, so it
cannot reach the notebook page, its cookies or the Jupyter server's API. That iframe sits
inside a second one of the same sandbox, the proxy (``framed``): a document of mcpclient's
own under the same policy, which relays messages between the page and the view. Its
``frame-src`` is the browser's check on every navigation of the view's frame, whoever starts
it (``location=``, a ``<meta http-equiv=refresh>``, a link, the Navigation API): the view
cannot carry data to an origin it did not declare by loading another page, which
``connect-src`` alone does not stop; the proxy tells the page when the view tried, and the
view is closed. Without ``allow-popups`` and ``allow-top-navigation`` it opens no window and
cannot move the notebook page. The front end forwards what the view posts (through the
proxy of that iframe only) to the kernel, posts the kernel's answers back, resizes the
iframe on ``ui/notifications/size-changed``, lays the view out full screen (over the whole
page) or picture-in-picture (a floating box in a corner), in the browser's top layer, when
the bridge grants it (at the person's gesture in the view, see ``gesture`` in ``_ESM``; or
when the person presses the host's button the bridge asked for), each with
a button that brings it back inline, tells the kernel when the notebook's theme, the frame's
size or the display mode changes (for ``ui/notifications/host-context-changed``), and shows
links, messages and model-context updates under the view as text. Every protocol rule lives
in ``bridge``.

Only in a live kernel with anywidget installed (``pip install mcpclient[apps]``); elsewhere
``mimebundle`` returns None and the result shows as any ``ToolResult``.
"""

from __future__ import annotations

import html as html_lib
import logging
from typing import Any

from ... import types as t
from ..._client.app_views import AppCall, UIResource, allow_attribute, content_security_policy
from ..._display.html import to_html
from ..._core.exceptions import MCPError
from .bridge import Bridge

__all__ = ["SANDBOX", "framed", "mimebundle", "with_csp"]

log = logging.getLogger("mcpclient")

#: The iframe's sandbox: scripts and forms, never ``allow-same-origin`` (SEP-1865 security).
SANDBOX = "allow-scripts allow-forms"
#: What every view document starts with: a doctype of ours, then the policy. The parser puts
#: that ``<meta>`` in ``<head>`` before it reads one character of the view.
_PREAMBLE = '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="{}">'


def with_csp(document: str, policy: str) -> str:
    """``document`` behind a doctype and a CSP ``<meta>`` of ours, so no content can move the policy.

    The view's text is never searched for a place to put the tag: whatever it starts with
    (blanks HTML does not count as blanks, a comment, a ``<title>``, its own doctype), the
    parser has already seen our doctype, made ``<html>`` and ``<head>`` and put the policy in
    it, which is in force from then on; a policy in force cannot be loosened by a later one.
    The view's own doctype is then ignored, so every view renders in standards mode.
    """
    return _PREAMBLE.format(html_lib.escape(policy, quote=True)) + document


#: The proxy's own script: it relays the page's messages to the view and the view's (marked
#: as such) to the page, and says "left" when the view's frame tried to load another page
#: (the proxy's ``frame-src`` refused it) or loaded one; from then on it relays nothing.
_RELAY = """<script>
const view = document.getElementById("view");
let loads = 0;
let left = false;
const leave = () => { if (!left) { left = true; parent.postMessage({ mcpclient: "left" }, "*"); } };
document.addEventListener("securitypolicyviolation", (e) => { if (e.effectiveDirective === "frame-src") leave(); });
view.addEventListener("load", () => { loads += 1; if (loads > 1) leave(); });
window.addEventListener("message", (e) => {
  if (left) return;
  if (e.source === view.contentWindow) parent.postMessage({ mcpclient: "view", message: e.data }, "*");
  else if (e.source === parent && view.contentWindow) view.contentWindow.postMessage(e.data, "*");
});
</script>"""
_PROXY_STYLE = ("<style>html,body{margin:0;padding:0;height:100%;overflow:hidden}"
                "iframe{display:block;border:0;width:100%;height:100%}</style>")


def framed(document: str, policy: str, allow: str = "", title: str = "") -> str:
    """The widget iframe's document: the proxy, under ``policy``, whose one frame is the view.

    The view (``document`` behind ``with_csp``) is the ``srcdoc`` of an iframe with the same
    sandbox, ``allow`` attribute and ``csp`` attribute; the proxy's own policy is ``policy``
    too, so the view (which inherits it) is held to nothing more than its own, while the
    proxy's ``frame-src`` decides where the view's frame may go: nowhere but the view's
    declared ``frameDomains``.
    """
    def attribute(value: str) -> str:
        return html_lib.escape(value, quote=True)

    frame = (f'<iframe id="view" sandbox="{SANDBOX}" allow="{attribute(allow)}" csp="{attribute(policy)}" '
             f'title="{attribute(title)}" srcdoc="{attribute(with_csp(document, policy))}"></iframe>')
    return with_csp(_PROXY_STYLE + frame + _RELAY, policy)


_ESM = r"""
// Full screen and picture-in-picture put the box in the browser's top layer (a manual
// popover): above the whole page and placed against the window, whatever JupyterLab's
// containers do (a cell's containment would otherwise pin a fixed box inside the cell).
// The iframe never moves in the document, so the view keeps running.
const LAYOUTS = {
  inline: "",
  fullscreen: "inset:0;width:100vw;height:100vh;max-width:none;max-height:none;margin:0;padding:0;border:0;"
    + "display:flex;flex-direction:column;background:var(--jp-layout-color0, #fff)",
  pip: "inset:auto 16px 16px auto;width:420px;height:300px;margin:0;padding:0;border:0;display:flex;"
    + "flex-direction:column;background:var(--jp-layout-color0, #fff);box-shadow:0 2px 12px rgba(0,0,0,.35)",
};
const BACK = { fullscreen: "Exit full screen", pip: "Back into the notebook" };
const ASK = { fullscreen: "The view asks to go full screen: ", pip: "The view asks to float over the notebook: " };
const ALLOW = { fullscreen: "Go full screen", pip: "Float it" };
// How long a transient user activation may last (Chromium and Firefox: 5 s), with a margin.
const ACTIVATION_MS = 6000;

function render({ model, el }) {
  const view = Math.random().toString(36).slice(2);
  // The person's gesture in the view. A click or key press in a frame gives its ancestors a
  // transient activation too, which this page reads; it counts as the view's when the page
  // itself saw no input for longer than an activation lasts (so not the key press that ran
  // the cell, which a view could pair with taking the focus) and the view's frame has the
  // focus. Anything less is no gesture: the bridge then asks the person with a button. An
  // activation the page holds when the view is drawn is not the view's: it counts as input now.
  const activation = () => Boolean(navigator.userActivation && navigator.userActivation.isActive);
  let hostInput = activation() ? performance.now() : -Infinity;
  const input = () => { hostInput = performance.now(); };
  for (const type of ["pointerdown", "keydown"]) window.addEventListener(type, input, true);
  const gesture = () => activation() && document.activeElement === frame
    && performance.now() - hostInput > ACTIVATION_MS;
  const box = document.createElement("div");
  const bar = document.createElement("div");
  const back = document.createElement("button");
  const frame = document.createElement("iframe");
  const notes = document.createElement("div");
  frame.setAttribute("sandbox", model.get("sandbox"));
  if (model.get("allow")) frame.setAttribute("allow", model.get("allow"));
  frame.setAttribute("csp", model.get("policy"));  // a second copy, where the browser enforces it
  frame.setAttribute("title", model.get("title"));
  frame.style.width = "100%";
  frame.style.boxSizing = "border-box";
  frame.style.height = "360px";
  frame.style.border = model.get("border") ? "1px solid var(--jp-border-color1, #ccc)" : "0";
  frame.srcdoc = model.get("html");
  bar.className = "mcpclient-app-bar";
  bar.style.display = "none";
  back.className = "mcpclient-app-back";
  bar.append(back);
  notes.className = "mcpclient-app-notes";
  notes.style.fontSize = "12px";
  box.append(bar, frame, notes);
  el.appendChild(box);
  let mode = "inline";
  let height = "360px";  // the inline height the view last asked for
  const env = () => {
    const r = frame.getBoundingClientRect();
    return {
      theme: document.body.dataset.jpThemeLight === "false" ? "dark" : "light",
      width: Math.round(r.width), height: Math.round(r.height), displayMode: mode,
    };
  };
  const layout = (next) => {
    mode = LAYOUTS[next] === undefined ? "inline" : next;
    if (box.matches(":popover-open")) box.hidePopover();
    box.style.cssText = LAYOUTS[mode];
    if (mode === "inline") {
      box.removeAttribute("popover");
    } else if (typeof box.showPopover === "function") {
      box.setAttribute("popover", "manual");
      box.showPopover();
    } else {  // a browser without popovers: a fixed box, which a cell's containment may confine
      box.style.position = "fixed";
      box.style.zIndex = "10000";
    }
    bar.style.display = mode === "inline" ? "none" : "block";
    back.textContent = BACK[mode] || "";
    frame.style.flex = mode === "inline" ? "" : "1 1 auto";
    frame.style.height = mode === "inline" ? height : "auto";
    frame.style.minHeight = "0";
  };
  // What the kernel is told changed: the theme, the frame's size, the display mode.
  let told = "";
  const tell = () => {
    const now = env();
    const key = JSON.stringify([now.theme, now.width, mode === "inline" ? 0 : now.height, now.displayMode]);
    if (key === told) return;
    told = key;
    model.send({ kind: "env", view, env: now });
  };
  back.addEventListener("click", () => { layout("inline"); tell(); });
  const sizes = new ResizeObserver(tell);
  sizes.observe(frame);
  const themes = new MutationObserver(tell);
  themes.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light"] });
  const onMessage = (event) => {
    if (event.source !== frame.contentWindow || !event.data) return;
    if (event.data.mcpclient === "left") {  // the proxy: the view tried to load another page
      model.send({ kind: "left", view });
      close("(the view tried to load another page, which its policy does not allow: it was stopped)");
      return;
    }
    const msg = event.data.mcpclient === "view" ? event.data.message : null;
    if (!msg || msg.jsonrpc !== "2.0") return;
    if (msg.method === "ui/notifications/size-changed" && msg.params) {
      const h = Number(msg.params.height);
      if (h > 0) height = Math.min(Math.ceil(h), 1200) + "px";
      if (h > 0 && mode === "inline") frame.style.height = height;
    }
    if (pending && msg.id === pending.id && !msg.method) { pending.done(); }
    model.send({ kind: "view", view, message: msg, env: { ...env(), gesture: gesture() } });
  };
  let pending = null;
  window.addEventListener("message", onMessage);
  const note = (kind, text) => {
    const line = document.createElement("div");
    if (kind === "ask-display") {  // the person's own button, outside the view
      if (!ASK[text]) return;
      for (const old of notes.querySelectorAll(".mcpclient-app-ask-display")) old.remove();
      const allow = document.createElement("button");
      allow.textContent = ALLOW[text];
      allow.addEventListener("click", () => { line.remove(); layout(text); tell(); });
      line.append(ASK[text], allow);
    } else if (kind === "link") {
      const a = document.createElement("a");
      a.href = text; a.textContent = text; a.target = "_blank"; a.rel = "noopener noreferrer";
      line.append("The view offers a link: ", a);
    } else {
      line.textContent = { message: "The view says ", context: "The view's context: ", log: "Log " }[kind] + text;
    }
    line.className = "mcpclient-app-" + kind;
    notes.appendChild(line);
  };
  const unwatch = () => {
    window.removeEventListener("message", onMessage);
    for (const type of ["pointerdown", "keydown"]) window.removeEventListener(type, input, true);
    sizes.disconnect();
    themes.disconnect();
  };
  const close = (text) => {
    unwatch();
    layout("inline");
    frame.remove();
    const gone = document.createElement("div");
    gone.textContent = text;
    box.prepend(gone);
  };
  model.on("msg:custom", (content) => {
    if (content.view !== view && content.view !== "*") return;
    if (content.kind === "post") {
      const msg = content.message;
      if (frame.contentWindow) frame.contentWindow.postMessage(msg, "*");
      if (msg.method === "ui/resource-teardown") {
        const timer = setTimeout(() => pending && pending.done(), 1500);
        pending = { id: msg.id, done: () => { clearTimeout(timer); pending = null; close("(the MCP client was closed)"); } };
      }
    } else if (content.kind === "display") {
      layout(content.mode);
    } else if (content.kind === "note") {
      note(content.note, content.text);
    } else if (content.kind === "closed") {
      close("(the MCP client was closed)");
    }
  });
  return () => {
    if (frame.contentWindow) {
      frame.contentWindow.postMessage({ jsonrpc: "2.0", id: "host-cleared", method: "ui/resource-teardown", params: { reason: "output cleared" } }, "*");
    }
    unwatch();
    model.send({ kind: "gone", view });
  };
}
export default { render };
"""


def _live() -> bool:
    """Whether a Jupyter kernel with anywidget runs this code (a front end may be listening)."""
    try:
        import anywidget  # noqa: F401
        from ipykernel.zmqshell import ZMQInteractiveShell
        from IPython import get_ipython
    except ImportError:
        return False
    return isinstance(get_ipython(), ZMQInteractiveShell)


def _widget_class() -> Any:
    import anywidget
    import traitlets

    class AppView(anywidget.AnyWidget):
        """One tool result's view; each front-end view of it gets its own ``Bridge``."""

        _esm = _ESM
        html = traitlets.Unicode("").tag(sync=True)
        sandbox = traitlets.Unicode(SANDBOX).tag(sync=True)
        allow = traitlets.Unicode("").tag(sync=True)
        policy = traitlets.Unicode("").tag(sync=True)
        title = traitlets.Unicode("").tag(sync=True)
        border = traitlets.Bool(True).tag(sync=True)

        def __init__(self, result: t.ToolResult, call: AppCall, tool: Any, resource: UIResource) -> None:
            policy, allow, title = content_security_policy(resource), allow_attribute(resource), f"MCP App view {resource.uri}"
            super().__init__(
                html=framed(resource.html, policy, allow, title), policy=policy, allow=allow, title=title,
                border=resource.prefers_border is not False,
            )
            self.result = result
            self.call = call
            self.tool = tool
            self.resource = resource
            self.bridges: dict[str, Bridge] = {}
            self.on_msg(self._on_front_end)
            call.host.on_close(self._client_closed)

        def bridge(self, view: str) -> Bridge:
            found = self.bridges.get(view)
            if found is None:
                found = self.bridges[view] = Bridge(
                    self.call.host, self.tool, self.call.arguments, self.result, self.resource,
                    post=lambda m: self.send({"kind": "post", "view": view, "message": m}),
                    note=lambda k, text: self.send({"kind": "note", "view": view, "note": k, "text": text}),
                    display=lambda mode: self.send({"kind": "display", "view": view, "mode": mode}),
                )
            return found

        def _on_front_end(self, _widget: Any, content: Any, _buffers: Any) -> None:
            if not isinstance(content, dict) or not isinstance(content.get("view"), str):
                return
            view = content["view"]
            if content.get("kind") in ("gone", "left"):
                gone = self.bridges.pop(view, None)
                if gone is not None:
                    gone.closed = True
                if content.get("kind") == "left":
                    log.warning("the MCP App view %r tried to load another page, which its policy does not allow; "
                                "it was closed", self.resource.uri)
            elif content.get("kind") == "view":
                env = content.get("env")
                self.bridge(view).receive(content.get("message"), env if isinstance(env, dict) else {})
            elif content.get("kind") == "env" and isinstance(content.get("env"), dict):
                self.bridge(view).context_changed(content["env"])

        def _client_closed(self) -> None:
            for bridge in list(self.bridges.values()):
                bridge.teardown("the MCP client was closed")
            if not self.bridges:
                self.send({"kind": "closed", "view": "*"})

    return AppView


_WIDGET: Any = None


def mimebundle(result: t.ToolResult, call: AppCall) -> dict[str, Any] | None:
    """The widget output for ``result`` of ``call`` in a live kernel, or None (then it shows as usual)."""
    global _WIDGET
    if not _live():
        return None
    try:
        tool = call.host.tool(call.tool)
        if tool is None or tool.ui is None or not tool.ui.resource_uri:
            return None
        resource = call.host.read_ui_resource(tool.ui.resource_uri, None)
    except MCPError as exc:
        log.warning("cannot show the view of tool %r: %s", call.tool, exc)
        return None
    if _WIDGET is None:
        _WIDGET = _widget_class()
    shown = _WIDGET(result, call, tool, resource)._repr_mimebundle_()
    data = dict(shown[0] if isinstance(shown, tuple) else shown)  # anywidget gives (data, metadata)
    data["text/html"] = to_html(result)  # where no widget manager runs (exported notebooks)
    return data
