"""The values mcpclient hands you and takes from you.

Frozen, keyword-only attrs classes with snake_case names. They know nothing of the wire: the
private converter in ``mcpclient._protocol.wire`` owns every wire rule (camelCase keys, ``_meta``,
base64, tagged content blocks). Opaque JSON (schemas, arguments, ``_meta``, structured content)
is kept as plain ``dict``/``list`` values, passed through verbatim.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Callable, Literal, TypeVar

from attrs import field, frozen

from ._core.exceptions import ToolError

__all__ = [
    "Capabilities",
    "Completion",
    "CompletionRef",
    "CreateMessageRequest",
    "CreateMessageResult",
    "ElicitationRequest",
    "ElicitationResult",
    "Implementation",
    "Listing",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptPart",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "Root",
    "SamplingMessage",
    "SessionState",
    "ToolContent",
    "ToolDef",
    "ToolResult",
    "ToolUI",
]

JSON = Any
Meta = dict[str, Any]
T = TypeVar("T")


def decode_base64(data: str) -> bytes:
    """The bytes of a base64 payload (``blob``, ``data``).

    Servers in the wild send unpadded or url-safe base64: strict first, lenient after.
    """
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        padded = data + "=" * (-len(data) % 4)
        return base64.b64decode(padded.replace("-", "+").replace("_", "/"))


def _plain_html(value: Any) -> str:
    import html  # here: its entity table costs import time, and a renderer replaces this one

    return "<pre>" + html.escape(repr(value)) + "</pre>"


#: What renders a model as HTML for Jupyter. The notebook display (``mcpclient._display.html``)
#: installs its sanitising renderer with ``set_html_renderer`` (``import mcpclient`` installs
#: one that loads it the first time a value is shown); the models never import it. Until
#: then a model shows as its escaped repr.
_render_html: Callable[[Any], str] = _plain_html


def set_html_renderer(render: Callable[[Any], str]) -> None:
    """Install the function that turns a model into sanitised HTML (``_repr_html_``)."""
    global _render_html
    _render_html = render


class _Display:
    """Jupyter display as HTML, sanitised (``mcpclient._display``: ``html``, ``sanitize``).

    HTML only: a front end shows ``text/markdown`` from the kernel unsanitised, so there is
    no ``_repr_markdown_``; a ``text/markdown`` resource is rendered to clean HTML instead.
    """

    __slots__ = ()

    def _repr_html_(self) -> str:
        return _render_html(self)


class Listing(list):  # type: ignore[type-arg]
    """A plain ``list`` (``client.list_tools()`` and the like) that renders as HTML in Jupyter.

    Without ``%load_ext mcpclient.notebook`` a list shows as a wall of reprs; this one
    shows as the table the extension shows, and is a list in every other respect.
    """

    def _repr_html_(self) -> str | None:
        return _render_html(self) if self else None


class Capabilities(dict):  # type: ignore[type-arg]
    """A plain ``dict`` of capabilities (``Client.server_capabilities``) that renders as a
    table in Jupyter."""

    def _repr_html_(self) -> str:
        return _render_html(self)


@frozen(kw_only=True)
class Implementation:
    """Name and version of an MCP client or server (``clientInfo`` / ``serverInfo``)."""

    name: str
    version: str = ""
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: list[JSON] | None = None

    def _repr_html_(self) -> str:
        return _render_html(self)


@frozen(kw_only=True)
class ToolUI:
    """A tool's MCP Apps link (``_meta.ui``, SEP-1865): its view and who may call it.

    ``visibility`` is the spec's default ``("model", "app")`` when the server gives none; a
    tool without ``"model"`` is never offered to a model (``mcpclient.apps.visible_to_model``).
    """

    resource_uri: str | None = None
    visibility: tuple[str, ...] = ("model", "app")


@frozen(kw_only=True)
class ToolDef(_Display):
    """One tool exposed by the server. ``input_schema`` is kept verbatim.

    ``ui`` is read from ``_meta`` (which stays as sent): the MCP Apps view and visibility,
    or None when the tool has no ``_meta.ui``.
    """

    name: str
    description: str = ""
    input_schema: dict[str, JSON] = field(factory=dict)
    title: str | None = None
    output_schema: dict[str, JSON] | None = None
    annotations: dict[str, JSON] | None = None
    icons: list[JSON] | None = None
    execution: dict[str, JSON] | None = None
    meta: Meta | None = None
    ui: ToolUI | None = None


@frozen(kw_only=True)
class ResourceContents(_Display):
    """The body of one resource: exactly one of ``text`` or ``blob`` (decoded bytes) is set."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: bytes | None = None
    meta: Meta | None = None


