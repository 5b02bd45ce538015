"""What every LLM format shares: tool names the APIs accept, and running one call safely."""

from __future__ import annotations

import base64
import binascii
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeVar, Union, cast

from attrs import frozen

from .. import types as t
from .._core.exceptions import ClientClosedError, MCPError, TransportError
from .._core.llm_names import unique_names
from ..ai import Tool
from ..ai import tools as list_tools

if TYPE_CHECKING:
    from .._client.client import Client

__all__ = ["Outcome", "Part", "ToolSource", "as_dict", "index", "resolve", "run_calls"]

log = logging.getLogger(__name__)

#: A list of ``ai.Tool`` (from ``mcpclient.tools(client)`` or ``group.tools()``), a ``Client``
#: or a ``ClientGroup``. Pass the list when you can: a client or group is asked for its tools
#: on every use.
ToolSource = Union[Sequence[Tool], Any]

T = TypeVar("T")


def resolve(source: ToolSource) -> list[Tool]:
    """The tools of ``source``: a list of ``Tool``, or anything with ``tools()``/``list_tools()``."""
    if isinstance(source, (list, tuple)):
        return list(source)
    group_tools = getattr(source, "tools", None)
    if callable(group_tools):
        return list(group_tools())
    if hasattr(source, "list_tools"):
        return list_tools(cast("Client", source))
    raise TypeError(f"expected a list of mcpclient.ai.Tool, a Client or a ClientGroup, got {type(source).__name__}")


def index(tools: Sequence[Tool]) -> dict[str, Tool]:
    """Map the name the LLM sees (sanitized, unique) to each tool; same input, same names."""
    return dict(zip(unique_names(tool.name for tool in tools), tools))


def parameters(tool: Tool) -> dict[str, Any]:
    """The tool's input schema, verbatim, but always an object schema (APIs refuse others)."""
    schema = tool.schema if isinstance(tool.schema, dict) else {}
    if schema.get("type") != "object":
        return {"type": "object", "properties": {}, **{k: v for k, v in schema.items() if k != "type"}}
    if "properties" not in schema:
        return {**schema, "properties": {}}
    return schema


def as_dict(value: Any) -> Any:
    """An LLM SDK object (pydantic ``model_dump``) as plain JSON; dicts and lists unchanged."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return value


@frozen
class Part:
    """One piece of a tool's output: ``kind`` "text" (``text``) or "image" (``data`` base64)."""

    kind: str
    text: str = ""
    data: str = ""
    mime_type: str = ""


@frozen
class Outcome:
    """The result of one tool call, ready to be shaped for an API."""

    call_id: str
    parts: list[Part]
    is_error: bool

    def text(self) -> str:
        """Every part as text (images described), errors prefixed with ``Error:``."""
        body = "\n".join(p.text if p.kind == "text" else _describe_image(p) for p in self.parts)
        return f"Error: {body}" if self.is_error else body


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data + "=" * (-len(data) % 4)))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _describe_image(part: Part) -> str:
    return f"[image {part.mime_type or 'unknown type'}, {_size(part.data)} bytes]"


def parts_of(result: t.ToolResult) -> list[Part]:
    """A ``ToolResult`` as text and image parts; what an API cannot show is described in text."""
    parts: list[Part] = []
    for c in result.content:
        if c.type == "text":
            parts.append(Part("text", text=c.text))
        elif c.type == "image" and c.data:
            parts.append(Part("image", data=c.data, mime_type=c.mime_type or "image/png"))
        elif c.type == "resource" and c.resource is not None:
            res = c.resource
            if res.text is not None:
                parts.append(Part("text", text=res.text))
            else:
                size = len(res.blob or b"")
                parts.append(Part("text", text=f"[resource {res.uri} ({res.mime_type or 'binary'}), {size} bytes]"))
        elif c.type == "resource_link":
            parts.append(Part("text", text=f"[resource link {c.uri}{f' ({c.name})' if c.name else ''}]"))
        elif c.type == "audio":
            parts.append(Part("text", text=f"[audio {c.mime_type or 'unknown type'}, {_size(c.data)} bytes]"))
        else:
            parts.append(Part("text", text=json.dumps(c.raw or {"type": c.type})))
    if result.structured_content is not None and not any(p.kind == "text" and p.text for p in parts):
        parts.append(Part("text", text=json.dumps(result.structured_content)))
    return parts


def _error(call_id: str, message: str) -> Outcome:
    return Outcome(call_id, [Part("text", text=message)], True)


def run_one(tools: Mapping[str, Tool], call_id: str, name: str, arguments: Any,
            timeout: float | None) -> Outcome:
    """Run one call the model asked for; every failure the model can act on becomes an
    error ``Outcome``. A lost connection or closed client still raises."""
    tool = tools.get(name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return _error(call_id, f"there is no tool named {name!r}; available tools: {known}")
    if isinstance(arguments, (str, bytes)):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            return _error(call_id, f"the arguments for {name!r} are not valid JSON: {exc}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return _error(call_id, f"the arguments for {name!r} must be a JSON object")
    kwargs = {} if timeout is None else {"timeout": timeout}
    try:
        result = tool.client.call_tool(tool.name, arguments, **kwargs)
    except (ClientClosedError, TransportError):
        raise
    except MCPError as exc:
        log.info("tool %r failed: %s", tool.name, exc)
        return _error(call_id, str(exc))
    return Outcome(call_id, parts_of(result), result.is_error)


def run_calls(
    calls: Iterable[tuple[str, str, Any]],
    source: ToolSource,
    shape: Callable[[Outcome], T],
    *,
    timeout: float | None,
    parallel: bool,
) -> list[T]:
    """Run ``(call_id, name, arguments)`` calls in order (or at once with ``parallel``)."""
    tools = index(resolve(source))
    pending = list(calls)
    if parallel and len(pending) > 1:
        with ThreadPoolExecutor(max_workers=min(8, len(pending)), thread_name_prefix="mcpclient-llm") as pool:
            outcomes = list(pool.map(lambda c: run_one(tools, c[0], c[1], c[2], timeout), pending))
    else:
        outcomes = [run_one(tools, cid, name, args, timeout) for cid, name, args in pending]
    return [shape(o) for o in outcomes]
