"""FakeServer: an MCP server in the test's own process, with strict expectations."""

from __future__ import annotations

import threading
from typing import Any, Callable, Mapping, Sequence, TypeVar

from .. import types as t
from .._core.exceptions import RPCError, method_not_found
from .._protocol.eras.legacy import LATEST_VERSION, SUPPORTED_VERSIONS
from ._connection import Context, FakeConnection
from ._expect import ArgumentsMatcher, Call, Expectation, describe_calls
from ._registry import PromptEntry, ResourceEntry, TemplateEntry, ToolEntry, tool_result_to_wire

__all__ = ["FakeServer"]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_CAPABILITIES: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {},
    "prompts": {},
    "completions": {},
    "logging": {},
}


class FakeServer(FakeConnection):
    """An MCP server that lives in your test: ``Client(FakeServer())`` needs no subprocess.

    Register what it offers with decorators or ``add_*`` methods, say what must happen with
    ``expect_call``, then check with ``verify()`` (or leave a ``with FakeServer() as fake:``
    block, or use the ``fake_mcp`` pytest fixture, which verify for you)::

        fake = FakeServer()

        @fake.tool
        def add(a: int, b: int) -> int:
            return a + b

        fake.expect_call("add", {"a": 1, "b": 2})
        with fake, Client(fake) as client:
            assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"

    Strict by default: ``verify()`` fails if an expectation was not met or the client asked
    for a tool, prompt or resource that was never registered. A tool function that raises
    ``RPCError`` answers with that JSON-RPC error; any other exception becomes a result with
    ``is_error=True`` (as real servers do), except ``AssertionError``, which is also kept and
    raised again by ``verify()``. A function with a ``ctx`` parameter gets a ``Context`` to
    report progress or ask the client for sampling and elicitation.

    One FakeServer is one connection: once its client closes, make a new one. It is safe
    to inspect (``calls``, ``tool_calls``, ``notifications``) from any thread.
    """

    def __init__(
        self,
        name: str = "fake-server",
        version: str = "1.0.0",
        *,
        strict: bool = True,
        latency: float = 0.0,
        capabilities: Mapping[str, Any] | None = None,
        instructions: str | None = None,
        page_size: int | None = None,
    ) -> None:
        super().__init__(latency=latency)
        self.name = name
        self.version = version
        self.strict = strict
        self.capabilities = dict(DEFAULT_CAPABILITIES if capabilities is None else capabilities)
        self.instructions = instructions
        self.page_size = page_size
        self.calls: list[Call] = []
        self.client_info: dict[str, Any] | None = None
        self.client_capabilities: dict[str, Any] | None = None
        self.protocol_version: str | None = None
        self._tools: dict[str, ToolEntry] = {}
        self._resources: dict[str, ResourceEntry] = {}
        self._templates: list[TemplateEntry] = []
        self._prompts: dict[str, PromptEntry] = {}
        self._completions: dict[tuple[str, str], Sequence[str] | Callable[..., Sequence[str]]] = {}
        self._handlers: dict[str, Callable[[dict[str, Any]], Any]] = {}
        self._expectations: list[Expectation] = []
        self._failures: list[AssertionError] = []
        self._record_lock = threading.Lock()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<FakeServer {self.name!r} {len(self._tools)} tools, {len(self.calls)} calls, {state}>"

    # -- registering ------------------------------------------------------------------------

    def add_tool(
        self,
        name: str,
        fn: Callable[..., Any] | None = None,
        *,
        result: Any = None,
        is_error: bool = False,
        error: RPCError | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        latency: float | None = None,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        """Offer a tool. Its answer is ``fn(**arguments)``, else the fixed ``result``.

        ``is_error=True`` marks the result as a failed tool run; ``error`` answers every call
        with that JSON-RPC error instead; ``latency`` (seconds) delays the answer. The input
        schema is taken from ``fn``'s signature unless ``input_schema`` is given. ``meta`` is
        the tool's ``_meta`` (an MCP Apps ``ui`` link, for one).
        """
        self._tools[name] = ToolEntry(
            name, fn, description=description, input_schema=input_schema, result=result,
            is_error=is_error, error=error, latency=latency, annotations=annotations, meta=meta,
        )

    def tool(self, fn: F | None = None, *, name: str | None = None, description: str | None = None,
             latency: float | None = None) -> Any:
        """Decorator form of ``add_tool``: ``@fake.tool`` or ``@fake.tool(name="x")``."""
        def register(func: F) -> F:
            self.add_tool(name or func.__name__, func, description=description, latency=latency)
            return func
        return register(fn) if fn is not None else register

    def add_resource(self, uri: str, content: str | bytes | Callable[[], str | bytes], *,
                     name: str | None = None, description: str | None = None,
                     mime_type: str | None = None) -> None:
        """Offer a resource: ``str`` is sent as text, ``bytes`` as a blob, a function is
        called at each read."""
        if mime_type is None and isinstance(content, str):
            mime_type = "text/plain"
        self._resources[uri] = ResourceEntry(uri, content, name=name, description=description, mime_type=mime_type)

    def add_resource_template(self, uri_template: str, fn: Callable[..., str | bytes], *,
                              name: str | None = None, description: str | None = None,
                              mime_type: str | None = None) -> None:
        """Offer a template like ``notes://{name}``; a read calls ``fn(name=...)``."""
        self._templates.append(TemplateEntry(uri_template, fn, name=name, description=description,
                                             mime_type=mime_type))

    def add_prompt(self, name: str, fn: Callable[..., Any] | str, *, description: str | None = None,
                   arguments: Sequence[t.PromptArgument | str | Mapping[str, Any]] | None = None) -> None:
        """Offer a prompt rendered by ``fn(**arguments)`` (or fixed text). Arguments are
        taken from ``fn``'s signature unless given."""
        self._prompts[name] = PromptEntry(name, fn, description=description, arguments=arguments)

    def prompt(self, fn: F | None = None, *, name: str | None = None,
               description: str | None = None) -> Any:
        """Decorator form of ``add_prompt``."""
        def register(func: F) -> F:
            self.add_prompt(name or func.__name__, func, description=description)
            return func
        return register(fn) if fn is not None else register

    def add_completion(self, ref: str, argument: str,
                       values: Sequence[str] | Callable[..., Sequence[str]]) -> None:
        """Complete ``argument`` of the prompt (or resource template) ``ref``: a list is
        filtered by the prefix typed so far; a function gets ``(value, context)``."""
        self._completions[(ref, argument)] = values

    def on(self, method: str, handler: Callable[[dict[str, Any]], Any]) -> None:
        """Answer ``method`` with ``handler(params)`` (overrides the built-in behaviour)."""
        self._handlers[method] = handler

    # -- expecting and checking -------------------------------------------------------------

    def expect_call(self, tool: str, arguments: ArgumentsMatcher = None, *, times: int | None = 1) -> Expectation:
        """Require that ``tool`` is called ``times`` times (None: at least once) with matching
        ``arguments`` (None: any; a mapping: equal; a function: returns true)."""
        expectation = Expectation("tools/call", tool, arguments, times)
        self._expectations.append(expectation)
        return expectation

    def expect(self, method: str, *, name: str | None = None, arguments: ArgumentsMatcher = None,
               times: int | None = 1) -> Expectation:
        """Require a request of any ``method`` (e.g. ``"resources/read"``, name = the URI)."""
        expectation = Expectation(method, name, arguments, times)
        self._expectations.append(expectation)
        return expectation

    @property
    def tool_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """``(name, arguments)`` of every ``tools/call`` received, in order."""
        with self._record_lock:
            return [(c.name or "", c.arguments or {}) for c in self.calls if c.method == "tools/call"]

    def verify(self) -> None:
        """Raise ``AssertionError`` listing what was expected and what was called, if an
        expectation was not met, an unregistered name was asked for (strict mode), or a
        fake function failed an assertion."""
        with self._record_lock:
            calls = list(self.calls)
        problems = [e.describe(calls) for e in self._expectations if not e.met(calls)]
        if self.strict:
            problems += [f"unexpected call to something not registered: {c}" for c in calls if not c.known]
        problems += [f"assertion failed in a fake function: {f}" for f in self._failures]
        if problems:
            lines = "\n".join(f"  {p}" for p in problems)
            raise AssertionError(
                f"FakeServer {self.name!r}: {len(problems)} problem(s):\n{lines}\n"
                f"calls received:\n{describe_calls(calls)}"
            )

    def reset(self) -> None:
        """Forget recorded calls, expectations and failures (registrations stay)."""
        with self._record_lock:
            self.calls.clear()
        self._expectations.clear()
        self._failures.clear()

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
        if not exc_info or exc_info[0] is None:
            self.verify()

    # -- answering --------------------------------------------------------------------------

    def record(self, method: str, params: dict[str, Any]) -> None:
        name: str | None = None
        arguments: dict[str, Any] | None = None
        known = True
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments") or {}
            known = name in self._tools
        elif method == "prompts/get":
            name, arguments = params.get("name"), params.get("arguments") or {}
            known = name in self._prompts
        elif method == "resources/read":
            name = params.get("uri")
            known = self._find_resource(name or "") is not None
        with self._record_lock:
            self.calls.append(Call(method=method, params=params, name=name, arguments=arguments, known=known))

    def request_latency(self, method: str, params: dict[str, Any]) -> float:
        if method == "tools/call":
            entry = self._tools.get(params.get("name", ""))
            if entry is not None and entry.latency is not None:
                return entry.latency
        return self.latency

    def handle(self, method: str, params: dict[str, Any], ctx: Context) -> Any:
        custom = self._handlers.get(method)
        if custom is not None:
            return custom(params)
        builtin = _BUILTIN.get(method)
        if builtin is None:
            raise method_not_found(method, "this server does not handle it")
        return builtin(self, params, ctx)

    def _initialize(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        self.protocol_version = asked if asked in SUPPORTED_VERSIONS else LATEST_VERSION
        self.client_info = params.get("clientInfo")
        self.client_capabilities = params.get("capabilities")
        result: dict[str, Any] = {
            "protocolVersion": self.protocol_version,
            "capabilities": self.capabilities,
            "serverInfo": {"name": self.name, "version": self.version},
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def _page(self, params: dict[str, Any], key: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        if not self.page_size:
            return {key: items}
        start = int(params.get("cursor") or 0)
        end = start + self.page_size
        page: dict[str, Any] = {key: items[start:end]}
        if end < len(items):
            page["nextCursor"] = str(end)
        return page

    def _call_tool(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name", "")
        entry = self._tools.get(name)
        if entry is None:
            raise RPCError(RPCError.INVALID_PARAMS, f"unknown tool: {name}")
        if entry.error is not None:
            raise entry.error
        if entry.fn is None:
            return tool_result_to_wire(entry.result, is_error=entry.is_error)
        arguments = dict(params.get("arguments") or {})
        if entry.wants_ctx:
            arguments["ctx"] = ctx
        try:
            value = entry.fn(**arguments)
        except RPCError:
            raise
        except AssertionError as exc:
            self._failures.append(exc)
            return tool_result_to_wire(f"AssertionError: {exc}", is_error=True)
        except Exception as exc:
            return tool_result_to_wire(f"{type(exc).__name__}: {exc}", is_error=True)
        return tool_result_to_wire(value, is_error=entry.is_error)

    def _find_resource(self, uri: str) -> tuple[ResourceEntry, dict[str, str] | None] | None:
        if uri in self._resources:
            return self._resources[uri], None
        for template in self._templates:
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    def _read_resource(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri", "")
        found = self._find_resource(uri)
        if found is None:
            raise RPCError(RPCError.RESOURCE_NOT_FOUND, f"resource not found: {uri}", {"uri": uri})
        entry, variables = found
        return {"contents": entry.read(uri, variables)}

    def _get_prompt(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        name = params.get("name", "")
        entry = self._prompts.get(name)
        if entry is None:
            raise RPCError(RPCError.INVALID_PARAMS, f"unknown prompt: {name}")
        return entry.render(params.get("arguments") or {})

    def _complete(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        ref = params.get("ref") or {}
        argument = params.get("argument") or {}
        key = (ref.get("name") or ref.get("uri") or "", argument.get("name", ""))
        source = self._completions.get(key, ())
        value = argument.get("value", "")
        if callable(source):
            values = list(source(value, (params.get("context") or {}).get("arguments") or {}))
        else:
            values = [v for v in source if v.startswith(value)]
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}


_BUILTIN: dict[str, Callable[[FakeServer, dict[str, Any], Context], Any]] = {
    "initialize": FakeServer._initialize,
    "ping": lambda self, params, ctx: {},
    "logging/setLevel": lambda self, params, ctx: {},
    "tools/list": lambda self, params, ctx: self._page(params, "tools", [e.definition() for e in self._tools.values()]),
    "tools/call": FakeServer._call_tool,
    "resources/list": lambda self, params, ctx: self._page(
        params, "resources", [e.definition() for e in self._resources.values()]),
    "resources/templates/list": lambda self, params, ctx: self._page(
        params, "resourceTemplates", [e.definition() for e in self._templates]),
    "resources/read": FakeServer._read_resource,
    "prompts/list": lambda self, params, ctx: self._page(
        params, "prompts", [e.definition() for e in self._prompts.values()]),
    "prompts/get": FakeServer._get_prompt,
    "completion/complete": FakeServer._complete,
}
