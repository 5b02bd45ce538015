"""A stdio MCP Apps server whose view tries to reach an origin it did not declare.

``python probe_app_server.py UNDECLARED_URL DECLARED_ORIGIN``: tool ``probe`` links to
``ui://probe/view.html``, whose ``_meta.ui.csp`` declares only ``DECLARED_ORIGIN``. The view
fetches ``UNDECLARED_URL`` at once and writes what happened into ``#probe``: "blocked" when
the fetch failed (with the CSP directive that refused it), "reached" if it got through.
Also offers ``secret``, visible to the model only, which a view must not be able to call.

The view declares every display mode; it writes the host's ``availableDisplayModes`` into
``#modes``, each ``ui/notifications/host-context-changed`` it gets into ``#context`` (a JSON
list), and the answer to ``ui/request-display-mode`` into ``#mode`` when its ``#fullscreen``
or ``#pip`` button is clicked. Tool ``probe-at-load`` shows the same view, which, once
initialized, takes the focus and asks for full screen by itself, without any gesture of the
person's (``ui://probe/at-load.html``).
"""

from __future__ import annotations

import json
import sys

UNDECLARED, DECLARED = sys.argv[1], sys.argv[2]
URI = "ui://probe/view.html"
VIEW = """<!DOCTYPE html><html><head><title>probe</title></head><body>
<p id="probe">pending</p><p id="secret">pending</p>
<p id="modes">pending</p><p id="mode">inline</p><button id="fullscreen">full screen</button><button id="pip">pip</button><pre id="context">[]</pre>
<script>
const out = document.getElementById("probe");
let violated = "";
document.addEventListener("securitypolicyviolation", (e) => { violated = e.violatedDirective; });
fetch(UNDECLARED_URL).then(() => { out.textContent = "reached"; })
  .catch(() => { setTimeout(() => { out.textContent = "blocked " + violated; }, 100); });
let id = 0;
const waiting = {};
const changes = [];
window.addEventListener("message", (e) => {
  const m = e.data;
  if (m && m.id in waiting && !m.method) { waiting[m.id](m); delete waiting[m.id]; }
  if (m && m.method === "ui/notifications/host-context-changed") {
    changes.push(m.params);
    document.getElementById("context").textContent = JSON.stringify(changes);
  }
});
const display = (mode) => ask("ui/request-display-mode", { mode }).then((reply) => {
  document.getElementById("mode").textContent = reply.result ? reply.result.mode : "error";
});
for (const mode of ["fullscreen", "pip"]) {
  document.getElementById(mode).addEventListener("click", () => display(mode));
}
function ask(method, params) {
  const n = ++id;
  window.parent.postMessage({ jsonrpc: "2.0", id: n, method, params }, "*");
  return new Promise((resolve) => { waiting[n] = resolve; });
}
const ready = ask("ui/initialize", { appInfo: { name: "probe", version: "1" },
  appCapabilities: { availableDisplayModes: ["inline", "fullscreen", "pip"] }, protocolVersion: "2026-01-26" })
  .then((reply) => {
    document.getElementById("modes").textContent = reply.result.hostContext.availableDisplayModes.join(" ");
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
  });
ready.then(() => ask("tools/call", { name: "secret", arguments: {} }))
  .then((reply) => {
    document.getElementById("secret").textContent = reply.error ? "refused " + reply.error.code : "answered";
  });
</script></body></html>""".replace("UNDECLARED_URL", json.dumps(UNDECLARED))
#: The same view asking for full screen as soon as it is initialized, with the focus taken first.
AT_LOAD = VIEW.replace("</script></body>", """ready.then(() => {
  window.focus();
  document.getElementById("fullscreen").focus();
  display("fullscreen");
});
</script></body>""")
VIEWS = {URI: VIEW, "ui://probe/at-load.html": AT_LOAD}

TOOLS = [
    {"name": "probe", "description": "Show the probe view", "inputSchema": {"type": "object"},
     "_meta": {"ui": {"resourceUri": URI}}},
    {"name": "probe-at-load", "description": "Show the probe view that asks for full screen by itself",
     "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://probe/at-load.html"}}},
    {"name": "secret", "description": "Model only", "inputSchema": {"type": "object"},
     "_meta": {"ui": {"visibility": ["model"]}}},
]


def answer(method: str, params: dict) -> dict:
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}, "resources": {}}, "serverInfo": {"name": "probe", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": f"{params.get('name')} ran"}]}
    if method == "resources/read":
        uri = params.get("uri")
        if uri not in VIEWS:
            raise LookupError(uri)
        return {"contents": [{"uri": uri, "mimeType": "text/html;profile=mcp-app", "text": VIEWS[uri],
                              "_meta": {"ui": {"csp": {"connectDomains": [DECLARED]}}}}]}
    if method == "ping":
        return {}
    raise LookupError(method)


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    try:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message["method"], message.get("params") or {})}
    except LookupError:
        reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "method not found"}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
