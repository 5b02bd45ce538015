"""HTTP headers that mirror a modern (2026-07-28) request's body.

``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` go on every request; tool parameters
whose schema carries ``x-mcp-header`` are mirrored as ``Mcp-Param-{Name}``. Values that are
not plain visible ASCII travel in the ``=?base64?...?=`` sentinel form. Tools whose
``x-mcp-header`` annotations break the rules are refused, so one bad definition never makes
the others unusable.
"""

from __future__ import annotations

import base64
import logging
import re
from typing import Any, Iterable

from .. import types as t
from .modern import PROTOCOL_VERSION_KEY

__all__ = [
    "InvalidToolHeaders",
    "ToolHeaders",
    "encode_value",
    "request_headers",
    "tool_header_paths",
]

log = logging.getLogger("mcpclient")

#: Requests whose ``Mcp-Name`` header mirrors ``params.name``, ``params.uri`` or (the tasks
#: extension, so that intermediaries can route to the server holding the task) ``params.taskId``.
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
                 "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_PLAIN = re.compile(r"^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$")
_SAFE_INTEGER = 2**53 - 1
# Keywords holding subschemas: an annotation below any of them is not statically reachable.
_SUBSCHEMA = ("items", "prefixItems", "additionalProperties", "oneOf", "anyOf", "allOf", "not", "if",
              "then", "else", "contains", "unevaluatedProperties", "unevaluatedItems", "propertyNames")
_SUBSCHEMA_MAPS = ("$defs", "definitions", "patternProperties", "dependentSchemas")


class InvalidToolHeaders(ValueError):
    """A tool's ``x-mcp-header`` annotations break the spec's rules."""


def encode_value(value: Any) -> str:
    """A header value for a string, integer or boolean, in sentinel Base64 when needed."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    else:
        text = str(value)
    if _PLAIN.match(text) and not (text.startswith("=?base64?") and text.endswith("?=")):
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def tool_header_paths(schema: Any) -> list[tuple[str, tuple[str, ...]]]:
    """The ``(header name, property path)`` pairs a tool's input schema declares.

    Raises ``InvalidToolHeaders`` when an annotation is empty, not an HTTP token, duplicated
    (case-insensitively), on a non-primitive type, or not reachable through ``properties``
    keys alone.
    """
    found: list[tuple[str, tuple[str, ...]]] = []
    if not isinstance(schema, dict):
        return found
    _walk(schema, (), found, reachable=True)
    seen: set[str] = set()
    for name, _ in found:
        if name.lower() in seen:
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is used more than once")
        seen.add(name.lower())
    return found


def _walk(node: Any, path: tuple[str, ...], found: list[tuple[str, tuple[str, ...]]], *, reachable: bool) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item, path, found, reachable=False)
        return
    if not isinstance(node, dict):
        return
    if "x-mcp-header" in node:
        name = node["x-mcp-header"]
        if not reachable or not path:
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is not reachable through properties alone")
        if not isinstance(name, str) or not name or not _TOKEN.match(name):
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is not a valid HTTP header name")
        kind = node.get("type")
        if kind not in ("string", "integer", "boolean"):
            raise InvalidToolHeaders(f"x-mcp-header {name!r} is on a parameter of type {kind!r}")
        found.append((name, path))
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            for prop, sub in value.items():
                _walk(sub, path + (prop,), found, reachable=reachable)
        elif key in _SUBSCHEMA:
            _walk(value, path, found, reachable=False)
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                _walk(sub, path, found, reachable=False)


class ToolHeaders:
    """Which tools mirror which arguments into headers, learned from ``tools/list``."""

    def __init__(self) -> None:
        self._paths: dict[str, list[tuple[str, tuple[str, ...]]]] = {}

    def learn(self, tools: Iterable[t.ToolDef]) -> list[t.ToolDef]:
        """Remember the header paths of valid tools; return the tools minus invalid ones."""
        valid: list[t.ToolDef] = []
        paths: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for tool in tools:
            try:
                found = tool_header_paths(tool.input_schema)
            except InvalidToolHeaders as exc:
                log.warning("ignoring tool %r: %r", tool.name, str(exc))
                continue
            if found:
                paths[tool.name] = found
            valid.append(tool)
        self._paths = paths
        return valid

    def for_call(self, name: str, arguments: Any) -> dict[str, str]:
        headers: dict[str, str] = {}
        for header, path in self._paths.get(name, ()):
            value: Any = arguments
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if value is None or isinstance(value, (dict, list)):
                continue
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _SAFE_INTEGER:
                continue  # outside the safe range: the tool definition should not allow it
            headers[f"Mcp-Param-{header}"] = encode_value(value)
        return headers


def request_headers(message: dict[str, Any], tools: ToolHeaders | None = None) -> dict[str, str]:
    """The headers a modern POST of ``message`` carries (empty for a legacy message)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    method = message.get("method")
    if not isinstance(version, str) or not isinstance(method, str):
        return {}
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    field = NAMED_METHODS.get(method)
    if field is not None and isinstance(params, dict) and isinstance(params.get(field), str):
        headers["Mcp-Name"] = encode_value(params[field])
    if method == "tools/call" and tools is not None and isinstance(params, dict):
        name = params.get("name")
        if isinstance(name, str):
            headers.update(tools.for_call(name, params.get("arguments")))
    return headers
