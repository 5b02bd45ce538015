"""The explorer's front end: an anywidget ES module that draws the widget's state and relays.

It holds no protocol and no server logic: it draws the traits ``explorer.Explorer`` syncs and
sends what the person does as custom messages (``connect``, ``run``, ``cancel``, ``code``) or
as the ``tool`` trait. Server text (names, titles, descriptions, labels, defaults, messages)
goes into the page through ``textContent`` and ``value`` only, never as markup; the one HTML it
sets is ``result_html``, which the kernel built and passed through nh3. Buttons get their
handlers as properties (no ``on*`` attribute). "Copy as code" writes the kernel's code to the
clipboard where the browser allows it (``navigator.clipboard``) and shows it in a ``<pre>``.
"""

from __future__ import annotations

__all__ = ["ESM"]

ESM = r"""
const mk = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
};

function render({ model, el }) {
  const box = mk("div", "mcpx");
  box.style.cssText = "font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;display:grid;gap:6px;max-width:900px;box-sizing:border-box;padding:2px";
  const serverRow = mk("div", "mcpx-server-row");
  serverRow.style.cssText = "display:flex;gap:6px;align-items:center";
  const target = mk("input", "mcpx-target");
  target.placeholder = "a command, a URL or a config name";
  target.style.flex = "1";
  target.style.minWidth = "0";
  target.value = model.get("target");
  const connect = mk("button", "mcpx-connect", "Connect");
  const server = mk("span", "mcpx-server");
  server.style.opacity = ".8";
  serverRow.append(target, connect, server);

  const toolRow = mk("div", "mcpx-tool-row");
  toolRow.style.cssText = "display:flex;gap:6px;align-items:center";
  const tool = mk("select", "mcpx-tool");
  toolRow.append(mk("span", "", "Tool"), tool);
  const about = mk("div", "mcpx-tool-description");
  about.style.cssText = "white-space:pre-wrap;opacity:.8";
  const form = mk("div", "mcpx-form");
  form.style.cssText = "display:grid;grid-template-columns:minmax(6em,max-content) minmax(0,1fr);gap:4px 8px;align-items:start";

  const actions = mk("div", "mcpx-actions");
  actions.style.cssText = "display:flex;gap:6px;align-items:center";
  const run = mk("button", "mcpx-run", "Run");
  const cancel = mk("button", "mcpx-cancel", "Cancel");
  const copy = mk("button", "mcpx-copy", "Copy as code");
  const bar = mk("progress", "mcpx-progress");
  bar.max = 1;
  bar.style.width = "160px";
  const status = mk("span", "mcpx-status");
  actions.append(run, cancel, copy, bar, status);
  const code = mk("pre", "mcpx-code");
  code.style.cssText = "display:none;background:var(--jp-layout-color2,#eee);padding:4px;margin:0";
  const result = mk("div", "mcpx-result jp-RenderedHTMLCommon");  // the notebook's table style
  box.append(serverRow, toolRow, about, form, actions, code, result);
  el.appendChild(box);

  let inputs = {};
  const drawTools = () => {
    tool.replaceChildren();
    for (const t of model.get("tools")) {
      const option = mk("option", "", t.title && t.title !== t.name ? `${t.name} (${t.title})` : t.name);
      option.value = t.name;
      tool.appendChild(option);
    }
    tool.value = model.get("tool");
    server.textContent = model.get("server");
  };
  const drawForm = () => {
    form.replaceChildren();
    inputs = {};
    about.textContent = model.get("description");
    for (const f of model.get("fields")) {
      const label = mk("label", "mcpx-label", f.title + (f.required ? " *" : ""));
      label.style.cssText = "max-width:16em;overflow-wrap:anywhere";
      const cell = mk("div", "mcpx-cell");
      cell.style.minWidth = "0";
      let input;
      if (f.kind === "choice" || f.kind === "multi" || f.kind === "boolean") {
        input = mk("select", "mcpx-input");
        if (f.kind === "multi") input.multiple = true;
        else {
          const unset = mk("option", "", f.default ? `(default: ${f.default})` : "");
          unset.value = "";  // left out: the server applies its default
          input.appendChild(unset);
        }
        const labels = f.kind === "boolean" ? ["yes", "no"] : f.options;
        labels.forEach((text, i) => {
          const option = mk("option", "", text);
          option.value = f.kind === "boolean" ? (i === 0 ? "y" : "n") : String(i + 1);
          input.appendChild(option);
        });
      } else {
        input = mk(f.kind === "json" ? "textarea" : "input", "mcpx-input");
        input.placeholder = f.default ? `default: ${f.default}` : f.hint;
      }
      input.dataset.name = f.name;
      input.style.width = "100%";
      input.style.boxSizing = "border-box";
      const note = mk("div", "mcpx-hint", [f.description, f.kind === "json" ? "JSON" : ""].filter(Boolean).join(" - "));
      note.style.opacity = ".7";
      const problem = mk("div", "mcpx-problem");
      problem.style.color = "#b00020";
      cell.append(input, note, problem);
      form.append(label, cell);
      inputs[f.name] = { input, problem, kind: f.kind };
    }
    drawProblems();
  };
  const drawProblems = () => {
    const problems = model.get("problems");
    for (const [name, { problem }] of Object.entries(inputs)) problem.textContent = problems[name] || "";
  };
  const values = () => {
    const out = {};
    for (const [name, { input, kind }] of Object.entries(inputs)) {
      out[name] = kind === "multi" ? Array.from(input.selectedOptions).map((o) => o.value).join(",") : input.value;
    }
    return out;
  };
  const drawStatus = () => {
    const state = model.get("status");
    const busy = state === "running" || state === "connecting";
    status.textContent = model.get("message");
    status.dataset.state = state;
    run.disabled = busy || !model.get("tool");
    copy.disabled = !model.get("tool");
    cancel.disabled = state !== "running";
    connect.disabled = busy;
    const p = model.get("progress");
    if (state === "running" && p < 0) bar.removeAttribute("value");
    else bar.value = state === "running" ? p : (state === "done" ? 1 : 0);
  };
  const drawResult = () => { result.innerHTML = model.get("result_html"); };  // nh3-clean HTML
  const drawCode = () => {
    const text = model.get("code");
    code.textContent = text;
    code.style.display = text ? "block" : "none";
    if (text && navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
  };

  connect.onclick = () => model.send({ kind: "connect", target: target.value });
  tool.onchange = () => { model.set("tool", tool.value); model.save_changes(); };
  run.onclick = () => model.send({ kind: "run", values: values() });
  cancel.onclick = () => model.send({ kind: "cancel" });
  copy.onclick = () => model.send({ kind: "code", values: values() });
  model.on("change:tools", drawTools);
  model.on("change:server", drawTools);
  model.on("change:fields", drawForm);
  model.on("change:description", drawForm);
  model.on("change:problems", drawProblems);
  model.on("change:status", drawStatus);
  model.on("change:message", drawStatus);
  model.on("change:progress", drawStatus);
  model.on("change:result_html", drawResult);
  model.on("change:code", drawCode);
  model.on("change:tool", () => { tool.value = model.get("tool"); drawStatus(); });
  drawTools(); drawForm(); drawStatus(); drawResult(); drawCode();
}
export default { render };
"""
