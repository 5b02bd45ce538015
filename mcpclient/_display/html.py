"""How results look in Jupyter: HTML for tool results, resources, prompts, tools.

Built from escaped text: every server string goes through ``html.escape``, images and audio
only as ``data:`` URIs of a raster or audio type with strict base64, links only for http(s)
and mailto URLs. A ``text/markdown`` resource is rendered by ``sanitize.markdown_html``
(shown as escaped source without the ``notebook`` extra). Every HTML string leaves through
``sanitize.clean`` (nh3 with an allow-list), so a mistake here is still caught there. There
is no Markdown output (``_repr_markdown_``): a front end renders that unsanitised too.
"""

from __future__ import annotations

import base64
import html
import json
from typing import Any, Iterable

from .. import types as t
from .sanitize import clean, data_uri, markdown_html, web_url

__all__ = ["capabilities_html", "implementation_html", "render", "to_html"]

_ERROR_STYLE = "color:#b00020;border-left:3px solid #b00020;padding-left:6px"
_PRE = "white-space:pre-wrap;margin:2px 0"


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _pre(text: str, style: str = "") -> str:
    return f'<pre style="{_PRE};{style}">{_esc(text)}</pre>'


def _media_html(kind: str, mime: str | None, data: str) -> str:
    uri = data_uri(mime, data, kind)
    if uri is None:
        return _pre(f"[{kind} {mime or ''}]")
    if kind == "image":
        return f'<img src="{uri}" alt="{_esc(mime)}" style="max-width:100%"/>'
    return f'<audio controls src="{uri}"></audio>'


def _link(uri: str | None, label: str | None = None) -> str:
    text = _esc(label or uri or "")
    if uri and web_url(uri):
        return f'<a href="{_esc(uri)}" target="_blank" rel="noopener noreferrer">{text}</a>'
    return f"<code>{text}</code>"


def _contents_html(res: t.ResourceContents) -> str:
    head = f'<div style="opacity:.7">{_link(res.uri)}{f" ({_esc(res.mime_type)})" if res.mime_type else ""}</div>'
    if res.text is not None:
        rendered = markdown_html(res.text) if _is_markdown(res) else None
        return head + (_pre(res.text) if rendered is None else f"<div>{rendered}</div>")
    blob = res.blob or b""
    if (res.mime_type or "").startswith("image/"):
        return head + _media_html("image", res.mime_type, base64.b64encode(blob).decode("ascii"))
    return head + _pre(f"[{len(blob)} bytes]")


def _part_html(part: t.ToolContent | t.PromptPart) -> str:
    if part.type == "text":
        return _pre(part.text)
    if part.type in ("image", "audio"):
        data = part.data if isinstance(part.data, str) else base64.b64encode(part.data).decode("ascii")
        return _media_html(part.type, part.mime_type, data)
    if part.type == "resource" and part.resource is not None:
        return _contents_html(part.resource)
    if part.type == "resource_link":
        return f"<div>resource: {_link(part.uri, part.name or part.uri)}</div>"
    return _pre(json.dumps(part.raw or {"type": part.type}, ensure_ascii=False))


def _box(body: str, style: str = "") -> str:
    return f'<div class="mcpclient" style="font-family:inherit;{style}">{body}</div>'


def _params_html(schema: dict[str, Any]) -> str:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    rows = []
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type", "")
        rows.append(
            f"<tr><td><code>{_esc(name)}</code>{'' if name in required else '?'}</td>"
            f"<td>{_esc(kind if isinstance(kind, str) else '|'.join(map(str, kind)))}</td>"
            f"<td>{_esc(prop.get('description', ''))}</td></tr>"
        )
    return f"<table>{''.join(rows)}</table>" if rows else ""


def _tool_html(tool: t.ToolDef) -> str:
    return (f"<div><b><code>{_esc(tool.name)}</code></b> {_esc(tool.description)}"
            f"{_params_html(tool.input_schema)}</div>")


def _is_markdown(res: t.ResourceContents) -> bool:
    return (res.mime_type or "").split(";")[0].strip().lower() == "text/markdown"


def to_html(value: Any) -> str:
    """HTML for one of our values (or a list of them), cleaned by ``sanitize.clean``."""
    return clean(_html(value))


def _html(value: Any) -> str:
    if isinstance(value, t.ToolResult):
        body = "".join(_part_html(p) for p in value.content)
        if value.structured_content is not None and not any(p.type == "text" for p in value.content):
            body += _pre(json.dumps(value.structured_content, indent=2, ensure_ascii=False))
        if value.is_error:
            return _box(f"<b>tool error</b>{body}", _ERROR_STYLE)
        return _box(body or "<i>(empty result)</i>")
    if isinstance(value, t.ResourceContents):
        return _box(_contents_html(value))
    if isinstance(value, t.PromptMessage):
        return _box(f"<b>{_esc(value.role)}</b>" + "".join(_part_html(p) for p in value.content))
    if isinstance(value, t.ToolDef):
        return _box(_tool_html(value))
    if isinstance(value, t.Prompt):
        args = ", ".join(a.name + ("" if a.required else "?") for a in value.arguments)
        return _box(f"<div><b><code>{_esc(value.name)}({_esc(args)})</code></b> {_esc(value.description or '')}</div>")
    if isinstance(value, t.Resource):
        mime = f" ({_esc(value.mime_type)})" if value.mime_type else ""
        return _box(f"<div>{_link(value.uri)} {_esc(value.name)}{mime} {_esc(value.description or '')}</div>")
    if isinstance(value, list) and all(isinstance(v, t.ToolDef) for v in value):
        return _box("".join(_tool_html(v) for v in value) or "<i>(no tools)</i>")
    if isinstance(value, list):
        return _box("".join(_html(v) for v in value))
    return _pre(repr(value))


def _rows(rows: Iterable[tuple[str, Any]]) -> str:
    cells = "".join(f"<tr><th style=\"text-align:left\">{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in rows if v)
    return f"<table>{cells}</table>"


def implementation_html(value: t.Implementation) -> str:
    return clean(_box(_rows([("name", value.name), ("version", value.version), ("title", value.title),
                       ("description", value.description), ("website", value.website_url)])))


def capabilities_html(value: dict[str, Any]) -> str:
    """One row per capability; its options (``listChanged``, ``subscribe``...) beside it."""
    def options(node: Any) -> str:
        if isinstance(node, dict) and node:
            return ", ".join(k if v in (True, {}) else f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in node.items())
        return "yes"
    return clean(_box(_rows([(name, options(node)) for name, node in value.items()]) if value else "<i>(no capabilities)</i>"))


def render(value: Any) -> str:
    """The models' ``_repr_html_`` (installed below: the models never import this module)."""
    if isinstance(value, t.Implementation):
        return implementation_html(value)
    if isinstance(value, t.Capabilities):
        return capabilities_html(value)
    return to_html(value)


t.set_html_renderer(render)