# ToolContent and ToolResult, built on every tool call, keep their fields in an instance
# dict rather than slots: the converter then fills one in a single step (``_wire.converter``:
# ``build``), where a frozen slotted class's ``__init__`` sets each field through
# ``object.__setattr__`` (about a thousand instructions a field, the larger part of a call's
# conversion).
@frozen(kw_only=True, slots=False)
class ToolContent:
    """One content part of a tool result, in wire order; ``raw`` is the part as sent.

    ``type`` is always set. Which other fields are filled depends on it: ``text`` for "text";
    ``data`` (base64) and ``mime_type`` for "image" and "audio" (``decoded()`` gives the
    bytes); ``resource`` for "resource"; ``uri``, ``name`` and ``mime_type`` for
    "resource_link". Unknown types keep only ``type`` and ``raw``.
    """

    type: str
    text: str = ""
    data: str = ""
    mime_type: str | None = None
    resource: ResourceContents | None = None
    uri: str | None = None
    name: str | None = None
    annotations: dict[str, JSON] | None = None
    meta: Meta | None = None
    raw: dict[str, JSON] = field(factory=dict, repr=False, eq=False)

    def decoded(self) -> bytes:
        """Return the binary payload of an image or audio part (empty for other types)."""
        if not self.data:
            return b""
        return decode_base64(self.data)


@frozen(kw_only=True, slots=False)
class ToolResult(_Display):
    """The outcome of ``call_tool``.

    ``text`` joins the text parts in order, with nothing between them (each part:
    ``[part.text for part in result.content if part.type == "text"]``); ``content`` keeps
    every part; ``is_error`` is the
    tool's own failure flag (the call itself succeeded). Call ``raise_for_error()`` to turn a
    failed tool run into a ``ToolError``.

    ``structured_content`` is the JSON as sent; ``data`` is the same as objects of classes made
    from the tool's ``outputSchema``, and ``structured(cls)`` converts it into a class of yours.
    ``output_schema`` is the schema of the tool the result came from, as the client last listed
    it (``None`` when the tool declares none or the tools were never listed).
    """

    content: list[ToolContent] = field(factory=list)
    is_error: bool = False
    structured_content: JSON = None
    meta: Meta | None = None
    # Not the server's: the client's knowledge (metadata wire=False keeps it out of JSON output).
    output_schema: dict[str, JSON] | None = field(default=None, eq=False, repr=False, metadata={"wire": False})

    @property
    def text(self) -> str:
        content = self.content
        if len(content) == 1:  # the usual result: one part, no join
            part = content[0]
            return part.text if part.type == "text" else ""
        return "".join(part.text for part in content if part.type == "text")

    @property
    def data(self) -> Any:
        """``structured_content`` as Python objects built from the tool's ``outputSchema``.

        Objects become frozen attrs classes made from the schema (built once per schema, then
        cached), arrays lists, and a ``{"result": x}`` wrapped output is unwrapped to ``x``;
        enums and formats stay plain values, parts the schema leaves open stay as sent. Each
        access builds fresh objects. ``None`` without structured content; the plain
        ``structured_content`` when no schema is known (the tools were not listed) or the tool
        failed. Raises ``StructuredOutputError`` for a schema nested too deep or recursive, or
        output that does not fit it.
        """
        if self.structured_content is None or self.is_error:
            return self.structured_content
        from ._core.typed import typed_view  # at call time: cattrs and the class builder load on first use

        return typed_view(self.output_schema, self.structured_content)

    def structured(self, cls: type[T]) -> T:
        """``structured_content`` converted with cattrs into ``cls`` (an attrs class, a dataclass,
        ``list[...]``, anything cattrs can build).

        A ``{"result": x}`` wrapped output (by its ``output_schema``) gives ``x``. Scalars are not
        coerced (``"5"`` never becomes ``5``); keys ``cls`` does not declare are ignored. Raises
        ``StructuredOutputError`` naming the path of each misfit (``$.items[0].name``).
        """
        from ._core.typed import structured

        result: T = structured(self.structured_content, cls, self.output_schema)
        return result

    def raise_for_error(self, tool: str | None = None) -> ToolResult:
        """Raise ``ToolError`` if the tool reported failure; return self otherwise."""
        if self.is_error:
            what = f"tool {tool!r}" if tool else "tool"
            raise ToolError(f"{what} failed: {self.text or '(no text)'}", self, tool=tool)
        return self


