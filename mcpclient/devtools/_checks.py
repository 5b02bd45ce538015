"""The doctor's checks of a server's tool listing: pure functions from what was listed to
``Finding``s (see ``mcpclient.devtools.doctor``)."""

from __future__ import annotations

import collections
import json
from typing import Any, Callable, Mapping, Sequence

import attrs

from .._client.calls import TOOL_NAME
from ..plugins.headers import InvalidToolHeaders, tool_header_paths
from ..plugins.lock import fingerprint

__all__ = ["LEVELS", "Finding", "cache_hints", "listing_order", "tool_findings"]

#: The levels of a finding, mildest first.
LEVELS = ("ok", "info", "warning", "error")


@attrs.frozen(kw_only=True)
class Finding:
    """One result: ``check`` (its name), ``level`` (see ``LEVELS``), ``message`` (may quote the
    server: clean it before showing it; ``Report.text`` does), ``details`` (more lines)."""

    check: str
    level: str
    message: str
    details: tuple[str, ...] = ()


def listing_order(first: Sequence[Mapping[str, Any]], second: Sequence[Mapping[str, Any]]) -> Finding:
    names = [str(t["name"]) for t in first]
    again = [str(t["name"]) for t in second]
    if names == again and [fingerprint("tools", t) for t in first] == [fingerprint("tools", t) for t in second]:
        return Finding(check="listing order", level="ok", message="tools/list twice: the same tools in the same order")
    if sorted(names) == sorted(again):
        return Finding(check="listing order", level="warning",
                       message="tools/list twice: the same tools in another order (caches, prompt caches and "
                               "generated code change for nothing)" if names != again else
                               "tools/list twice: the same names, but definitions changed in between")
    return Finding(check="listing order", level="warning", message="tools/list twice: different tools",
                   details=tuple(f"only once: {name}" for name in sorted(set(names) ^ set(again))))


def cache_hints(result: Mapping[str, Any], capabilities: Mapping[str, Any]) -> Finding:
    hints = {key: result[key] for key in ("ttlMs", "cacheScope") if key in result}
    changes = capabilities.get("tools")
    announces = isinstance(changes, dict) and changes.get("listChanged") is True
    shown = ", ".join(f"{key}={json.dumps(value)}" for key, value in hints.items())
    if hints:
        bad = [key for key, value in hints.items()
               if (key == "ttlMs" and (not isinstance(value, int) or isinstance(value, bool) or value < 0))
               or (key == "cacheScope" and value not in ("public", "private"))]
        if bad:
            return Finding(check="cache hints", level="error", message=f"tools/list carries invalid {', '.join(bad)}: {shown}")
        return Finding(check="cache hints", level="ok", message=f"tools/list carries {shown}")
    note = "it announces changes (listChanged), so a client may keep the list" if announces else \
        "and no listChanged: a client cannot know how long to keep the list"
    return Finding(check="cache hints", level="info", message=f"no ttlMs nor cacheScope on tools/list; {note}")


def tool_findings(tools: Sequence[Mapping[str, Any]]) -> list[Finding]:
    names = [str(t["name"]) for t in tools]
    odd = sorted({n for n in names if not TOOL_NAME.fullmatch(n)})
    twice = sorted(name for name, count in collections.Counter(names).items() if count > 1)
    found = [Finding(check="tool names", level="error" if twice else "warning" if odd else "ok",
                     message="; ".join(part for part in (
                         f"{len(twice)} listed twice" if twice else "",
                         f"{len(odd)} outside the format (1 to 128 of A-Z a-z 0-9 _ - ., SEP-986)" if odd else "",
                     ) if part) or "every name fits the format (SEP-986) and is unique",
                     details=tuple(json.dumps(n) for n in [*twice, *odd]))]
    found.append(_schemas(tools, "inputSchema", required=True))
    found.append(_schemas(tools, "outputSchema", required=False))
    found.append(_headers(tools))
    return found


def _validator() -> Callable[[Any], None] | None:
    try:
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for
    except ImportError:
        return None

    def check(schema: Any) -> None:
        try:
            validator_for(schema, default=_draft_2020_12()).check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"not valid JSON Schema: {exc.message}") from None
        except Exception as exc:  # jsonschema's own failures on a schema built to break it (a recursion, ...)
            raise ValueError(f"cannot be checked as JSON Schema ({type(exc).__name__})") from None

    return check


def _draft_2020_12() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator


def _schemas(tools: Sequence[Mapping[str, Any]], key: str, *, required: bool) -> Finding:
    check = _validator()
    problems: list[str] = []
    present = 0
    for tool in tools:
        name = json.dumps(str(tool["name"]))
        if key not in tool:
            if required:
                problems.append(f"{name}: no {key}")
            continue
        present += 1
        schema = tool[key]
        if not isinstance(schema, dict):
            problems.append(f"{name}: the {key} is not an object")
            continue
        if schema.get("type") != "object":
            problems.append(f"{name}: the {key}'s type is {json.dumps(schema.get('type'))}, not \"object\"")
        if check is not None:
            try:
                check(schema)
            except ValueError as exc:
                problems.append(f"{name}: {exc}")
    label = "input schemas" if required else "output schemas"
    unchecked = "" if check is not None else " (JSON Schema validity not checked: install jsonschema)"
    if problems:
        return Finding(check=label, level="error", message=f"{len(problems)} problem(s) in {present} {key}(s)",
                       details=tuple(problems))
    return Finding(check=label, level="ok", message=f"{present} {key}(s) fine{unchecked}")


def _headers(tools: Sequence[Mapping[str, Any]]) -> Finding:
    used: list[str] = []
    broken: list[str] = []
    for tool in tools:
        name = json.dumps(str(tool["name"]))
        try:
            paths = tool_header_paths(tool.get("inputSchema"))
        except InvalidToolHeaders as exc:
            broken.append(f"{name}: {exc}")
            continue
        except RecursionError:
            broken.append(f"{name}: the inputSchema nests too deeply to be read")
            continue
        used += [f"{name}: Mcp-Param-{header} <- {'.'.join(path)}" for header, path in paths]
    if broken:
        return Finding(check="x-mcp-header", level="error",
                       message=f"{len(broken)} tool(s) break the x-mcp-header rules (the client refuses them on "
                               "modern HTTP)", details=tuple(broken + used))
    if used:
        return Finding(check="x-mcp-header", level="info", message=f"{len(used)} parameter(s) mirrored as headers",
                       details=tuple(used))
    return Finding(check="x-mcp-header", level="ok", message="no x-mcp-header annotations")
