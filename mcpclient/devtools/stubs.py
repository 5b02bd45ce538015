"""Typed stubs for a server's tools: ``mcpclient stubs`` writes them, ``Stub`` runs them.

``stubs_for(client)`` (or ``generate(tools, ...)`` on ``tools/list`` items as sent) returns the
source of a Python module with one class, a ``Stub`` wrapping a ``Client``, and one method per
tool::

    api = EverythingApi(client)          # raises StubOutOfDate if the tools changed since
    api.echo(message="hi")               # -> ToolResult
    api.get_structured_content(location="New York")   # -> a TypedDict from the outputSchema

Each method takes keyword-only arguments typed from the tool's ``inputSchema``: required ones
first-class, optional ones defaulting to ``None`` (left out of the call when ``None``), enums
as ``Literal``, arrays as ``list[...]``, objects with properties as ``TypedDict`` classes, and
what the schema leaves open (or nests past ``MAX_DEPTH``, or refers to recursively) as ``Any``.
A tool with an object ``outputSchema`` returns a ``TypedDict`` of its structured content (the
official SDKs' ``{"result": x}`` wrapping unwrapped to ``x``'s type) and raises ``ToolError``
when the tool fails; any other tool returns the ``ToolResult``.

The generated text is a function of the tools alone: tools, properties and classes are sorted
by name, so the same tools give the same bytes. Server text is inert in it, written only through
``mcpclient._core.source``: names and enum values are ASCII Python literals (``literal``: every
character but printable ASCII escaped); descriptions become docstrings cleaned by
``_text.clean_lines`` with backslashes and quotes escaped (``doc_lines``), so no description
can end the docstring; every identifier is made of ASCII letters,
digits and ``_``, is no keyword and shadows no builtin nor a name of the module or of
``Stub``, and names that clash after this are told apart by ``_2``, ``_3`` in the sorted order
of the original names.

The class holds each wrapped tool's lockfile hash (``mcpclient.lock``'s ``fingerprint``, the
hash ``mcp.lock`` holds); ``Stub.__init__`` lists the server's tools and raises
``StubOutOfDate`` when one of them is gone or its hash differs (``check=False`` skips it).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Iterable, Mapping, Protocol, Sequence

from .._client.client import Client
from .._core.exceptions import StructuredOutputError, StubOutOfDate
from .._core.source import doc_lines, identifier, literal
from .._core.text import clean
from ..plugins.lock import fingerprint
from ..types import ToolResult
from ._annotations import MAX_DEPTH, TYPE_WORDS, Module, camel, wrapped_output

__all__ = ["MAX_DEPTH", "Stub", "ToolClient", "generate", "list_tools_raw", "stubs_for"]

#: How many pages of ``tools/list`` are read at most.
MAX_PAGES = 1000


class ToolClient(Protocol):
    """What a stub needs of its client: ``mcpclient.Client`` and ``SharedClient`` both fit."""

    def request(self, method: str, params: Mapping[str, Any] | None = None, *,
                timeout: float | None = ...) -> dict[str, Any]: ...

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult: ...


def list_tools_raw(client: ToolClient, *, timeout: float | None = None) -> list[dict[str, Any]]:
    """Every tool of ``client``'s server as sent (all pages of ``tools/list``), skipping items
    without a string name."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    for _ in range(MAX_PAGES):
        result = client.request("tools/list", {"cursor": cursor} if cursor else None, **options)
        page = result.get("tools")
        tools += [tool for tool in page if isinstance(tool, dict) and isinstance(tool.get("name"), str)] \
            if isinstance(page, list) else []
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return tools


