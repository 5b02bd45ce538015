"""A tool's result as the explorer shows it, and the cell that makes the same call.

``result_html`` is the result's own HTML (``mcpclient._display.html``: text, images as
``data:`` URIs, errors in red) with a table in front when the structured result is tabular
(``records``): a list of flat records, or an object whose one member is such a list (what
the official SDK makes of a function returning a list). ``table`` gives that table as a pandas
``DataFrame`` when pandas is importable, else as the same HTML. All HTML leaves through the
sanitiser (``_display.sanitize.clean``, nh3), cells are escaped before that.

``call_code`` writes the ``client.call_tool(...)`` line with the tool's name and the
arguments as ASCII Python literals (``mcpclient._core.source.literal``), so a hostile tool
name or value is a string in the cell, never code, and shows its control characters as
escapes; the client's variable must be a Python name.
"""

from __future__ import annotations

import html
import json
from typing import Any, Mapping

import attrs

from .. import types as t
from .._display.html import to_html
from .._display.sanitize import clean
from .._core.source import is_name, literal, needs_json

__all__ = ["call_code", "records", "result_html", "table", "table_html"]

#: Rows and columns a table shows; the rest is counted under it.
MAX_ROWS = 200
MAX_COLUMNS = 50

_SCALARS = (str, int, float, bool, type(None))


def records(result: t.ToolResult) -> list[dict[str, Any]] | None:
    """The structured result as rows when it is a non-empty list of flat records, else None."""
    data = result.structured_content
    if isinstance(data, dict) and len(data) == 1:
        data = next(iter(data.values()))
    if not isinstance(data, list) or not data:
        return None
    if not all(isinstance(row, dict) and all(isinstance(v, _SCALARS) for v in row.values()) for row in data):
        return None
    return data


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(str(key), None)
    return list(seen)


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return html.escape(text, quote=True)


def table_html(rows: list[dict[str, Any]]) -> str:
    """``rows`` as a clean HTML table (at most ``MAX_ROWS`` rows and ``MAX_COLUMNS`` columns)."""
    columns = _columns(rows)[:MAX_COLUMNS]
    head = "".join(f"<th>{html.escape(c, quote=True)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(row.get(c, ''))}</td>" for c in columns) + "</tr>"
                   for row in rows[:MAX_ROWS])
    more = len(rows) - MAX_ROWS
    note = f'<div style="opacity:.7">{more} more rows</div>' if more > 0 else ""
    return clean(f'<div class="mcpclient"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}</div>')


def table(result: t.ToolResult) -> Any:
    """The tabular structured result as a ``pandas.DataFrame`` (pandas installed) or clean HTML;
    None when the result is not tabular."""
    rows = records(result)
    if rows is None:
        return None
    try:
        import pandas  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return table_html(rows)
    return pandas.DataFrame.from_records(rows)


def _repeats(part: t.ToolContent, rows: list[dict[str, Any]]) -> bool:
    """Whether ``part`` is a text block that only repeats the table (one row, or all of them)."""
    if part.type != "text" or not part.text:
        return False
    try:
        value = json.loads(part.text)
    except ValueError:
        return False
    return value == rows or value in rows


def result_html(result: t.ToolResult) -> str:
    """The explorer's view of ``result``: the table (if tabular), then the result's own HTML.

    With a table, the text blocks that only repeat it as JSON (the official SDK adds one per
    row) are left out; every other block is shown.
    """
    rows = records(result)
    if rows is None:
        return to_html(result)
    rest = [part for part in result.content if not _repeats(part, rows)]
    if not rest and not result.is_error:
        return table_html(rows)
    return table_html(rows) + to_html(attrs.evolve(result, content=rest, structured_content=None))


def call_code(client_name: str, tool: str, arguments: Mapping[str, Any]) -> str:
    """The cell that makes this call: ``result = client.call_tool('name', {...})``.

    Raises ``ValueError`` when ``client_name`` is not a Python variable name.
    """
    if not is_name(client_name):
        raise ValueError(f"{client_name!r} is not a Python variable name")
    args = f", {literal(dict(arguments), width=None)}" if arguments else ""
    code = f"result = {client_name}.call_tool({literal(tool)}{args})\nresult"
    return f"import json\n{code}" if needs_json(args[2:]) else code