@frozen(kw_only=True)
class Resource(_Display):
    """One resource exposed by the server."""

    uri: str
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, JSON] | None = None
    icons: list[JSON] | None = None
    meta: Meta | None = None


@frozen(kw_only=True)
class ResourceTemplate:
    """One RFC 6570 URI template from which resource URIs can be built."""

    uri_template: str
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: dict[str, JSON] | None = None
    icons: list[JSON] | None = None
    meta: Meta | None = None


@frozen(kw_only=True)
class PromptArgument:
    """One argument a prompt accepts."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


@frozen(kw_only=True)
class Prompt(_Display):
    """One prompt template exposed by the server."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = field(factory=list)
    icons: list[JSON] | None = None
    meta: Meta | None = None


@frozen(kw_only=True)
class PromptPart:
    """One content part of a prompt message.

    ``type`` is always set: ``text`` for "text", ``resource`` for "resource", decoded ``data``
    and ``mime_type`` for "image" and "audio", ``uri``/``name`` for "resource_link". Unknown
    types are kept with ``type`` and ``raw`` and no error.
    """

    type: str
    text: str = ""
    resource: ResourceContents | None = None
    data: bytes = b""
    mime_type: str | None = None
    uri: str | None = None
    name: str | None = None
    annotations: dict[str, JSON] | None = None
    meta: Meta | None = None
    raw: dict[str, JSON] = field(factory=dict, repr=False, eq=False)


@frozen(kw_only=True)
class PromptMessage(_Display):
    """One message of a rendered prompt."""

    role: str
    content: list[PromptPart] = field(factory=list)


@frozen(kw_only=True)
class Completion:
    """The server's suggestions for one argument."""

    values: list[str] = field(factory=list)
    total: int | None = None
    has_more: bool = False


@frozen(kw_only=True)
class CompletionRef:
    """What a completion is for: a prompt (``ref/prompt``) or a resource template (``ref/resource``)."""

    type: Literal["ref/prompt", "ref/resource"]
    name: str | None = None
    uri: str | None = None

    @classmethod
    def prompt(cls, name: str) -> CompletionRef:
        return cls(type="ref/prompt", name=name)

    @classmethod
    def resource(cls, uri_template: str) -> CompletionRef:
        return cls(type="ref/resource", uri=uri_template)


def _check_root_uri(instance: Any, attribute: Any, value: str) -> None:
    if not value.startswith("file://"):
        raise ValueError(f"a root's uri must be a file:// URI, got {value!r}")


@frozen(kw_only=True)
class Root:
    """A filesystem root the client exposes to the server; ``uri`` must be a file:// URI."""

    uri: str = field(validator=_check_root_uri)
    name: str | None = None
    meta: Meta | None = None


@frozen(kw_only=True)
class SamplingMessage:
    """One message of a sampling request or reply; ``content`` is the wire content, verbatim
    (one content object, or a list of them in newer protocol versions)."""

    role: str
    content: JSON
    meta: Meta | None = None


@frozen(kw_only=True)
class CreateMessageRequest:
    """A server's ``sampling/createMessage`` request: run an LLM completion on its behalf.

    ``model_preferences``, ``metadata``, ``tools`` and ``tool_choice`` are passed through
    verbatim (None when absent); ``raw`` holds the request params as sent. ``server`` is
    the server that asks, as its ``serverInfo`` names it (set by the client, never read from
    the request), so a UI can say who asks.
    """

    messages: list[SamplingMessage] = field(factory=list)
    max_tokens: int = 0
    system_prompt: str | None = None
    model_preferences: JSON = None
    include_context: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    metadata: JSON = None
    tools: list[JSON] | None = None
    tool_choice: JSON = None
    meta: Meta | None = None
    raw: dict[str, JSON] = field(factory=dict, repr=False, eq=False)
    server: Implementation | None = None


