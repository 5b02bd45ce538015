"""The modern era's HTTP header mirroring (2026-07-28), as a built-in extension of the seam.

A modern request over Streamable HTTP carries headers that mirror its body, so that
intermediaries can route it without reading it: ``MCP-Protocol-Version``, ``Mcp-Method`` and
``Mcp-Name`` (the tool or prompt name, the resource URI, the task id) on every request, and
``Mcp-Param-{Name}`` for each tool parameter whose schema carries ``x-mcp-header``. Values
that are not plain visible ASCII travel in the ``=?base64?...?=`` sentinel form.

``HeaderMirroring`` is middleware: it learns from each ``tools/list`` page which arguments of
which tool travel as headers, leaves out of the listing the tools whose ``x-mcp-header``
annotations break the spec's rules (with a warning, so one bad definition never makes the
others unusable), and puts the headers of each outgoing modern request in its options
(``Options.headers``), which the transport sends with that one POST. It acts only in the
modern era (and on the era probe's ``server/discover``), and is ``idle`` over a legacy session,
so a legacy call builds no chain for it; every Client over a transport whose peer speaks HTTP
has one, and no other client pays anything for it.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
from typing import Any, Mapping, Sequence

from ..extensions import PROTOCOL_VERSION_KEY, Extension, Message, Middleware, Next, Session
from ..transports.base import LEGACY, MODERN

__all__ = [
    "HeaderMirroring",
    "InvalidToolHeaders",
    "ToolHeaders",
    "encode_value",
    "headers_for",
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
    """Which tools mirror which arguments into headers, learned from ``tools/list`` pages.

    Safe to use from many threads: a page replaces the table at once.
    """

    def __init__(self) -> None:
        self._paths: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        self._lock = threading.Lock()

    def learn(self, tools: list[Any], *, first: bool = True) -> list[Any]:
        """Learn the header paths of one page of tool definitions (wire dicts); return the
        page without the tools whose annotations are invalid (logged with a warning).

        ``first``: the page starts a listing, which replaces what was learned before; a later
        page updates the tools it names.
        """
        valid: list[Any] = []
        names: list[str] = []
        paths: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str):
                valid.append(tool)  # not a tool the client can call: the listing reports it
                continue
            try:
                found = tool_header_paths(tool.get("inputSchema"))
            except InvalidToolHeaders as exc:
                log.warning("ignoring tool %r: %r", name, str(exc))
                continue
            names.append(name)
            if found:
                paths[name] = found
            valid.append(tool)
        with self._lock:
            table = {} if first else dict(self._paths)
            for name in names:
                table.pop(name, None)
            table.update(paths)
            self._paths = table
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


def headers_for(
    method: str, params: Mapping[str, Any] | None, version: str, tools: ToolHeaders | None = None
) -> dict[str, str]:
    """The headers a modern POST of the request ``method`` with ``params`` carries."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    field = NAMED_METHODS.get(method)
    if field is not None and isinstance(params, dict) and isinstance(params.get(field), str):
        headers["Mcp-Name"] = encode_value(params[field])
    if method == "tools/call" and tools is not None and isinstance(params, dict):
        name = params.get("name")
        if isinstance(name, str):
            headers.update(tools.for_call(name, params.get("arguments")))
    return headers


def request_headers(message: dict[str, Any], tools: ToolHeaders | None = None) -> dict[str, str]:
    """The headers a modern POST of ``message`` (a request as sent, its ``_meta`` naming the
    protocol version) carries; empty for a message without that version (a legacy one)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    method = message.get("method")
    if not isinstance(version, str) or not isinstance(method, str):
        return {}
    return headers_for(method, params, version, tools)


class HeaderMirroring(Extension):
    """Mirrors each modern request's body into its HTTP headers (see the module's docstring).

    Over a legacy session it passes every message on untouched. Thread-safe.
    """

    def __init__(self) -> None:
        self._tools = ToolHeaders()
        self._session: Session | None = None
        self._legacy = False  # the session opened in the legacy era: nothing to mirror

    def bind(self, session: Session) -> None:
        self._session = session
        self._legacy = False  # the era probe of a new connection is mirrored

    def opened(self, session: Session) -> None:
        self._legacy = session.era == LEGACY  # an era never changes for a connection

    def middleware(self) -> tuple[Middleware, ...]:
        return (self._mirror,)

    def idle(self) -> bool:
        """Idle over a legacy session: a call then builds no chain for this extension (read
        once, when the session opened: asked on every call)."""
        return self._legacy

    def _mirror(self, message: Message, next_: Next) -> Any:
        if message.direction != "send" or message.kind != "request":
            return next_(message)
        version = self._version(message)
        if version is None:
            return next_(message)
        result = next_(message.with_headers(headers_for(message.method, message.params, version, self._tools)))
        if message.method == "tools/list" and isinstance(result, dict) and isinstance(result.get("tools"), list):
            params = message.params
            first = not (isinstance(params, dict) and params.get("cursor") is not None)
            kept = self._tools.learn(result["tools"], first=first)
            if len(kept) != len(result["tools"]):
                result = {**result, "tools": kept}  # a copy: the result may be a cache's
        return result

    def _version(self, message: Message) -> str | None:
        """The modern version this request is sent in; None outside the modern era."""
        session = self._session
        era = session.era if session is not None else None
        if era == MODERN:
            return session.protocol_version if session is not None else None
        if era is None and message.method == "server/discover":
            # The era probe: the era is not known yet, and the request names its version.
            params = message.params or {}
            meta = params.get("_meta")
            version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
            return version if isinstance(version, str) else None
        return None



def header_extensions(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """The modern era's header mirroring, for a transport whose peer speaks HTTP (the headers
    are HTTP's); outside the result cache, so that it learns from cached tool lists too."""
    transport = options.get("transport")
    return (HeaderMirroring(),) if transport is not None and transport.about.peer.protocol == "http" else ()
