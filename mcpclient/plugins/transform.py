"""Tool transformations: a server's tools shown renamed, re-described, with arguments renamed,
hidden behind a fixed value or given a default, and filtered by name or tag, on the client's
side (see docs/config.md, "Tool transformations").

The shape is FastMCP's ``mcp.json`` one, so one file serves both: beside a server entry's
``command`` or ``url``::

    "tools": {"search": {"name": "find", "description": "...", "tags": ["read"], "enabled": true,
                         "arguments": {"q": {"name": "query"}, "limit": {"hide": true, "default": 10}}}},
    "include_tags": ["read"], "exclude_tags": ["admin"]

``ToolTransforms`` is that part of an entry, read and checked (``from_entry``);
``ToolTransforms.extension()`` makes the extension that applies it to one client: a send
middleware on ``tools/list`` (each result shows the tools as transformed, those filtered out
left out) and on ``tools/call`` (the shown name and arguments mapped back to the server's,
the hidden arguments given their fixed value, a filtered-out tool refused before sending).
"""

from __future__ import annotations

import copy
import logging
import threading
from typing import Any, Mapping, Sequence

import attrs

from .._core.exceptions import ConfigError, UnknownToolError
from ..extensions import Extension, Message, Middleware, Next

__all__ = ["ArgTransform", "ToolTransform", "ToolTransforms", "TransformTools", "tool_tags"]

log = logging.getLogger(__name__)

#: The keys of a server entry that hold its tool transformations.
ENTRY_KEYS = ("tools", "include_tags", "exclude_tags")
#: How many ``tools/list`` pages a call to a tool never listed may read to learn its tags.
MAX_PAGES = 100

_UNSET: Any = attrs.make_class("Unset", (), repr_ns=None)()


@attrs.frozen(kw_only=True)
class ArgTransform:
    """How one argument is shown: ``name`` (the shown name), ``description``, ``default``
    (sent when the caller leaves it out), ``hide`` (left out of the schema, always sent as
    ``default``), ``required`` (True: the caller must give it)."""

    name: str | None = None
    description: str | None = None
    default: Any = _UNSET
    hide: bool = False
    required: bool | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not _UNSET


@attrs.frozen(kw_only=True)
class ToolTransform:
    """How one tool is shown: ``name``, ``title``, ``description``, ``tags`` (replace the
    server's, for the filters), ``enabled`` (False: not shown, not callable), ``arguments``
    by the server's argument name."""

    name: str | None = None
    title: str | None = None
    description: str | None = None
    tags: frozenset[str] | None = None
    enabled: bool = True
    arguments: Mapping[str, ArgTransform] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ToolTransforms:
    """A server's tool transformations: ``tools`` by the server's tool name, and the tag
    filters (``include_tags``: only tools with one of them; ``exclude_tags``: none with one)."""

    tools: Mapping[str, ToolTransform] = attrs.field(factory=dict)
    include_tags: frozenset[str] | None = None
    exclude_tags: frozenset[str] | None = None

    @classmethod
    def from_entry(cls, raw: Mapping[str, Any], *, where: str = "the entry") -> ToolTransforms | None:
        """The transformations of a config entry (its ``tools``, ``include_tags`` and
        ``exclude_tags``), or None when it has none. ``ConfigError`` for a malformed one."""
        if not any(raw.get(key) is not None for key in ENTRY_KEYS):
            return None
        tools = raw.get("tools")
        tools = {} if tools is None else tools
        if not isinstance(tools, Mapping):
            raise ConfigError(f"{where}: 'tools' must be an object of tool names")
        made = cls(
            tools={str(name): _tool(spec, f"{where}, tool {name!r}") for name, spec in tools.items()},
            include_tags=_tags(raw.get("include_tags"), f"{where}: 'include_tags'"),
            exclude_tags=_tags(raw.get("exclude_tags"), f"{where}: 'exclude_tags'"),
        )
        shown = [spec.name or name for name, spec in made.tools.items() if spec.enabled]
        twice = sorted({name for name in shown if shown.count(name) > 1})
        if twice:
            raise ConfigError(f"{where}: two tools would be shown as {', '.join(map(repr, twice))}")
        return made

    def extension(self) -> TransformTools:
        """The extension that applies these transformations to one client."""
        return TransformTools(self)


