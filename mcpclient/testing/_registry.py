"""What a FakeServer offers: tools, resources, templates, prompts, completions.

Each registration turns the user's Python value into MCP wire JSON here, so the fake server
itself only routes requests.
"""

from __future__ import annotations

import base64
import inspect
import json
import re
import typing
from typing import Any, Callable, Mapping, Sequence

from .. import types as t
from .._core.exceptions import RPCError
from .._protocol.wire import unstructure

__all__ = [
    "PromptEntry",
    "ResourceEntry",
    "TemplateEntry",
    "ToolEntry",
    "content_to_wire",
    "prompt_messages_to_wire",
    "schema_from_signature",
    "tool_result_to_wire",
]

_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
}


def _json_type(annotation: Any) -> dict[str, Any]:
    origin = typing.get_origin(annotation) or annotation
    if origin in _JSON_TYPES:
        return {"type": _JSON_TYPES[origin]}
    return {}


def schema_from_signature(fn: Callable[..., Any]) -> dict[str, Any]:
    """A JSON schema for ``fn``'s parameters: annotated types, no default means required.

    A parameter named ``ctx`` is the call context, never part of the schema.
    """
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable string annotations: fall back to untyped properties
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        if param.name == "ctx" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        properties[param.name] = _json_type(hints.get(param.name, param.annotation))
        if param.default is param.empty:
            required.append(param.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _wants_ctx(fn: Callable[..., Any]) -> bool:
    try:
        return "ctx" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _clean(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v is not None}




def content_to_wire(part: t.ToolContent | str | Mapping[str, Any]) -> dict[str, Any]:
    """One content block in wire form, from a ``ToolContent``, a string or a wire dict."""
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, Mapping):
        return dict(part)
    if part.raw:
        return dict(part.raw)
    if part.type == "text":
        return {"type": "text", "text": part.text}
    if part.type in ("image", "audio"):
        return _clean({"type": part.type, "data": part.data, "mimeType": part.mime_type})
    if part.type == "resource" and part.resource is not None:
        return {"type": "resource", "resource": unstructure(part.resource)}
    if part.type == "resource_link":
        return _clean({"type": "resource_link", "uri": part.uri, "name": part.name or "", "mimeType": part.mime_type})
    return {"type": part.type}


def tool_result_to_wire(value: Any, *, is_error: bool = False) -> dict[str, Any]:
    """What a tool function returned, as a ``tools/call`` result.

    ``str`` is one text block; a ``ToolResult`` or wire dict with ``content`` is sent as is;
    ``ToolContent`` parts (or a list of them and strings) become the content; any other JSON
    value is sent as its JSON text, and a ``dict`` also as ``structuredContent``.
    """
    if isinstance(value, t.ToolResult):
        wire: dict[str, Any] = {"content": [content_to_wire(p) for p in value.content]}
        if value.is_error or is_error:
            wire["isError"] = True
        if value.structured_content is not None:
            wire["structuredContent"] = value.structured_content
        if value.meta:
            wire["_meta"] = value.meta
        return wire
    if isinstance(value, Mapping) and "content" in value:
        wire = dict(value)
        if is_error:
            wire["isError"] = True
        return wire
    structured = None
    if isinstance(value, (str, t.ToolContent)):
        content = [content_to_wire(value)]
    elif isinstance(value, list) and value and all(isinstance(p, (str, t.ToolContent)) for p in value):
        content = [content_to_wire(p) for p in value]
    elif value is None:
        content = []
    else:
        content = [{"type": "text", "text": json.dumps(value)}]
        if isinstance(value, Mapping):
            structured = dict(value)
    wire = {"content": content}
    if structured is not None:
        wire["structuredContent"] = structured
    if is_error:
        wire["isError"] = True
    return wire


def prompt_messages_to_wire(value: Any) -> list[dict[str, Any]]:
    """A prompt function's return value as wire messages.

    ``str`` is one user message; a list may hold strings (user messages), ``PromptMessage``
    objects, ``(role, text)`` pairs or wire dicts.
    """
    items = value if isinstance(value, list) else [value]
    messages: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            messages.append({"role": "user", "content": {"type": "text", "text": item}})
        elif isinstance(item, tuple) and len(item) == 2:
            messages.append({"role": item[0], "content": {"type": "text", "text": item[1]}})
        elif isinstance(item, t.PromptMessage):
            parts = [p.raw or {"type": "text", "text": p.text} for p in item.content]
            messages.append({"role": item.role, "content": parts[0] if len(parts) == 1 else parts})
        elif isinstance(item, Mapping):
            messages.append(dict(item))
        else:
            raise TypeError(f"a prompt function returned {type(item).__name__}; return str or messages")
    return messages