@frozen(kw_only=True)
class CreateMessageResult:
    """Your reply to a sampling request. ``content`` is a wire content object, e.g.
    ``{"type": "text", "text": "..."}`` (or a list of them)."""

    content: JSON
    model: str
    role: str = "assistant"
    stop_reason: str | None = None
    meta: Meta | None = None

    @classmethod
    def from_text(cls, text: str, *, model: str, stop_reason: str | None = "endTurn") -> CreateMessageResult:
        return cls(content={"type": "text", "text": text}, model=model, stop_reason=stop_reason)


@frozen(kw_only=True)
class ElicitationRequest:
    """A server's ``elicitation/create`` request: gather input from the user.

    In form mode ``requested_schema`` is the JSON schema of the object wanted. In URL mode
    (``mode == "url"``) ``url`` is where the user should go and ``elicitation_id`` names the
    exchange; the client never opens the URL itself. ``server`` is the server that asks, as
    its ``serverInfo`` names it (set by the client, never read from the request): the spec
    wants the UI to make clear which server asks.
    """

    message: str
    requested_schema: dict[str, JSON] | None = None
    mode: str = "form"
    url: str | None = None
    elicitation_id: str | None = None
    meta: Meta | None = None
    server: Implementation | None = None


@frozen(kw_only=True)
class ElicitationResult:
    """Your reply to an elicitation request: "accept" (with ``content``), "decline" or "cancel"."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, JSON] | None = None
    meta: Meta | None = None


@frozen(kw_only=True)
class SessionState:
    """A legacy Streamable HTTP session, saved to be resumed by another client (``resume=``).

    ``Client.session_state`` gives it; ``as_dict()`` is plain JSON (save it to a file, a
    cache, an environment variable) and ``SessionState.from_dict`` reads it back. Besides the
    ``Mcp-Session-Id`` (``session_id``) and the version the session negotiated, it keeps what
    the server's ``initialize`` answer said (``capabilities``, ``server_info``, ``instructions``,
    as sent), since a resumed client sends no ``initialize`` to learn them again.

    The session id is a credential of sorts: whoever holds it speaks in that session. Keep
    it where you would keep a cookie.
    """

    session_id: str
    protocol_version: str
    capabilities: dict[str, Any] = field(factory=dict)
    server_info: dict[str, Any] = field(factory=dict)
    instructions: str | None = None

    def __repr__(self) -> str:  # the id stays out of logs and tracebacks
        return f"SessionState(protocol_version={self.protocol_version!r}, session_id=<hidden>)"

    def as_dict(self) -> dict[str, Any]:
        """The state as plain JSON values (``from_dict`` reads it back)."""
        saved: dict[str, Any] = {
            "session_id": self.session_id, "protocol_version": self.protocol_version,
            "capabilities": self.capabilities, "server_info": self.server_info,
        }
        if self.instructions is not None:
            saved["instructions"] = self.instructions
        return saved

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> SessionState:
        """The state ``as_dict`` gave. Raises ``ValueError`` when ``session_id`` or
        ``protocol_version`` is missing or not a string, or another field has the wrong type."""
        session_id, version = saved.get("session_id"), saved.get("protocol_version")
        if not isinstance(session_id, str) or not session_id or not isinstance(version, str) or not version:
            raise ValueError("a saved session needs a session_id and a protocol_version (strings)")
        capabilities, server_info = saved.get("capabilities", {}), saved.get("server_info", {})
        instructions = saved.get("instructions")
        if not isinstance(capabilities, dict) or not isinstance(server_info, dict) or not (
                instructions is None or isinstance(instructions, str)):
            raise ValueError("a saved session's capabilities and server_info must be objects, its instructions a string")
        return cls(session_id=session_id, protocol_version=version, capabilities=capabilities,
                   server_info=server_info, instructions=instructions)