def _tool(spec: Any, where: str) -> ToolTransform:
    if not isinstance(spec, Mapping):
        raise ConfigError(f"{where}: the transformation must be an object")
    _known(spec, ("name", "title", "description", "tags", "enabled", "arguments", "meta", "version"), where)
    arguments = spec.get("arguments")
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, Mapping):
        raise ConfigError(f"{where}: 'arguments' must be an object of argument names")
    made = ToolTransform(
        name=_text(spec.get("name"), f"{where}: 'name'"),
        title=_text(spec.get("title"), f"{where}: 'title'"),
        description=_text(spec.get("description"), f"{where}: 'description'"),
        tags=_tags(spec.get("tags"), f"{where}: 'tags'"),
        enabled=_flag(spec.get("enabled", True), f"{where}: 'enabled'"),
        arguments={str(name): _argument(arg, f"{where}, argument {name!r}") for name, arg in arguments.items()},
    )
    shown = [arg.name or name for name, arg in made.arguments.items() if not arg.hide]
    if len(set(shown)) < len(shown):
        raise ConfigError(f"{where}: two arguments would be shown under one name")
    return made


def _argument(spec: Any, where: str) -> ArgTransform:
    if not isinstance(spec, Mapping):
        raise ConfigError(f"{where}: the transformation must be an object")
    _known(spec, ("name", "description", "default", "hide", "required", "examples"), where)
    made = ArgTransform(
        name=_text(spec.get("name"), f"{where}: 'name'"),
        description=_text(spec.get("description"), f"{where}: 'description'"),
        default=spec["default"] if "default" in spec else _UNSET,
        hide=_flag(spec.get("hide", False), f"{where}: 'hide'"),
        required=None if spec.get("required") is None else _flag(spec["required"], f"{where}: 'required'"),
    )
    if made.hide and made.required:
        raise ConfigError(f"{where}: a hidden argument cannot be required (give it a 'default' instead)")
    if made.required and made.has_default:
        raise ConfigError(f"{where}: an argument with a 'default' cannot be required")
    return made


def _known(spec: Mapping[str, Any], keys: Sequence[str], where: str) -> None:
    unknown = sorted(set(map(str, spec)) - set(keys))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} (known: {', '.join(keys)})")


def _text(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str) and value:
        return value
    raise ConfigError(f"{where} must be a non-empty string")


