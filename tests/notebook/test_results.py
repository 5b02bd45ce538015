"""The explorer's result: HTML, a table for a list of flat records, and the copied call."""

from __future__ import annotations

import ast
from html.parser import HTMLParser

import pytest

from mcpclient import types as t
from mcpclient.notebook import results
from mcpclient.notebook.results import call_code, records, result_html, table, table_html

PAYLOAD = '<img src=x onerror="pwned()"><script>pwned()</script><a href="javascript:pwned()">x</a>'


def elements(html):
    """Every (tag, attributes) a browser would build from ``html``."""
    found = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Parser().feed(html)
    return found


def result(structured=None, content=(), is_error=False):
    return t.ToolResult(content=list(content), structured_content=structured, is_error=is_error)


def test_a_list_of_flat_records_is_tabular_bare_or_wrapped_by_the_sdk():
    rows = [{"a": 1, "b": "x"}, {"a": 2, "c": None}]
    assert records(result(rows)) == rows
    assert records(result({"result": rows})) == rows


@pytest.mark.parametrize("structured", [None, [], {"a": 1}, [{"a": {"nested": 1}}], [1, 2], {"x": [], "y": []}])
def test_anything_else_is_not_a_table(structured):
    assert records(result(structured)) is None
    assert table(result(structured)) is None


def test_the_table_has_a_column_per_key_in_order_of_first_sight():
    html = table_html([{"a": 1, "b": True}, {"c": "z", "a": 2}])
    assert "<th>a</th><th>b</th><th>c</th>" in html
    assert "<td>1</td><td>true</td><td></td>" in html


def test_without_pandas_the_table_is_html(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    assert table(result([{"a": 1}])).startswith('<div class="mcpclient"><table>')


def test_with_pandas_the_table_is_a_data_frame():
    pandas = pytest.importorskip("pandas")
    frame = table(result({"result": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]}))
    assert isinstance(frame, pandas.DataFrame) and list(frame["a"]) == [1, 2]


def test_a_long_table_is_cut_and_says_so(monkeypatch):
    monkeypatch.setattr(results, "MAX_ROWS", 2)
    html = table_html([{"a": i} for i in range(5)])
    assert html.count("<tr>") == 3 and "3 more rows" in html


def test_hostile_cells_keys_and_text_stay_inert():
    rows = [{PAYLOAD: PAYLOAD}]
    html = result_html(result({"result": rows}, [t.ToolContent(type="text", text=PAYLOAD)]))
    tags = elements(html)
    assert {tag for tag, _ in tags} <= {"div", "table", "thead", "tbody", "tr", "th", "td", "pre"}
    assert all(name in ("class", "style") for _, attrs in tags for name, _ in attrs)
    assert html.count("&lt;script&gt;pwned()") == 3  # the key, the cell, the text: shown as text


def test_text_blocks_that_repeat_the_table_are_left_out_and_others_kept():
    rows = [{"a": 1}, {"a": 2}]
    parts = [t.ToolContent(type="text", text='{"a": 1}'), t.ToolContent(type="text", text='{"a": 2}')]
    assert result_html(result({"result": rows}, parts)) == table_html(rows)
    kept = result_html(result({"result": rows}, [*parts, t.ToolContent(type="text", text="a note")]))
    assert kept.startswith(table_html(rows)) and "a note" in kept and '{"a": 1}' not in kept
    failed = result_html(result({"result": rows}, parts, is_error=True))
    assert "tool error" in failed


def test_an_image_is_shown_inline_and_an_svg_is_not():
    png = t.ToolContent(type="image", data="iVBORw0KGgo=", mime_type="image/png")
    svg = t.ToolContent(type="image", data="PHN2Zz4=", mime_type="image/svg+xml")
    html = result_html(result(content=[png, svg]))
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in html
    assert "svg" not in html.split("[image")[0]


def test_the_copied_call_is_python_whose_strings_cannot_break_out():
    code = call_code("client", "x')\nimport os#\u202e", {"k'\n": [1, "v\")"], "n": None})
    tree = ast.parse(code)
    call = tree.body[0].value
    assert isinstance(call, ast.Call) and call.func.attr == "call_tool"
    assert ast.literal_eval(call.args[0]) == "x')\nimport os#\u202e"
    assert ast.literal_eval(call.args[1]) == {"k'\n": [1, 'v")'], "n": None}
    assert "\u202e" not in code and code.count("\n") == 1  # controls shown as escapes


def test_a_call_without_arguments_passes_none():
    assert call_code("api", "ping", {}) == "result = api.call_tool('ping')\nresult"
