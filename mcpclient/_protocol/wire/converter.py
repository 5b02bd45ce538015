"""The one place that knows MCP's wire rules.

camelCase keys, ``_meta``, base64 payloads and tagged content blocks are handled here, and
nowhere else. Lenient in (unknown keys ignored, unknown content types kept raw), strict out
(no ``None`` is ever sent). Any failure to read a server's value becomes a ``ProtocolError``.

The cattrs converter is made, and cattrs imported, the first time a value goes through it
(``_conv``): ``import mcpclient`` loads neither, and a tool call's result, the hot path, is
built by hand without it (``structure_tool_result``).
"""

from __future__ import annotations

import base64
import functools
import threading
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import attrs

from ... import types as t
from ..._core import bounded as _bounded
from ..._core.exceptions import ProtocolError
from ...types import decode_base64

if TYPE_CHECKING:
    from cattrs import Converter

T = TypeVar("T")

_converter: Converter | None = None
_made = threading.Lock()

# Opaque JSON is passed through as it came, never walked or copied.
_OPAQUE = {dict[str, Any], list[Any], Any}

#: What reading a server's value may raise, besides ``ProtocolError`` (cattrs' own validation
#: error is added when the converter is made: only the converter raises it).
_INVALID: tuple[type[BaseException], ...] = (KeyError, TypeError, ValueError, AttributeError, OverflowError)


def _conv() -> Converter:
    """The converter, made on first use."""
    converter = _converter
    return converter if converter is not None else _make_converter()


def _make_converter() -> Converter:
    global _converter, _INVALID
    with _made:
        if _converter is not None:
            return _converter
        from cattrs import Converter
        from cattrs.errors import BaseValidationError

        converter = Converter()
        converter.register_structure_hook_func(lambda tp: tp in _OPAQUE, lambda value, _type: value)
        converter.register_structure_hook(str, _structure_str)
        converter.register_structure_hook_factory(lambda cls: cls in _MODELS_IN, _model_hook)
        converter.register_structure_hook(t.ResourceContents, _structure_resource_contents)
        converter.register_unstructure_hook(t.ResourceContents, _unstructure_resource_contents)
        converter.register_structure_hook(t.ToolDef, _structure_tool_def)
        for hooked, hook in _HOOKS:
            converter.register_structure_hook(hooked, hook)
        converter.register_unstructure_hook_factory(lambda cls: cls in _MODELS_OUT, _unstructure_fn)
        _INVALID = (BaseValidationError, *_INVALID)
        _converter = converter
        return converter


def wire_name(name: str) -> str:
    """``input_schema`` -> ``inputSchema``; ``meta`` -> ``_meta``."""
    if name == "meta":
        return "_meta"
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def _renames(cls: type, omit: tuple[str, ...] = ()) -> dict[str, Any]:
    from cattrs.gen import override

    overrides: dict[str, Any] = {}
    for a in attrs.fields(cls):
        if a.name in omit:
            overrides[a.name] = override(omit=True)
        else:
            overrides[a.name] = override(rename=wire_name(a.name))
    return overrides


# Each model's hook is generated the first time a value of it is read (cattrs caches it), not
# at import: generating them all takes longer than the rest of ``import mcpclient``.
_MODELS_IN: dict[type, tuple[str, ...]] = {
    t.Implementation: (),
    t.Resource: (),
    t.ResourceTemplate: (),
    t.PromptArgument: (),
    t.Prompt: (),
    t.Completion: (),
    t.SamplingMessage: (),
    t.ElicitationRequest: ("server",),  # set by the client, never read from the request
}


def _model_hook(cls: type) -> Callable[[Any, Any], Any]:
    from cattrs.gen import make_dict_structure_fn

    build: Callable[[Any, Any], Any] = make_dict_structure_fn(cls, _conv(), **_renames(cls, _MODELS_IN[cls]))

    def structure_model(value: Any, _type: Any) -> Any:
        # The generated function tests keys with ``in``: a list or a string would pass as a
        # model of defaults (a ``Completion`` from ``"x"``).
        if not isinstance(value, dict):
            raise TypeError(f"expected a JSON object, got {type(value).__name__}")
        return build(value, _type)

    return structure_model



def _structure_str(value: Any, _type: Any = None) -> str:
    """A text field is a JSON string: cattrs' own hook calls ``str()``, which reads ``null`` as
    ``"None"`` and a number as its digits."""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _optional_str(value: Any) -> str | None:
    return None if value is None else _structure_str(value)


def _structure_resource_contents(value: dict[str, Any], _type: Any = None) -> t.ResourceContents:
    blob = value.get("blob")
    return t.ResourceContents(
        uri=_structure_str(value["uri"]),
        mime_type=_optional_str(value.get("mimeType")),
        text=_optional_str(value.get("text")),
        blob=decode_base64(blob) if isinstance(blob, str) else None,
        meta=value.get("_meta"),
    )



