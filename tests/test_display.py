"""Jupyter display of results: HTML, with everything from the server escaped and sanitised."""

from __future__ import annotations

from mcpclient import PromptMessage, PromptPart, ResourceContents, ToolContent, ToolDef, ToolResult
from mcpclient import notebook
from mcpclient._display.html import to_html


def test_text_is_html_escaped():
    html = ToolResult(content=[ToolContent(type="text", text='<img src=x onerror="alert(1)">')])._repr_html_()
    assert "<img" not in html and "&lt;img src=x onerror=\"alert(1)\"&gt;" in html


def test_images_are_data_uris_only_for_image_types_and_clean_base64():
    good = ToolResult(content=[ToolContent(type="image", data="aGk=", mime_type="image/png")])._repr_html_()
    assert '<img src="data:image/png;base64,aGk="' in good
    bad_mime = ToolResult(content=[ToolContent(type="image", data="aGk=", mime_type='text/html"><script>')])
    assert "<img" not in bad_mime._repr_html_() and "<script>" not in bad_mime._repr_html_()
    bad_data = ToolResult(content=[ToolContent(type="image", data='" onerror="x', mime_type="image/png")])
    assert "<img" not in bad_data._repr_html_()


def test_errors_are_red_and_labelled():
    html = ToolResult(content=[ToolContent(type="text", text="boom")], is_error=True)._repr_html_()
    assert "tool error" in html and "#b00020" in html


def test_only_http_links_are_clickable():
    link = ToolResult(content=[ToolContent(type="resource_link", uri="javascript:alert(1)", name="x")])
    assert "href" not in link._repr_html_()
    web = ToolResult(content=[ToolContent(type="resource_link", uri="https://example.org/a", name="a")])
    assert 'href="https://example.org/a"' in web._repr_html_()


def test_resources_prompts_and_tools_render():
    text = ResourceContents(uri="demo://readme", mime_type="text/plain", text="# <Hi>")
    assert "&lt;Hi&gt;" in text._repr_html_()
    markdown = ResourceContents(uri="demo://readme", mime_type="text/markdown", text="# <Hi>")
    assert "<h1>&lt;Hi&gt;</h1>" in markdown._repr_html_()  # rendered here, to sanitised HTML
    image = ResourceContents(uri="demo://logo", mime_type="image/png", blob=b"\x89PNG")
    assert "data:image/png;base64," in image._repr_html_()
    message = PromptMessage(role="user", content=[PromptPart(type="text", text="Review <this>")])
    assert "<b>user</b>" in message._repr_html_() and "&lt;this&gt;" in message._repr_html_()
    tool = ToolDef(name="add", description="Add <two>", input_schema={
        "type": "object", "properties": {"a": {"type": "number", "description": "first"}}, "required": ["a"]})
    assert "<code>add</code>" in tool._repr_html_() and "Add &lt;two&gt;" in tool._repr_html_()
    assert "<td>first</td>" in to_html([tool])


def test_there_is_no_markdown_output():
    # JupyterLab renders a kernel's text/markdown unsanitised: results offer HTML only.
    for value in (ToolResult(content=[ToolContent(type="text", text="x")]), ResourceContents(uri="a://b", text="x")):
        assert not hasattr(value, "_repr_markdown_")


def test_the_notebook_list_formatter_leaves_other_lists_alone():
    assert notebook._list_html([1, 2]) is None
    assert notebook._list_html([]) is None
    assert "<code>t</code>" in notebook._list_html([ToolDef(name="t")])


def test_enable_outside_ipython_returns_false():
    assert notebook.enable() is False
