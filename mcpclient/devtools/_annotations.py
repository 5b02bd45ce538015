"""Python type annotations for JSON Schema nodes, as source text, for the generated stubs
(``mcpclient.devtools.stubs``): the ``TypedDict`` classes a module needs. Server text enters
them only through ``mcpclient._core.source`` (literals, identifiers, docstring lines)."""

from __future__ import annotations

import builtins
import re
from typing import Any, Iterable, Mapping

from .._core.source import doc_lines, identifier, literal

__all__ = ["MAX_DEPTH", "TYPE_WORDS", "Module", "camel", "wrapped_output"]

#: How deeply schemas nest before the rest is typed ``Any``.
MAX_DEPTH = 32
#: What the generated module imports or defines besides its classes: never taken by a name of it.
_MODULE_NAMES = frozenset({"annotations", "Any", "Literal", "NotRequired", "TypedDict", "ToolResult", "Stub",
                           "_cast", "__all__"})
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
#: The builtins a generated type names: a parameter never takes them (the ``_cast`` in the body
#: names its type as text, which a parameter of that name would shadow).
TYPE_WORDS = frozenset({"str", "int", "float", "bool", "list", "dict"})


def camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", text) if part)


def _member(value: Any) -> str | None:
    """A ``Literal[...]`` member for an enum or const value, or None when it cannot be one."""
    return literal(value) if value is None or type(value) in (bool, int, str) else None


class Module:
    """The classes of one generated module, and the names already taken in it."""

    def __init__(self) -> None:
        self.names: set[str] = set(_MODULE_NAMES) | set(dir(builtins))  # a class shadows none of them
        self.defined: set[str] = set(_MODULE_NAMES)  # what the module itself defines or imports
        self.classes: list[str] = []  # source blocks, dependencies first
        self.exported: list[str] = []

    def new_name(self, wanted: str) -> str:
        name = identifier(camel(wanted) or "Model", self.names, fallback="Model")
        if not name[0].isupper():
            self.names.discard(name)
            name = identifier("M" + name, self.names, fallback="Model")
        self.defined.add(name)
        return name

    def typed_dict(self, node: Mapping[str, Any], wanted: str, root: Mapping[str, Any], depth: int,
                   refs: tuple[str, ...]) -> str:
        properties = node["properties"]
        required = node.get("required")
        needed = {key for key in required if isinstance(key, str)} if isinstance(required, list) else set()
        fields = []
        for key in sorted(properties, key=str):
            kind = self.annotation(properties[key], wanted + "_" + str(key), root, depth + 1, refs)
            fields.append(f"    {literal(str(key))}: {kind if key in needed else f'NotRequired[{kind}]'},")
        name = self.new_name(wanted)
        doc = doc_lines(node["description"]) if isinstance(node.get("description"), str) else []
        block = [f"{name} = TypedDict({name!r}, {{", *fields, "})"]
        if doc:
            block.insert(0, "\n".join(f"#: {line}".rstrip() for line in doc))  # one comment a line
        self.classes.append("\n".join(block))
        self.exported.append(name)
        return name

    def annotation(self, node: Any, wanted: str, root: Mapping[str, Any], depth: int = 0,
                   refs: tuple[str, ...] = ()) -> str:
        """The type of a schema ``node``, as source text; ``TypedDict`` classes added as needed."""
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            return "Any"
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = _resolve(root, ref)
            if target is None or ref in refs:
                return "Any"  # outside the schema, or recursive
            return self.annotation(target, ref.rsplit("/", 1)[-1] or wanted, root, depth + 1, refs + (ref,))
        if "const" in node:
            member = _member(node["const"])
            return f"Literal[{member}]" if member is not None else "Any"
        enum = node.get("enum")
        if isinstance(enum, list) and enum:
            members = [_member(value) for value in enum]
            if all(member is not None for member in members):
                unique = list(dict.fromkeys(m for m in members if m is not None))
                return f"Literal[{', '.join(unique)}]"
            return "Any"
        for key in ("anyOf", "oneOf"):
            options = node.get(key)
            if isinstance(options, list) and options:
                return _union(self.annotation(option, wanted, root, depth + 1, refs) for option in options)
        kind = node.get("type")
        if isinstance(kind, list) and kind:
            return _union(self.annotation({**node, "type": k}, wanted, root, depth + 1, refs) for k in kind)
        if kind == "array":
            return f"list[{self.annotation(node.get('items'), wanted + '_item', root, depth + 1, refs)}]"
        if kind == "object" or (kind is None and isinstance(node.get("properties"), dict)):
            if isinstance(node.get("properties"), dict) and node["properties"]:
                return self.typed_dict(node, wanted, root, depth, refs)
            extra = node.get("additionalProperties")
            value = self.annotation(extra, wanted + "_value", root, depth + 1, refs) if isinstance(extra, dict) else "Any"
            return f"dict[str, {value}]"
        return _SCALARS.get(kind, "Any") if isinstance(kind, str) else "Any"


def _union(parts: Iterable[str]) -> str:
    unique = list(dict.fromkeys(parts))
    if "Any" in unique:
        return "Any"
    if "None" in unique:  # None last reads best: int | None
        unique = [part for part in unique if part != "None"] + ["None"]
    return " | ".join(unique)


def _resolve(root: Mapping[str, Any], ref: str) -> Any:
    """The node a local ``#/...`` reference names inside ``root``; None for any other."""
    if not ref.startswith("#"):
        return None
    target: Any = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            target = target.get(part) if isinstance(target, dict) else None
    return target


def wrapped_output(schema: Mapping[str, Any]) -> bool:
    """The official SDKs' ``{"result": x}`` output of a tool returning a non-object."""
    properties = schema.get("properties")
    title = schema.get("title")
    return schema.get("x-fastmcp-wrap-result") is True or (
        isinstance(properties, dict) and list(properties) == ["result"] and schema.get("required") == ["result"]
        and isinstance(title, str) and title.endswith("Output"))
