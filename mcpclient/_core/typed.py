"""Typed views of structured tool output: ``ToolResult.data`` and ``ToolResult.structured(cls)``.

``data`` builds frozen attrs classes from the tool's ``outputSchema`` at the first use of that
schema (cached per schema, so ``import mcpclient`` pays nothing) and fills them with cattrs:

- an object with ``properties`` becomes a class named after its ``title`` (or its ``$defs``
  entry, or the property that holds it); a property outside ``required`` is optional, ``None``
  (or the schema's ``default``) when absent. Property names that are not Python identifiers are
  renamed (``first-name`` -> ``first_name``, ``class`` -> ``class_``); keys the schema does not
  declare are dropped.
- an array with ``items`` becomes a ``list`` of its items' type; ``anyOf``/``oneOf``/``type``
  lists of one type and ``null`` become that type or ``None``.
- ``$ref`` is followed inside the schema only (``#/$defs/...``); a recursive schema, or one
  nested deeper than ``MAX_DEPTH``, is refused with ``StructuredOutputError``.
- enums, consts, formats (``date-time``, ``uri``, ...) stay the plain JSON values; whatever the
  schema leaves open (no type, unions of several types, outside references) stays as sent
  (``dict``, ``list``, ...).

Output that the official SDKs wrap as ``{"result": x}`` (a tool returning a non-object) is
unwrapped, as fastmcp's ``.data`` does: the marker ``x-fastmcp-wrap-result``, or the official
SDK's shape (a title ending in ``Output`` with ``result`` as its one, required, property).

Scalars are strict: a string is never made an ``int`` nor a number a ``str`` (cattrs' own
default would convert them), so a misfit is an error naming its path, not a quiet change.
"""

from __future__ import annotations

import copy
import datetime
import inspect
import json
import keyword
import re
import unicodedata
import threading
from collections import OrderedDict, abc
from typing import Any, Optional, TypeVar, get_origin

import attrs
from cattrs import BaseValidationError, Converter, transform_error
from cattrs.cols import list_structure_factory
from cattrs.errors import StructureHandlerNotFoundError
from cattrs.gen import make_dict_structure_fn, override
from cattrs.preconf.json import make_converter

from .exceptions import StructuredOutputError

__all__ = ["MAX_DEPTH", "structured", "typed_view", "unwrap"]

T = TypeVar("T")

#: How deeply the schema's objects and arrays may nest before a typed view is refused.
MAX_DEPTH = 32
#: Past this JSON nesting a schema is not made a cache key (it would take too deep a recursion).
_KEY_DEPTH = 8 * MAX_DEPTH
#: How many schemas' classes are kept (a server whose schemas change cannot grow memory).
_CACHE_SIZE = 256

_cache: OrderedDict[str, tuple[Any, Converter]] = OrderedDict()
_cache_lock = threading.Lock()
_user_converter: Converter | None = None


def unwrap(schema: Any, value: Any) -> tuple[Any, Any]:
    """The schema node and value a wrapped ``{"result": x}`` output stands for; else both as given."""
    if isinstance(schema, dict) and isinstance(value, dict) and "result" in value and _wrapped(schema):
        return schema["properties"]["result"], value["result"]
    return schema, value


def _wrapped(schema: dict[str, Any]) -> bool:
    if schema.get("x-fastmcp-wrap-result") is True:
        return True
    properties = schema.get("properties")
    title = schema.get("title")
    return (
        isinstance(properties, dict) and list(properties) == ["result"] and schema.get("required") == ["result"]
        and isinstance(title, str) and title.endswith("Output")
    )


def typed_view(schema: Any, value: Any) -> Any:
    """``value`` as objects of the classes made from ``schema``; ``value`` itself without one."""
    if not isinstance(schema, dict):
        return value
    node, value = unwrap(schema, value)
    built, converter = _built(schema, node)
    return _convert(converter, value, built)


def structured(value: Any, cls: Any, schema: Any = None) -> Any:
    """``value`` (unwrapped as ``schema`` says) converted into the user's ``cls`` with cattrs."""
    global _user_converter
    _, value = unwrap(schema, value)
    if _user_converter is None:
        _user_converter = _strict_converter()  # a race makes two, which is harmless
    return _convert(_user_converter, value, cls)