class ToolEntry:
    """A registered tool: its wire definition and how to produce a result."""

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any] | None,
        *,
        description: str | None,
        input_schema: Mapping[str, Any] | None,
        result: Any,
        is_error: bool,
        error: RPCError | None,
        latency: float | None,
        annotations: Mapping[str, Any] | None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.meta = dict(meta) if meta else None
        self.fn = fn
        self.wants_ctx = fn is not None and _wants_ctx(fn)
        doc = inspect.getdoc(fn) if fn is not None else None
        self.description = description if description is not None else (doc or "")
        if input_schema is not None:
            self.input_schema = dict(input_schema)
        elif fn is not None:
            self.input_schema = schema_from_signature(fn)
        else:
            self.input_schema = {"type": "object", "properties": {}}
        self.result = result
        self.is_error = is_error
        self.error = error
        self.latency = latency
        self.annotations = dict(annotations) if annotations else None

    def definition(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"name": self.name, "inputSchema": self.input_schema}
        if self.description:
            wire["description"] = self.description
        if self.annotations:
            wire["annotations"] = self.annotations
        if self.meta:
            wire["_meta"] = self.meta
        return wire


class ResourceEntry:
    """A registered resource: fixed contents or a function returning str/bytes."""

    def __init__(
        self,
        uri: str,
        content: str | bytes | Callable[[], str | bytes] | None,
        *,
        name: str | None,
        description: str | None,
        mime_type: str | None,
    ) -> None:
        self.uri = uri
        self.content = content
        self.name = name or uri.rsplit("/", 1)[-1] or uri
        self.description = description
        self.mime_type = mime_type

    def definition(self) -> dict[str, Any]:
        return _clean({"uri": self.uri, "name": self.name, "description": self.description,
                       "mimeType": self.mime_type})

    def read(self, uri: str, variables: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
        content = self.content
        if callable(content):
            content = content(**(variables or {}))
        if isinstance(content, list):  # already wire contents
            return content
        wire: dict[str, Any] = {"uri": uri}
        if self.mime_type:
            wire["mimeType"] = self.mime_type
        if isinstance(content, (bytes, bytearray)):
            wire["blob"] = base64.b64encode(bytes(content)).decode("ascii")
        else:
            wire["text"] = "" if content is None else str(content)
        return [wire]


class TemplateEntry(ResourceEntry):
    """A registered resource template; ``{name}`` variables match one path segment."""

    def __init__(self, uri_template: str, fn: Callable[..., str | bytes], **kwargs: Any) -> None:
        super().__init__(uri_template, fn, **kwargs)
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(uri_template))
        self.pattern = re.compile(f"^{pattern}$")

    def definition(self) -> dict[str, Any]:
        return _clean({"uriTemplate": self.uri, "name": self.name, "description": self.description,
                       "mimeType": self.mime_type})

    def match(self, uri: str) -> dict[str, str] | None:
        found = self.pattern.match(uri)
        return found.groupdict() if found else None


class PromptEntry:
    """A registered prompt: a function (or fixed text) rendering its messages."""

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any] | str,
        *,
        description: str | None,
        arguments: Sequence[t.PromptArgument | str | Mapping[str, Any]] | None,
    ) -> None:
        self.name = name
        self.fn = fn
        if description is None and callable(fn):
            description = inspect.getdoc(fn)
        self.description = description
        if arguments is None and callable(fn):
            params = inspect.signature(fn).parameters.values()
            arguments = [{"name": p.name, "required": p.default is p.empty} for p in params]
        self.arguments = [_argument_to_wire(a) for a in arguments or []]

    def definition(self) -> dict[str, Any]:
        return _clean({"name": self.name, "description": self.description, "arguments": self.arguments})

    def render(self, arguments: Mapping[str, str]) -> dict[str, Any]:
        missing = [a["name"] for a in self.arguments if a.get("required") and a["name"] not in arguments]
        if missing:
            raise RPCError(RPCError.INVALID_PARAMS, f"prompt {self.name!r} needs argument(s) {', '.join(missing)}")
        value = self.fn(**arguments) if callable(self.fn) else self.fn
        return _clean({"description": self.description, "messages": prompt_messages_to_wire(value)})


def _argument_to_wire(arg: t.PromptArgument | str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(arg, str):
        return {"name": arg, "required": True}
    if isinstance(arg, t.PromptArgument):
        return _clean({"name": arg.name, "description": arg.description, "required": arg.required})
    return dict(arg)
