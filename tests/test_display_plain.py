"""What a new user sees first in a notebook, without ``%load_ext mcpclient.notebook``:
tool lists as tables, Markdown resources rendered, server info and capabilities as tables."""

from __future__ import annotations

from mcpclient import Client, types as t
from mcpclient.testing import FakeServer


def server() -> FakeServer:
    fake = FakeServer(strict=False)
    fake.add_tool("add", lambda a, b: a + b, description="Add <two> numbers")
    fake.add_resource("notes://readme", "# Title\n\n*hi*", mime_type="text/markdown")
    fake.add_resource("notes://plain", "# not a heading")
    return fake


def test_list_tools_is_a_real_list_that_renders_as_a_table():
    with server() as fake, Client(fake) as client:
        tools = client.list_tools()
        assert isinstance(tools, list) and tools == list(tools) and [x.name for x in tools] == ["add"]
        html = tools._repr_html_()
        assert "<table>" in html and "<code>add</code>" in html and "Add &lt;two&gt; numbers" in html
        assert "ToolDef(" not in html
        assert client.list_resources()._repr_html_().count("notes://") == 2


def test_a_markdown_resource_renders_as_markdown_and_others_as_source():
    with server() as fake, Client(fake) as client:
        [markdown] = client.read_resource("notes://readme")
        [plain] = client.read_resource("notes://plain")
    assert "<h1>Title</h1>" in markdown._repr_html_() and "<em>hi</em>" in markdown._repr_html_()
    assert "<pre" in plain._repr_html_() and "<h1>" not in plain._repr_html_()


def test_server_info_and_capabilities_render_as_tables():
    with server() as fake, Client(fake) as client:
        info, caps = client.server_info, client.server_capabilities
    assert "<th" in info._repr_html_() and "Implementation(" not in info._repr_html_()
    assert isinstance(caps, dict) and "tools" in caps
    html = caps._repr_html_()
    assert "<th style=\"text-align:left\">tools</th>" in html


def test_an_implementation_escapes_server_text():
    assert "<b>" not in t.Implementation(name="<b>x</b>")._repr_html_()