def _convert(converter: Converter, value: Any, cls: Any) -> Any:
    try:
        return converter.structure(value, cls)
    except BaseValidationError as exc:
        errors = transform_error(exc, path="$")
        path = errors[0].rpartition(" @ ")[2] if errors else "$"
        shown = "; ".join(_shorten(error) for error in errors[:5])
        raise StructuredOutputError(
            f"the structured output does not fit {_name(cls)}: {shown}", path=path, errors=errors
        ) from exc
    except StructureHandlerNotFoundError as exc:
        raise StructuredOutputError(
            f"cannot build {_name(cls)}: give an attrs class, a dataclass, a TypedDict or a typing"
            f" container of them ({exc})"
        ) from exc
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        if value is None:
            raise StructuredOutputError(
                f"the result has no structured content to make a {_name(cls)} of: read its text or content"
            ) from exc
        raise StructuredOutputError(f"the structured output does not fit {_name(cls)} at $: {exc}") from exc


def _shorten(error: str, limit: int = 300) -> str:
    """One misfit for the message: a path a thousand levels deep is cut in its middle."""
    return error if len(error) <= limit else error[: limit // 2] + " ... " + error[-limit // 2:]


def _name(cls: Any) -> str:
    return cls.__name__ if isinstance(cls, type) and get_origin(cls) is None else repr(cls)


def _built(schema: dict[str, Any], node: Any) -> tuple[Any, Converter]:
    if _json_deeper_than(schema, _KEY_DEPTH):  # json.dumps would hit the recursion limit
        builder = _Builder(schema)  # which refuses it by MAX_DEPTH, naming the path, or builds it
        return builder.type_of(node, str(schema.get("title") or "Output"), "$", 0), builder.converter
    key = json.dumps([schema, node], sort_keys=True, default=repr)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    builder = _Builder(schema)
    built = (builder.type_of(node, str(schema.get("title") or "Output"), "$", 0), builder.converter)
    with _cache_lock:
        _cache[key] = built
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return built


def _json_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` dicts and lists, without recursing."""
    level = [value]
    for _ in range(limit + 1):
        level = [child for item in level if isinstance(item, (dict, list))
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return True


class _Builder:
    """Makes the classes of one schema; ``$ref`` targets are built once and shared."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.converter = _strict_converter()
        self._refs: dict[str, Any] = {}
        self._building: set[str] = set()

    def type_of(self, node: Any, name: str, path: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise StructuredOutputError(
                f"the outputSchema nests deeper than {MAX_DEPTH} levels at {path}: no typed view is made;"
                " use structured_content", path=path,
            )
        if not isinstance(node, dict) or "enum" in node or "const" in node:
            return Any
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref, path, depth)
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                return self._union(node[key], name, path, depth)
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in node:
            return self.type_of(all_of[0], name, path, depth + 1)
        kind = node.get("type")
        if isinstance(kind, list):
            return self._union([{**node, "type": k} for k in kind], name, path, depth)
        if kind == "object" or (kind is None and "properties" in node):
            return self._object(node, name, path, depth)
        if kind == "array":
            items = node.get("items")
            if isinstance(items, dict):
                return list[self.type_of(items, name + "Item", path + "[]", depth + 1)]  # type: ignore[misc]
            return list[Any]
        return _SCALARS.get(kind, Any) if isinstance(kind, str) else Any

    def _union(self, options: list[Any], name: str, path: str, depth: int) -> Any:
        def is_null(option: Any) -> bool:
            return isinstance(option, dict) and option.get("type") == "null"

        rest = [option for option in options if not is_null(option)]
        if len(rest) != 1:
            return Any  # several types: cattrs cannot tell them apart, so the value stays as sent
        inner = self.type_of(rest[0], name, path, depth + 1)
        return Optional[inner] if len(rest) < len(options) and inner is not Any else inner  # noqa: UP045

    def _ref(self, ref: str, path: str, depth: int) -> Any:
        if ref in self._refs:
            return self._refs[ref]
        if not ref.startswith("#"):
            return Any  # outside the schema: never fetched, left as sent
        if ref in self._building:
            raise StructuredOutputError(
                f"the outputSchema is recursive ({ref} at {path} refers to itself): no typed view is made;"
                " use structured_content or structured() with a class of your own", path=path,
            )
        target: Any = self.root
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                target = target.get(part) if isinstance(target, dict) else None
        if target is None:
            return Any
        self._building.add(ref)
        try:
            built = self.type_of(target, ref.rsplit("/", 1)[-1], path, depth + 1)
        finally:
            self._building.discard(ref)
        self._refs[ref] = built
        return built

    def _object(self, node: dict[str, Any], name: str, path: str, depth: int) -> Any:
        properties = node.get("properties")
        if not isinstance(properties, dict) or not properties:
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return dict[str, self.type_of(extra, name + "Value", path + ".*", depth + 1)]  # type: ignore[misc]
            return dict[str, Any]
        listed = node.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []
        fields: dict[str, Any] = {}
        renames: dict[str, str] = {}
        for key, sub in properties.items():
            attribute = _identifier(str(key), fields)
            kind = self.type_of(sub, _camel(str(key)), f"{path}.{key}", depth + 1)
            if key in required:
                fields[attribute] = attrs.field(type=kind)
            else:
                optional: Any = Optional[kind]  # noqa: UP045  # a runtime type, not an annotation
                fields[attribute] = attrs.field(type=optional, default=_default(sub))
            renames[attribute] = str(key)
        title = node.get("title")
        cls = attrs.make_class(_class_name(title if isinstance(title, str) else name), fields, frozen=True, kw_only=True)
        overrides = {attribute: override(rename=key) for attribute, key in renames.items()}
        self.converter.register_structure_hook(cls, make_dict_structure_fn(cls, self.converter, **overrides))  # type: ignore[arg-type]
        return cls


_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


def _default(node: Any) -> Any:
    value = node.get("default") if isinstance(node, dict) else None
    if isinstance(value, (dict, list)):
        return attrs.Factory(lambda: copy.deepcopy(value))
    return value


#: Names a server's property must not take: the generated ``__init__``'s ``self`` and the
#: parameters of cattrs' ``make_dict_structure_fn`` (the renames travel as its keywords).
_RESERVED = frozenset({"self", *inspect.signature(make_dict_structure_fn).parameters})


def _identifier(key: str, taken: dict[str, Any]) -> str:
    """An attribute name for a server's property ``key``: attrs and cattrs write it into the
    Python they generate, so it must be an identifier the parser reads as this very string.

    It is NFKC text (the parser normalizes names so: ``ｆｏｏ`` is read as ``foo``, which
    would name another attribute) of characters that may continue an identifier (``²`` may
    not: a ``SyntaxError``); any other character becomes ``_``, letters of every script stay.
    """
    name = unicodedata.normalize("NFKC", key)
    name = "".join(c if ("a" + c).isidentifier() else "_" for c in name).lstrip("_") or "field"
    if not name.isidentifier():  # a digit or a combining mark first
        name = "f_" + name
    if not name.isidentifier() or unicodedata.normalize("NFKC", name) != name:  # marks that compose anew
        name = re.sub(r"[^0-9A-Za-z_]", "_", name).lstrip("_") or "field"
        name = "f_" + name if name[0].isdigit() else name
    # attrs drops a leading "_" from init names, hence none above
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in _RESERVED:
        name += "_"
    while name in taken:
        name += "_"
    return name


def _class_name(title: str) -> str:
    name = _camel(title)
    return name if name and not name[0].isdigit() else "Model" + name


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"\W+|_", text) if part)


def _strict_converter() -> Converter:
    converter = make_converter(detailed_validation=True)  # ISO strings -> datetime for a user's class
    for kind, accepted in ((str, (str,)), (int, (int,)), (float, (int, float)), (bool, (bool,))):
        converter.register_structure_hook(kind, _strict(kind, accepted))
    converter.register_structure_hook_factory(_is_list, _strict_list)  # a string is no list of chars
    converter.register_structure_hook(datetime.datetime, _datetime)
    return converter


def _datetime(value: Any, _type: Any) -> datetime.datetime:
    """An RFC 3339 date-time: Python 3.10's ``fromisoformat`` does not read the ``Z`` suffix."""
    if not isinstance(value, str):
        raise TypeError(f"expected an RFC 3339 date-time string, got {type(value).__name__}")
    text = value[:-1] + "+00:00" if value[-1:] in ("Z", "z") else value
    return datetime.datetime.fromisoformat(text)


def _is_list(kind: Any) -> bool:
    return kind is list or get_origin(kind) in (list, abc.Sequence, abc.MutableSequence)


def _strict_list(kind: Any, converter: Any) -> Any:
    inner = list_structure_factory(kind, converter)

    def structure(value: Any, _type: Any) -> Any:
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return inner(value, _type)

    return structure


def _strict(kind: type, accepted: tuple[type, ...]) -> Any:
    def structure(value: Any, _type: Any) -> Any:
        if isinstance(value, accepted) and (kind is bool or not isinstance(value, bool)):
            return kind(value)
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")

    return structure