def tool_hashes(tools: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each tool's lockfile hash by name (the last of a name listed twice)."""
    return {str(tool["name"]): fingerprint("tools", tool)["hash"] for tool in tools}


class Stub:
    """The base of a generated stub class: a ``Client`` and the tools it was generated from.

    ``TOOLS`` maps each wrapped tool's name to its lockfile hash. Construction checks them
    against the server (see ``check_tools``) unless ``check=False``. The client must be open,
    and stays the caller's to close. Thread-safe as the client is.
    """

    #: The server's name (``serverInfo.name``) when the stub was generated.
    SERVER: ClassVar[str] = ""
    #: Tool name -> lockfile hash (``mcpclient.lock.fingerprint``), of every wrapped tool.
    TOOLS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, client: ToolClient, *, check: bool = True) -> None:
        self._client = client
        if check:
            self.check_tools()

    @property
    def client(self) -> ToolClient:
        """The client the calls go through."""
        return self._client

    def check_tools(self) -> None:
        """Raise ``StubOutOfDate`` if a wrapped tool is gone from the server or differs from
        what the stub was generated from; tools the server added are fine."""
        current = tool_hashes(list_tools_raw(self._client))
        missing = sorted(name for name in self.TOOLS if name not in current)
        changed = sorted(name for name, mark in self.TOOLS.items() if name in current and current[name] != mark)
        if not missing and not changed:
            return
        parts = []
        if missing:
            parts.append("gone: " + ", ".join(clean(repr(name), 80) for name in missing[:10]))
        if changed:
            parts.append("changed: " + ", ".join(clean(repr(name), 80) for name in changed[:10]))
        raise StubOutOfDate(
            f"the stub {type(self).__name__} no longer matches the server's tools ({'; '.join(parts)}): "
            "generate it again with mcpclient stubs (or pass check=False to use it anyway)",
            missing=missing, changed=changed,
        )

    def _call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call ``name`` with the arguments that are not None."""
        return self._client.call_tool(name, {key: value for key, value in arguments.items() if value is not None})

    def _structured(self, name: str, arguments: Mapping[str, Any], *, wrapped: bool) -> Any:
        """The structured content of the call (its ``result`` when ``wrapped``); ``ToolError``
        when the tool failed, ``StructuredOutputError`` when it sent no structured content."""
        result = self._call(name, arguments)
        result.raise_for_error()
        content = result.structured_content
        if wrapped and isinstance(content, dict) and "result" in content:
            return content["result"]
        if content is None:
            raise StructuredOutputError(
                f"tool {name!r} declares an outputSchema but sent no structured content: call "
                "self.client.call_tool and read its text instead"
            )
        return content


def generate(tools: Sequence[Mapping[str, Any]], *, class_name: str, server_name: str | None = None,
             server_version: str | None = None) -> str:
    """The source of a stub module for ``tools`` (``tools/list`` items as sent); see the module
    docstring. ``class_name`` is made a valid identifier the way tool names are."""
    by_name = {str(tool["name"]): tool for tool in tools if isinstance(tool.get("name"), str)}
    module = Module()
    stub_name = identifier(class_name, module.names, fallback="Server")
    methods_taken: set[str] = set(dir(Stub))
    methods: list[str] = []
    names: dict[str, str] = {}
    for tool_name in sorted(by_name):
        # a method named like a builtin or a name of the module would shadow it in the class body
        names[tool_name] = identifier(tool_name, methods_taken, fallback="tool", avoid=module.names)
    module.names |= set(names.values())  # and a class named like a method would be shadowed
    for tool_name in sorted(by_name):
        methods.append(_method(module, by_name[tool_name], names[tool_name]))
    hashes = tool_hashes(by_name[name] for name in sorted(by_name))
    title = (doc_lines(" ".join(part for part in (server_name, server_version) if part)) or ["an MCP server"])[0]
    head: list[str | None] = [
        '"""Typed stubs for the tools of ' + title + ' (written by mcpclient stubs).',
        "",
        "Do not edit: generate it again when the server's tools change (the class checks them when made).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
    ]
    body = [
        f"class {stub_name}(Stub):",
        '    """The server\'s tools as methods; ``' + stub_name + '(client)`` checks that they still match."""',
        "",
        f"    SERVER = {literal(server_name or '')}",
        "    TOOLS = {",
        *(f"        {literal(name)}: {literal(mark)}," for name, mark in hashes.items()),
        "    }",
    ]
    for method in methods:
        body += ["", method]
    code = "\n".join([*module.classes, *body])
    typing = [name for name in ("Any", "cast as _cast") if re.search(rf"\b{name.split()[-1]}\b", code)]
    extensions = [name for name in ("Literal", "NotRequired", "TypedDict") if re.search(rf"\b{name}\b", code)]
    head += [f"from typing import {', '.join(typing)}"] if typing else []
    head += [f"from typing_extensions import {', '.join(extensions)}"] if extensions else []
    head += ["" if typing or extensions else None, "from mcpclient import ToolResult" if "ToolResult" in code else None,
             "from mcpclient.devtools.stubs import Stub", "", f"__all__ = {literal(sorted([stub_name, *module.exported]))}"]
    parts = ["\n".join(line for line in head if line is not None), *module.classes, "\n".join(body)]
    return "\n\n\n".join(parts) + "\n"