def _unstructure_resource_contents(contents: t.ResourceContents) -> dict[str, Any]:
    """The wire form: ``blob`` base64-encoded (when present) instead of ``text``."""
    wire: dict[str, Any] = {"uri": contents.uri}
    if contents.mime_type:
        wire["mimeType"] = contents.mime_type
    if contents.blob is not None:
        wire["blob"] = base64.b64encode(contents.blob).decode("ascii")
    else:
        wire["text"] = contents.text or ""
    if contents.meta:
        wire["_meta"] = contents.meta
    return wire


@functools.cache
def _structure_tool_fields() -> Callable[[Any, Any], t.ToolDef]:
    from cattrs.gen import make_dict_structure_fn

    return make_dict_structure_fn(t.ToolDef, _conv(), **_renames(t.ToolDef, omit=("ui",)))


def _structure_tool_def(value: dict[str, Any], _type: Any = None) -> t.ToolDef:
    """A tool, with its MCP Apps ``_meta.ui`` (or the deprecated flat key) read into ``ui``."""
    tool = _structure_tool_fields()(value, t.ToolDef)
    ui = _tool_ui(tool.meta)
    return tool if ui is None else attrs.evolve(tool, ui=ui)


def _tool_ui(meta: Any) -> t.ToolUI | None:
    """``_meta.ui`` as a ``ToolUI``; malformed members are ignored (the spec's defaults hold)."""
    if not isinstance(meta, dict):
        return None
    node = meta.get("ui")
    flat = meta.get("ui/resourceUri")  # deprecated by SEP-1865, still sent by older servers
    if not isinstance(node, dict) and not isinstance(flat, str):
        return None
    node = node if isinstance(node, dict) else {}
    uri = node.get("resourceUri")
    uri = uri if isinstance(uri, str) else flat if isinstance(flat, str) else None
    visibility = node.get("visibility")
    if isinstance(visibility, list) and all(isinstance(v, str) for v in visibility):
        return t.ToolUI(resource_uri=uri, visibility=tuple(visibility))
    return t.ToolUI(resource_uri=uri)



_new = object.__new__
_fill = object.__setattr__  # ``_fill(obj, "__dict__", fields)``: every field at once, see below


def _structure_tool_content(part: dict[str, Any], _type: Any = None) -> t.ToolContent:
    """One content part.

    Built as ``ToolContent(**fields)`` would build it, but in one step: a new instance whose
    ``__dict__`` is set to every field (``tests/test_types.py`` checks that the two agree,
    field for field). A frozen class's ``__init__`` sets each field through
    ``object.__setattr__``, which costs more than the rest of a tool call's conversion.
    """
    kind = part.get("type")
    if kind == "text":  # nearly every part: the same fields as below, with fewer tests
        text = part.get("text", "")
        if len(part) == 2 and isinstance(text, str) and "text" in part:  # {"type", "text"} alone
            meta = mime_type = uri = name = annotations = None
        else:
            text = text if isinstance(text, str) else ""
            mime_type, uri, name = part.get("mimeType"), part.get("uri"), part.get("name")
            annotations, meta = part.get("annotations"), part.get("_meta")
        content = _new(t.ToolContent)
        _fill(content, "__dict__", {
            "type": kind, "text": text, "data": "", "mime_type": mime_type, "resource": None, "uri": uri,
            "name": name, "annotations": annotations, "meta": meta, "raw": part,
        })
        return content
    if not isinstance(kind, str):
        raise ProtocolError(f"content part without a type: {_excerpt(part)}")
    resource = part.get("resource") if kind == "resource" else None
    return t.ToolContent(
        type=kind,
        data=part.get("data", "") if kind in ("image", "audio") else "",
        mime_type=part.get("mimeType"),
        resource=_structure_resource_contents(resource) if isinstance(resource, dict) else None,
        uri=part.get("uri"),
        name=part.get("name"),
        annotations=part.get("annotations"),
        meta=part.get("_meta"),
        raw=part,
    )


def _structure_prompt_part(part: dict[str, Any], _type: Any = None) -> t.PromptPart:
    kind = part.get("type")
    if not isinstance(kind, str):
        raise ProtocolError(f"content part without a type: {_excerpt(part)}")
    data = part.get("data") if kind in ("image", "audio") else None
    resource = part.get("resource") if kind == "resource" else None
    return t.PromptPart(
        type=kind,
        text=part.get("text", "") if kind == "text" else "",
        resource=_structure_resource_contents(resource) if isinstance(resource, dict) else None,
        data=decode_base64(data) if isinstance(data, str) else b"",
        mime_type=part.get("mimeType"),
        uri=part.get("uri"),
        name=part.get("name"),
        annotations=part.get("annotations"),
        meta=part.get("_meta"),
        raw=part,
    )


