"""What the CLI prints: readable text on a terminal, JSON with ``--json``."""

from __future__ import annotations

import base64
import json
from typing import Any

import attrs

from .. import types as t

__all__ = ["dumps", "info", "info_json", "jsonable", "prompt_messages", "prompts", "resources", "tool_result", "tools"]


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
            if a.name == "raw":
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
    """Indented JSON for a person; compact enough for ``jq``."""
    return json.dumps(jsonable(value), indent=2, ensure_ascii=False)


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def _params(schema: dict[str, Any]) -> str:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for name, prop in properties.items():
        kind = prop.get("type", "any") if isinstance(prop, dict) else "any"
        if isinstance(kind, list):
            kind = "|".join(map(str, kind))
        parts.append(f"{name}: {kind}" + ("" if name in required else "?"))
    return ", ".join(parts)


def tools(items: list[t.ToolDef], *, long: bool = False) -> str:
    """One tool per line: ``name(params)`` and the first line of its description."""
    if not items:
        return "(no tools)"
    lines = []
    for tool in items:
        lines.append(f"{tool.name}({_params(tool.input_schema)})")
        description = tool.description.strip() if long else _first_line(tool.description)
        if description:
            lines += [f"    {line}" for line in description.splitlines()]
    return "\n".join(lines)


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data + "=" * (-len(data) % 4)))
    except ValueError:
        return len(data) * 3 // 4


def tool_result(result: t.ToolResult) -> str:
    """The result's text parts, with other parts described in brackets."""
    out = []
    for part in result.content:
        if part.type == "text":
            out.append(part.text)
        elif part.type in ("image", "audio"):
            out.append(f"[{part.type} {part.mime_type or ''}, {_size(part.data)} bytes]")
        elif part.type == "resource" and part.resource is not None:
            res = part.resource
            out.append(res.text if res.text is not None else f"[resource {res.uri}, {len(res.blob or b'')} bytes]")
        elif part.type == "resource_link":
            out.append(f"[resource link {part.uri}]")
        else:
            out.append(f"[{part.type}]")
    if not any(out) and result.structured_content is not None:
        out.append(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    return "\n".join(out)


def resources(items: list[t.Resource], templates: list[t.ResourceTemplate]) -> str:
    """Resources, then templates, one per line."""
    lines = []
    for r in items:
        extra = f"  ({r.mime_type})" if r.mime_type else ""
        lines.append(f"{r.uri}  {r.name}{extra}")
        if r.description:
            lines.append(f"    {_first_line(r.description)}")
    if templates:
        lines.append("templates:")
        for tpl in templates:
            lines.append(f"  {tpl.uri_template}  {tpl.name}")
    return "\n".join(lines) or "(no resources)"


def prompts(items: list[t.Prompt]) -> str:
    """One prompt per line with its arguments (``?`` marks optional ones)."""
    if not items:
        return "(no prompts)"
    lines = []
    for p in items:
        args = ", ".join(a.name + ("" if a.required else "?") for a in p.arguments)
        lines.append(f"{p.name}({args})")
        if p.description:
            lines.append(f"    {_first_line(p.description)}")
    return "\n".join(lines)


def prompt_messages(description: str | None, messages: list[t.PromptMessage]) -> str:
    """``role: text`` for each message."""
    lines = [f"# {description}"] if description else []
    for m in messages:
        for part in m.content:
            body = part.text if part.type == "text" else f"[{part.type}]"
            if part.type == "resource" and part.resource is not None and part.resource.text is not None:
                body = part.resource.text
            lines.append(f"{m.role}: {body}")
    return "\n".join(lines)


def info(client: Any) -> str:
    """Server name and version, protocol version, capabilities, instructions."""
    server = client.server_info
    name = f"{server.name} {server.version}".strip() if server else "(unnamed)"
    lines = [f"server:       {name}", f"protocol:     {client.protocol_version}"]
    caps = client.server_capabilities or {}
    described = []
    for key in sorted(caps):
        flags = [k for k, v in (caps[key] or {}).items() if v is True] if isinstance(caps[key], dict) else []
        described.append(f"{key} ({', '.join(flags)})" if flags else key)
    lines.append(f"capabilities: {', '.join(described) or '(none)'}")
    if client.instructions:
        lines.append("instructions:")
        lines += [f"  {line}" for line in client.instructions.strip().splitlines()]
    return "\n".join(lines)


def info_json(client: Any) -> dict[str, Any]:
    """``info`` as a JSON object."""
    return {
        "serverInfo": jsonable(client.server_info),
        "protocolVersion": client.protocol_version,
        "capabilities": client.server_capabilities,
        "instructions": client.instructions,
    }