def _method(module: Module, tool: Mapping[str, Any], method: str) -> str:
    name = str(tool["name"])
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
    assert isinstance(schema, dict)
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    assert isinstance(properties, dict)
    listed = schema.get("required")
    required = {key for key in listed if isinstance(key, str)} if isinstance(listed, list) else set()
    keys = sorted(properties, key=str)
    kinds = {key: module.annotation(properties[key], f"{method}_{key}", schema) for key in keys}
    output = tool.get("outputSchema")
    structured = isinstance(output, dict) and (output.get("type") == "object" or isinstance(output.get("properties"), dict))
    wrapped = structured and isinstance(output, dict) and wrapped_output(output)
    if isinstance(output, dict) and structured:
        returns = module.annotation(output["properties"]["result"] if wrapped else output, f"{method}_output", output)
    else:
        returns = "ToolResult"
    # named once every class of the method is: a parameter shadows no name its body uses
    taken: set[str] = set()
    params: list[tuple[str, str, str, bool]] = []  # python name, wire key, type, required
    for key in keys:
        python = identifier(str(key), taken, fallback="arg", avoid=module.defined | TYPE_WORDS)
        params.append((python, str(key), kinds[key], key in required))
    params.sort(key=lambda p: (not p[3], p[1]))
    signature = ["self"]
    if params:
        signature.append("*")
    for python, _, kind, needed in params:
        if needed:
            signature.append(f"{python}: {kind}")
        else:
            optional = kind if kind == "Any" or kind == "None" or kind.endswith("| None") else f"{kind} | None"
            signature.append(f"{python}: {optional} = None")
    if structured:
        call = f"_cast({literal(returns)}, self._structured({literal(name)}, {{{_arguments(params)}}}, wrapped={wrapped}))"
    else:
        call = f"self._call({literal(name)}, {{{_arguments(params)}}})"
    doc = _docstring(tool, params, properties)
    lines = [f"    def {method}({', '.join(signature)}) -> {returns}:", *doc, f"        return {call}"]
    return "\n".join(lines)


def _arguments(params: Sequence[tuple[str, str, str, bool]]) -> str:
    return ", ".join(f"{literal(key)}: {python}" for python, key, _, _ in params)


def _docstring(tool: Mapping[str, Any], params: Sequence[tuple[str, str, str, bool]],
               properties: Mapping[str, Any]) -> list[str]:
    description = tool.get("description")
    lines = doc_lines(description) if isinstance(description, str) else []
    if not lines:
        lines = ["Call the tool " + doc_lines(repr(str(tool["name"])))[0] + "."]
    documented = []
    for python, key, _, _ in params:
        prop = properties.get(key)
        text = prop.get("description") if isinstance(prop, dict) else None
        if isinstance(text, str) and doc_lines(text):
            first, *rest = doc_lines(text)
            documented.append(f"    {python}: {first}")
            documented += [f"        {line}" for line in rest]
    if documented:
        lines += ["", "Args:", *documented]
    inner = ["        " + line if line else "" for line in lines]
    inner[0] = '        """' + lines[0]
    if len(inner) == 1:
        return [inner[0] + '"""']
    return [*inner, '        """']


def class_name_for(server_name: str | None) -> str:
    """The default class name for a server's stub: its name in CamelCase, plus ``Api``."""
    base = camel((server_name or "").rsplit("/", 1)[-1]) or "Server"
    return base if base.endswith("Api") else base + "Api"


def stubs_for(client: Client, *, class_name: str | None = None, timeout: float | None = None) -> str:
    """The stub module's source for ``client``'s server (an open client), named ``class_name``
    (default: from the server's name, see ``class_name_for``)."""
    info = client.server_info
    tools = list_tools_raw(client, timeout=timeout)
    return generate(tools, class_name=class_name or class_name_for(info.name if info else None),
                    server_name=info.name if info else None, server_version=info.version if info else None)
