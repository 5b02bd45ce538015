"""What every framework adapter shares: naming, timeouts, and one tool call with its failure.

Each framework module turns the ``Bound`` tools made here into its own tool objects. Nothing
here imports a framework. A ``Bound`` holds only immutable data and calls ``call_tool`` on a
``Client`` or ``ClientGroup``, both safe to share between threads, so a framework may run the
same tool from several threads at once.
"""

from __future__ import annotations

import keyword
import re
from typing import Any, Callable, Mapping, Sequence

from attrs import frozen

from .. import types as t
from .._core.exceptions import ClientClosedError, MCPError, ToolError, TransportError
from .._core.llm_names import unique_names
from .._core.timeouts import DEFAULT
from ..ai import Tool
from ..llm._common import Part, ToolSource, parameters, parts_of, resolve

__all__ = ["Bound", "Reply", "bind", "identifier"]


@frozen
class Reply:
    """A successful tool call: the parts the framework can show, and the full ``ToolResult``."""

    parts: list[Part]
    result: t.ToolResult

    @property
    def text(self) -> str:
        """Every part as text (images described), for frameworks that take a string only."""
        return "\n".join(p.text if p.kind == "text" else f"[image {p.mime_type}]" for p in self.parts)

    @property
    def has_images(self) -> bool:
        return any(p.kind == "image" for p in self.parts)


@frozen
class Bound:
    """One MCP tool under the name a framework will show, with its call timeout.

    ``name`` is the framework-facing name; ``tool.name`` is the name the server (or the
    group's router) knows, used for the call. ``schema`` is the tool's input JSON Schema,
    verbatim, always an object schema.
    """

    name: str
    tool: Tool
    timeout: Any

    @property
    def description(self) -> str:
        return self.tool.description or self.tool.name

    @property
    def schema(self) -> dict[str, Any]:
        return parameters(self.tool)

    def call(self, arguments: Mapping[str, Any] | None) -> Reply:
        """Run the tool. A failure the model can act on (the tool's ``isError``, a JSON-RPC
        error such as bad arguments, a timeout) raises ``ToolError`` with a message for the
        model; a closed client or a lost connection raises as it is, ending the agent run."""
        kwargs = {} if self.timeout is DEFAULT else {"timeout": self.timeout}
        try:
            result = self.tool.client.call_tool(self.tool.name, dict(arguments or {}), **kwargs)
        except (ClientClosedError, TransportError):
            raise
        except ToolError:
            raise
        except MCPError as exc:
            raise ToolError(f"tool {self.name!r} failed: {exc}", tool=self.tool.name) from exc
        if result.is_error:
            text = Reply(parts_of(result), result).text or "(no text)"
            raise ToolError(f"tool {self.name!r} failed: {text}", result, tool=self.tool.name)
        return Reply(parts_of(result), result)


_NOT_IDENTIFIER = re.compile(r"\W", re.ASCII)


def identifier(name: str) -> str:
    """``name`` as a Python identifier that is not a keyword (for frameworks that need one)."""
    clean = _NOT_IDENTIFIER.sub("_", name)
    if not clean or clean[0].isdigit() or keyword.iskeyword(clean):
        clean = f"t_{clean}"
    return clean


def bind(
    source: ToolSource,
    *,
    timeout: Any = DEFAULT,
    timeouts: Mapping[str, Any] | None = None,
    rename: Callable[[str], str] | None = None,
    max_length: int = 64,
) -> list[Bound]:
    """The tools of ``source`` under names the framework accepts.

    Names follow the LLM APIs' rule (``^[a-zA-Z0-9_-]{1,64}$``), then ``rename`` (for
    stricter frameworks), then are made unique with ``_2``, ``_3``... in order: the same
    tools always get the same names. ``timeouts`` maps a tool's own name (the prefixed name
    for a group) to its call timeout; ``timeout`` is every other tool's.
    """
    tools: Sequence[Tool] = resolve(source)
    names = unique_names((t.name for t in tools), max_length=max_length)
    if rename is not None:
        names = unique_names((rename(n) for n in names), max_length=max_length)
    per_tool = dict(timeouts or {})
    unknown = set(per_tool) - {t.name for t in tools}
    if unknown:
        raise ValueError(f"timeouts given for unknown tools: {', '.join(sorted(unknown))}")
    return [Bound(name, tool, per_tool.get(tool.name, timeout)) for name, tool in zip(names, tools)]