def _structure_prompt_message(value: dict[str, Any], _type: Any = None) -> t.PromptMessage:
    content = value.get("content")
    parts = content if isinstance(content, list) else [content] if content is not None else []
    return t.PromptMessage(
        role=value["role"], content=[_structure_prompt_part(p) for p in parts]
    )


def _structure_tool_result(value: dict[str, Any], _type: Any = None) -> t.ToolResult:
    return structure_tool_result(value)


def _structure_create_message_request(
    value: dict[str, Any], _type: Any = None
) -> t.CreateMessageRequest:
    return t.CreateMessageRequest(
        messages=[_conv().structure(m, t.SamplingMessage) for m in value.get("messages", [])],
        max_tokens=int(value.get("maxTokens", 0)),
        system_prompt=value.get("systemPrompt"),
        model_preferences=value.get("modelPreferences"),
        include_context=value.get("includeContext"),
        temperature=value.get("temperature"),
        stop_sequences=value.get("stopSequences"),
        metadata=value.get("metadata"),
        tools=value.get("tools"),
        tool_choice=value.get("toolChoice"),
        meta=value.get("_meta"),
        raw=value,
    )


_HOOKS: tuple[tuple[type, Callable[[Any, Any], Any]], ...] = (
    (t.ToolContent, _structure_tool_content),
    (t.PromptPart, _structure_prompt_part),
    (t.PromptMessage, _structure_prompt_message),
    (t.ToolResult, _structure_tool_result),
    (t.CreateMessageRequest, _structure_create_message_request),
)


# Outgoing values: omit whatever is None, keep required fields even at their default. Their
# hooks too are generated on first use.
_MODELS_OUT: dict[type, tuple[str, ...]] = {
    t.Implementation: ("name", "version"),
    t.Root: ("uri",),
    t.CompletionRef: ("type",),
    t.ElicitationResult: ("action",),
    t.CreateMessageResult: ("role", "content", "model"),
}


def _unstructure_fn(cls: type) -> Callable[[Any], dict[str, Any]]:
    from cattrs.gen import make_dict_unstructure_fn, override

    keep = _MODELS_OUT[cls]
    overrides = {
        a.name: override(rename=wire_name(a.name), omit_if_default=a.name not in keep)
        for a in attrs.fields(cls)
    }
    return make_dict_unstructure_fn(cls, _conv(), _cattrs_omit_if_default=True, **overrides)  # type: ignore[arg-type]


def structure(value: Any, cls: type[T]) -> T:
    """Build ``cls`` from a server's JSON value; any failure is a ``ProtocolError``."""
    if not isinstance(value, dict) and attrs.has(cls):
        raise _invalid(cls, value, TypeError(f"expected a JSON object, got {type(value).__name__}"))
    converter = _conv()  # first: it completes _INVALID
    try:
        return converter.structure(value, cls)
    except ProtocolError:
        raise
    except _INVALID as exc:
        raise _invalid(cls, value, exc) from exc


def structure_tool_result(value: Any) -> t.ToolResult:
    """``structure(value, ToolResult)`` without the converter's dispatch: every tool call's."""
    try:
        parts = value.get("content") or []
        result = _new(t.ToolResult)  # in one step, as in _structure_tool_content
        _fill(result, "__dict__", {
            "content": [_structure_tool_content(p) for p in parts],
            "is_error": bool(value.get("isError", False)),
            "structured_content": value.get("structuredContent"),
            "meta": value.get("_meta"),
            "output_schema": None,  # the client adds the listed schema (plugins.validation.OutputValidator)
        })
        return result
    except ProtocolError:
        raise
    except _INVALID as exc:
        raise _invalid(t.ToolResult, value, exc) from exc


def _invalid(cls: type, value: Any, exc: BaseException) -> ProtocolError:
    return ProtocolError(f"the server sent an invalid {cls.__name__}: {exc!r} in {_excerpt(value)}")


def structure_list(values: Any, cls: type[T]) -> list[T]:
    """Build a list of ``cls``; a non-list is a ``ProtocolError``."""
    if not isinstance(values, list):
        raise ProtocolError(f"expected a list of {cls.__name__}, got {_excerpt(values)}")
    return [structure(v, cls) for v in values]


def unstructure(value: Any) -> Any:
    """Turn one of our values into wire JSON."""
    return _conv().unstructure(value)


def _excerpt(value: Any, limit: int = 200) -> str:
    return _bounded.excerpt(value, limit)

