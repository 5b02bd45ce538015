"""What the CLI prints: readable text on a terminal, JSON with ``--json``.

Every piece of server text in the readable listings (names, descriptions, URIs, types,
instructions, capability names) goes through ``_text.clean``: one line each, escapes shown,
so a server cannot drive the terminal nor forge a line of the listing. Multi-line text (long
descriptions, instructions) is cut into cleaned lines, each indented under its entry.
Content (tool results, resources, prompt messages) is the data asked for: ``content`` cleans
it for a terminal (``terminal=True``) and leaves it as sent for a pipe or a file.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import attrs

from .. import types as t
from .._core.text import clean, clean_lines, inert_json

__all__ = ["content", "dumps", "info", "info_json", "jsonable", "prompt_messages", "prompts", "resources",
           "tool_result", "tools"]

#: How much of one name (a tool, a prompt, an argument, a type) a listing shows.
NAME = 200


def _camel(name: str) -> str:
    if name == "meta":
        return "_meta"
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def jsonable(value: Any) -> Any:
    """Our values as MCP-shaped JSON (camelCase keys, no None, bytes as base64)."""
    if isinstance(value, (t.ToolContent, t.PromptPart)) and value.raw:
        return value.raw
    if attrs.has(type(value)):
        out: dict[str, Any] = {}
        for a in attrs.fields(type(value)):
            if a.name == "raw" or a.metadata.get("wire") is False:  # not what the server sent
                continue
            item = getattr(value, a.name)
            if item is None or (a.name == "is_error" and item is False):
                continue
            out[_camel(a.name)] = jsonable(item)
        return out
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


def dumps(value: Any) -> str:
    """Indented JSON for a person; compact enough for ``jq``. Inert on a terminal (``inert_json``)."""
    return inert_json(json.dumps(jsonable(value), indent=2, ensure_ascii=False))


def _first_line(text: str | None) -> str:
    lines = clean_lines((text or "").strip())
    return lines[0] if lines else ""


def content(text: str, *, terminal: bool) -> str:
    """Server content for the output stream: cleaned line by line for a terminal, else as sent."""
    return "\n".join(clean_lines(text, None)) if terminal else text


def _params(schema: dict[str, Any]) -> str:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for name, prop in properties.items():
        kind = prop.get("type", "any") if isinstance(prop, dict) else "any"
        if isinstance(kind, list):
            kind = "|".join(map(str, kind))
        parts.append(f"{clean(name, NAME)}: {clean(kind, NAME)}" + ("" if name in required else "?"))
    return ", ".join(parts)


def tools(items: list[t.ToolDef], *, long: bool = False) -> str:
    """One tool per line: ``name(params)`` and the first line of its description."""
    if not items:
        return "(no tools)"
    lines = []
    for tool in items:
        lines.append(f"{clean(tool.name, NAME)}({_params(tool.input_schema)})")
        description = clean_lines((tool.description or "").strip()) if long else [_first_line(tool.description)]
        lines += [f"    {line}" for line in description if line]
    return "\n".join(lines)


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data + "=" * (-len(data) % 4)))
    except ValueError:
        return len(data) * 3 // 4


def tool_result(result: t.ToolResult, *, terminal: bool = True) -> str:
    """The result's text parts (as ``content`` shows them), with other parts described in brackets."""
    out = []
    for part in result.content:
        if part.type == "text":
            out.append(content(part.text or "", terminal=terminal))
        elif part.type in ("image", "audio"):
            out.append(f"[{part.type} {clean(part.mime_type or '', NAME)}, {_size(part.data)} bytes]")
        elif part.type == "resource" and part.resource is not None:
            res = part.resource
            out.append(content(res.text, terminal=terminal) if res.text is not None
                       else f"[resource {clean(res.uri)}, {len(res.blob or b'')} bytes]")
        elif part.type == "resource_link":
            out.append(f"[resource link {clean(part.uri)}]")
        else:
            out.append(f"[{clean(part.type, NAME)}]")
    if not any(out) and result.structured_content is not None:
        out.append(content(json.dumps(result.structured_content, indent=2, ensure_ascii=False), terminal=terminal))
    return "\n".join(out)


def resources(items: list[t.Resource], templates: list[t.ResourceTemplate]) -> str:
    """Resources, then templates, one per line."""
    lines = []
    for r in items:
        extra = f"  ({clean(r.mime_type, NAME)})" if r.mime_type else ""
        lines.append(f"{clean(r.uri)}  {clean(r.name, NAME)}{extra}")
        if r.description:
            lines.append(f"    {_first_line(r.description)}")
    if templates:
        lines.append("templates:")
        for tpl in templates:
            lines.append(f"  {clean(tpl.uri_template)}  {clean(tpl.name, NAME)}")
    return "\n".join(lines) or "(no resources)"


def prompts(items: list[t.Prompt]) -> str:
    """One prompt per line with its arguments (``?`` marks optional ones)."""
    if not items:
        return "(no prompts)"
    lines = []
    for p in items:
        args = ", ".join(clean(a.name, NAME) + ("" if a.required else "?") for a in p.arguments)
        lines.append(f"{clean(p.name, NAME)}({args})")
        if p.description:
            lines.append(f"    {_first_line(p.description)}")
    return "\n".join(lines)


def prompt_messages(description: str | None, messages: list[t.PromptMessage], *, terminal: bool = True) -> str:
    """``role: text`` for each message; the texts as ``content`` shows them."""
    lines = [f"# {clean(description)}"] if description else []
    for m in messages:
        for part in m.content:
            body = part.text if part.type == "text" else f"[{clean(part.type, NAME)}]"
            if part.type == "resource" and part.resource is not None and part.resource.text is not None:
                body = part.resource.text
            lines.append(f"{clean(m.role, NAME)}: {content(body or '', terminal=terminal)}")
    return "\n".join(lines)


def info(client: Any) -> str:
    """Server name and version, protocol version, capabilities, instructions."""
    server = client.server_info
    name = clean(f"{server.name} {server.version}".strip(), 400) if server else "(unnamed)"
    lines = [f"server:       {name}", f"protocol:     {clean(client.protocol_version, NAME)}"]
    caps = client.server_capabilities or {}
    described = []
    for key in sorted(caps):
        flags = [clean(k, NAME) for k, v in (caps[key] or {}).items() if v is True] if isinstance(caps[key], dict) else []
        described.append(f"{clean(key, NAME)} ({', '.join(flags)})" if flags else clean(key, NAME))
    lines.append(f"capabilities: {', '.join(described) or '(none)'}")
    if client.instructions:
        lines.append("instructions:")
        lines += [f"  {line}" for line in clean_lines(client.instructions.strip())]
    return "\n".join(lines)


def info_json(client: Any) -> dict[str, Any]:
    """``info`` as a JSON object."""
    return {
        "serverInfo": jsonable(client.server_info),
        "protocolVersion": client.protocol_version,
        "capabilities": client.server_capabilities,
        "instructions": client.instructions,
    }