def _flag(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(f"{where} must be true or false")


def _tags(value: Any, where: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(tag, str) for tag in value):
        return frozenset(value)
    raise ConfigError(f"{where} must be a list of strings")


def tool_tags(tool: Mapping[str, Any]) -> frozenset[str]:
    """The tags a server gave a listed tool (a wire dict): FastMCP's, in ``_meta.fastmcp.tags``
    (``_meta._fastmcp.tags`` in its older releases); none for other servers."""
    meta = tool.get("_meta")
    tags: set[str] = set()
    if isinstance(meta, Mapping):
        for key in ("fastmcp", "_fastmcp"):
            space = meta.get(key)
            listed = space.get("tags") if isinstance(space, Mapping) else None
            if isinstance(listed, list):
                tags.update(tag for tag in listed if isinstance(tag, str))
    return frozenset(tags)


class TransformTools(Extension):
    """Applies ``ToolTransforms`` to one client (see the module's docstring). Thread-safe."""

    def __init__(self, transforms: ToolTransforms) -> None:
        self.transforms = transforms
        # The shown name of each transformed tool -> the server's name.
        self._real = {spec.name or name: name for name, spec in transforms.tools.items() if spec.enabled}
        self._lock = threading.Lock()
        #: The server's names of the tools the last listings left out (by tag, or shadowed).
        self._hidden: set[str] = set()
        self._seen: set[str] = set()  # the server's names of every tool listed so far

    def middleware(self) -> Sequence[Middleware]:
        return (self._middleware,)

    def _middleware(self, message: Message, next_: Next) -> Any:
        if message.direction != "send" or message.method not in ("tools/list", "tools/call"):
            return next_(message)
        if message.method == "tools/list":
            return self._listed(next_(message))
        return next_(self._mapped(message, next_))

    # -- listing ------------------------------------------------------------------------------

    def _listed(self, result: Any) -> Any:
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            return result
        shown, hidden, seen = [], set(), set()
        for tool in tools:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                shown.append(tool)  # (the client's own reading reports it)
                continue
            seen.add(tool["name"])
            view = self._show(tool)
            if view is None:
                hidden.add(tool["name"])
            else:
                shown.append(view)
        with self._lock:
            self._seen |= seen
            self._hidden = (self._hidden - seen) | hidden
        return {**result, "tools": shown}

    def _show(self, tool: dict[str, Any]) -> dict[str, Any] | None:
        """The tool as shown, or None when it is filtered out."""
        real: str = tool["name"]
        spec = self.transforms.tools.get(real)
        if spec is not None and not spec.enabled:
            return None
        if spec is None and real in self._real:  # a renamed tool is shown under this name
            log.warning("tool %r of the server is hidden: a tool renamed by the config is shown under its name", real)
            return None
        tags = spec.tags if spec is not None and spec.tags is not None else tool_tags(tool)
        include, exclude = self.transforms.include_tags, self.transforms.exclude_tags
        if include is not None and not tags & include or exclude is not None and tags & exclude:
            return None
        if spec is None:
            return tool
        view = dict(tool)
        for key in ("name", "title", "description"):
            if getattr(spec, key) is not None:
                view[key] = getattr(spec, key)
        if spec.arguments and isinstance(tool.get("inputSchema"), dict):
            view["inputSchema"] = _schema(tool["inputSchema"], spec.arguments)
        return view

    # -- calling ------------------------------------------------------------------------------

    def _mapped(self, message: Message, next_: Next) -> Message:
        params = dict(message.params or {})
        shown = params.get("name")
        if not isinstance(shown, str):
            return message
        real = self._real.get(shown, shown)
        spec = self.transforms.tools.get(real)
        if real == shown and spec is not None and (not spec.enabled or spec.name not in (None, shown)):
            why = "disabled" if not spec.enabled else f"renamed {spec.name!r}"
            raise UnknownToolError(f"tool {shown!r} is {why} by this server's tool transformations (see its "
                                   f"config entry): list_tools() shows what can be called", tool=shown)
        if self._filtered(real, message, next_):
            raise UnknownToolError(f"tool {shown!r} is left out by this server's tag filters (include_tags, "
                                   f"exclude_tags in its config entry)", tool=shown)
        params["name"] = real
        if spec is not None and spec.arguments:
            params["arguments"] = _arguments(params.get("arguments"), spec.arguments, shown)
        return message.replace(params=params)

    def _filtered(self, real: str, message: Message, next_: Next) -> bool:
        """Whether the last listing left the tool out; when there are tag filters and it was
        never listed, it is listed first (through the rest of the chain) to learn its tags."""
        if self.transforms.include_tags is None and self.transforms.exclude_tags is None:
            with self._lock:
                return real in self._hidden
        with self._lock:
            known = real in self._seen
        if not known:
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                page = next_(Message(direction="send", kind="request", method="tools/list",
                                     params={"cursor": cursor} if cursor else None, options=message.options))
                self._listed(page)
                cursor = page.get("nextCursor") if isinstance(page, dict) else None
                if not isinstance(cursor, str) or not cursor:
                    break
        with self._lock:
            return real in self._hidden or real not in self._seen


def _schema(schema: dict[str, Any], arguments: Mapping[str, ArgTransform]) -> dict[str, Any]:
    """``schema`` (an inputSchema) with the argument transformations applied (a copy)."""
    schema = copy.deepcopy(schema)
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    required = [name for name in schema.get("required", []) if isinstance(name, str)]
    shown_properties: dict[str, Any] = {}
    shown_required: list[str] = []
    for name, prop in properties.items():
        spec = arguments.get(name)
        if spec is None:
            shown_properties[name] = prop
            if name in required:
                shown_required.append(name)
            continue
        if spec.hide:
            continue
        prop = dict(prop) if isinstance(prop, dict) else {}
        if spec.description is not None:
            prop["description"] = spec.description
        if spec.has_default:
            prop["default"] = spec.default
        shown = spec.name or name
        shown_properties[shown] = prop
        if spec.required or name in required and not spec.has_default:
            shown_required.append(shown)
    schema["properties"] = shown_properties
    if shown_required:
        schema["required"] = shown_required
    else:
        schema.pop("required", None)
    return schema


def _arguments(given: Any, arguments: Mapping[str, ArgTransform], tool: str) -> dict[str, Any]:
    """The caller's ``given`` arguments (by shown name) as the server takes them."""
    given = dict(given or {}) if isinstance(given, Mapping) else {}
    sent = {name: value for name, value in given.items()
            if not any((spec.name or real) == name or real == name for real, spec in arguments.items())}
    for real, spec in arguments.items():
        shown = spec.name or real
        if spec.hide:
            if shown in given:
                log.debug("argument %r of tool %r is fixed by its config: the value given is not sent", shown, tool)
            if spec.has_default:
                sent[real] = spec.default
        elif shown in given:
            sent[real] = given[shown]
        elif spec.has_default:
            sent[real] = spec.default
    return sent
