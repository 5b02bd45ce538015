"""Server text in notebook output is inert, whatever the server sends and wherever it lands.

The mime bundle is taken the way a notebook takes it (IPython's display formatter), and each
HTML string is read with a real HTML parser: only the allow-listed tags, no event handler
attribute, links only to http(s)/mailto, media only from ``data:`` URIs of raster images and
audio. No ``text/markdown`` ever leaves the kernel: JupyterLab renders Markdown from a
running kernel unsanitised, so a ``text/markdown`` resource was once a script in the page.
The browser half of this proof is tests/security/test_notebook_browser.py.
"""

from __future__ import annotations

import base64
import re
import sys
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient import notebook
from mcpclient import types as t
from mcpclient._display.html import to_html
from mcpclient.types import Capabilities, Listing

IPython = pytest.importorskip("IPython")
from IPython.core.formatters import DisplayFormatter  # noqa: E402

JS = "alert(document.domain)"
# Every way we know of getting script or a request out of Markdown or HTML; the generated
# test below mixes them with text, so the rule is tested as a class, not as this list.
PAYLOADS = [
    f"<img src=x onerror={JS}>",
    f'<img src="x" onerror="{JS}">',
    f"<svg onload={JS}>",
    f"<svg><script>{JS}</script></svg>",
    f"<script>{JS}</script>",
    f"<iframe srcdoc='<script>parent.{JS}</script>'></iframe>",
    f"<details open ontoggle={JS}>x</details>",
    f'<a href="javascript:{JS}">a</a>',
    f'<form action="javascript:{JS}"><button>b</button></form>',
    f'<math><mtext><table><mglyph><style><img src=x onerror="{JS}">',
    "<style>@import 'https://evil.example/x.css';</style>",
    f'<object data="data:text/html;base64,{base64.b64encode(b"<script>x</script>").decode()}"></object>',
    f"[link](javascript:{JS})",
    f"[link](JaVaScRiPt:{JS})",
    f"[link]( javascript:{JS})",
    f"[link](java\tscript:{JS})",
    f"[link](&#106;avascript:{JS})",
    f"[link](java&#x09;script:{JS})",
    f"[link](vbscript:{JS})",
    "[link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    f"[ref][r]\n\n[r]: javascript:{JS}",
    f"<javascript:{JS}>",
    f"![img](javascript:{JS})",
    "![svg](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+PC9zdmc+)",
    '![x" onerror="alert(1)](https://example.org/i.png)',
    '[x](https://example.org/ "a\\" onmouseover=\\"alert(1)")',
    "![tracker](https://evil.example/pixel.png)",
    "![rel](/api/contents/x.txt)",
    "[rel](/api/contents/x.txt)",
    "[rel](//evil.example/x)",
    "<!-- <img src=x onerror=alert(1)> -->",
    "```html\n<img src=x onerror=alert(1)>\n```",
    "`<img src=x onerror=alert(1)>`",
    "<https://example.org/<img src=x onerror=alert(1)>>",
]

# What the checker accepts, written out here rather than read from the code under test.
TAGS = {"a", "audio", "b", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6",
        "hr", "i", "img", "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul"}
ALLOWED_LINK = ("http:", "https:", "mailto:")
MEDIA = re.compile(r"data:(image/(png|jpeg|gif|webp|avif|bmp)|audio/[a-z0-9.+-]+);base64,[A-Za-z0-9+/]*={0,2}")


class Inert(HTMLParser):
    """Collects what in an HTML string could run or reach out; ``problems`` lists it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, value in attrs:
            value = value or ""
            url = re.sub(r"[\t\n\r]", "", value).strip("".join(map(chr, range(0x21)))).lower()
            if name.startswith("on") or name in ("srcdoc", "formaction", "action", "data", "srcset", "xlink:href"):
                self.problems.append(f"<{tag} {name}>")
            elif name == "href" and not url.startswith(ALLOWED_LINK):
                self.problems.append(f"<{tag} href={value!r}>")
            elif name == "src" and not MEDIA.fullmatch(url):
                self.problems.append(f"<{tag} src={value!r}>")
            elif name == "style" and re.search(r"url\(|expression|@import|position", value, re.I):
                self.problems.append(f"<{tag} style={value!r}>")
            elif name == "class" and value != "mcpclient":
                self.problems.append(f"<{tag} class={value!r}>")
            elif name not in ("href", "src", "style", "class", "alt", "title", "controls", "start", "rel", "target"):
                self.problems.append(f"<{tag} {name}>")


def problems(html: str) -> list[str]:
    parser = Inert()
    parser.feed(html)
    parser.close()
    return parser.problems


def test_the_checker_sees_what_would_run():
    assert problems('<img src=x onerror="alert(1)">') == ["<img src='x'>", "<img onerror>"]
    assert problems('<a href=" javascript:x">a</a><svg></svg>') == ["<a href=' javascript:x'>", "tag <svg>"]
    assert problems('<img src="data:image/svg+xml;base64,PHN2Zz4=">') != []
    assert problems('<a href="https://example.org/">a</a><img src="data:image/png;base64,aGk=">') == []


def bundle(value: object) -> dict:
    data, _metadata = DisplayFormatter().format(value)
    return data


def assert_inert(value: object) -> dict:
    data = bundle(value)
    assert set(data) <= {"text/plain", "text/html"}, f"a front end renders {set(data) - {'text/plain', 'text/html'}} raw"
    if "text/html" in data:
        assert problems(data["text/html"]) == [], data["text/html"]
    return data


def markdown(text: str) -> t.ResourceContents:
    return t.ResourceContents(uri="notes://readme", mime_type="text/markdown", text=text)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_markdown_resource_renders_as_inert_html(payload):
    data = assert_inert(markdown(f"# Notes\n\n{payload}\n\nend"))
    assert "<h1>Notes</h1>" in data["text/html"]


@pytest.mark.parametrize("mime", ["text/markdown", "TEXT/Markdown; charset=utf-8", "text/html", "image/svg+xml",
                                  "text/plain", None])
def test_no_resource_text_becomes_markup(mime):
    for payload in PAYLOADS:
        assert_inert(t.ResourceContents(uri="notes://x", mime_type=mime, text=payload))


@pytest.mark.parametrize("payload", PAYLOADS)
def test_every_server_string_of_every_value_is_inert(payload):
    hostile_uri = f"javascript:{JS}"
    part = {"type": "x-unknown", "html": payload}
    values = [
        t.ToolResult(content=[
            t.ToolContent(type="text", text=payload),
            t.ToolContent(type="image", data=base64.b64encode(payload.encode()).decode(), mime_type="image/svg+xml"),
            t.ToolContent(type="image", data="aGk=", mime_type=payload),
            t.ToolContent(type="audio", data="aGk=", mime_type="audio/wav\"><script>x</script>"),
            t.ToolContent(type="resource_link", uri=hostile_uri, name=payload),
            t.ToolContent(type="resource_link", uri=" javascript:alert(1)", name="x"),
            t.ToolContent(type="resource", resource=markdown(payload)),
            t.ToolContent(type="resource", resource=t.ResourceContents(uri=hostile_uri, mime_type="image/svg+xml",
                                                                       blob=payload.encode())),
            t.ToolContent(type="x-unknown", raw=part),
        ], structured_content={"html": payload}, is_error=True),
        t.ToolDef(name=payload, description=payload, title=payload, input_schema={
            "type": "object", "required": [payload],
            "properties": {payload: {"type": [payload, "string"], "description": payload}, "b": "not an object"}}),
        t.Prompt(name=payload, description=payload, arguments=[t.PromptArgument(name=payload, description=payload)]),
        t.PromptMessage(role=payload, content=[
            t.PromptPart(type="text", text=payload),
            t.PromptPart(type="image", data=payload.encode(), mime_type="image/png"),
            t.PromptPart(type="resource", resource=markdown(payload)),
            t.PromptPart(type="resource_link", uri=hostile_uri, name=payload),
        ]),
        t.Resource(uri=hostile_uri, name=payload, description=payload, mime_type=payload, title=payload),
        t.Implementation(name=payload, version=payload, title=payload, description=payload, website_url=hostile_uri),
        Capabilities({payload: {payload: payload}, "tools": {"listChanged": True}}),
    ]
    for value in values:
        assert_inert(value)
    assert_inert(Listing(values[:5]))
    assert problems(notebook._list_html(values[:5]) or "") == []


def test_only_web_links_and_raster_media_survive():
    html = to_html(t.ToolResult(content=[
        t.ToolContent(type="resource_link", uri="https://example.org/a", name="a"),
        t.ToolContent(type="resource_link", uri="mailto:a@example.org", name="m"),
        t.ToolContent(type="image", data="aGk=", mime_type="image/png"),
        t.ToolContent(type="audio", data="aGk=", mime_type="audio/wav"),
        t.ToolContent(type="image", data="PHN2Zz4=", mime_type="image/svg+xml"),
    ]))
    assert 'href="https://example.org/a"' in html and 'href="mailto:a@example.org"' in html
    assert '<img src="data:image/png;base64,aGk="' in html and 'src="data:audio/wav;base64,aGk="' in html
    assert "svg+xml;base64" not in html and "[image image/svg+xml]" in html
    rendered = to_html(markdown("[a](https://example.org/a) ![p](data:image/png;base64,aGk=)"))
    assert '<a href="https://example.org/a" rel="noopener noreferrer">a</a>' in rendered
    assert '<img src="data:image/png;base64,aGk=" alt="p">' in rendered


# Hostile fragments glued together at random: whatever the combination, nothing runs.
FRAGMENTS = st.sampled_from(PAYLOADS + [
    "<", ">", "&", '"', "'", "`", "](", ")", "[", "]", "!", ":", "javascript", "\n", "\n\n", " ", "\t", "<img",
    "onerror=", "src=", "href=", "<a ", "</a>", "<!--", "-->", "<![CDATA[", "]]>", "\\", "data:", "text/html",
    "&#x6a;", "&colon;", "\u0000", "\u00a0", "\u2028", "*", "_", "|", "# ", "> ", "1. ", "- ",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(FRAGMENTS | st.text(max_size=6), max_size=25).map("".join))
def test_generated_markdown_is_inert(text):
    assert_inert(markdown(text))
    assert_inert(t.ToolResult(content=[t.ToolContent(type="text", text=text)]))


@pytest.fixture
def without_the_notebook_extra(monkeypatch):
    from mcpclient._display import sanitize as _sanitize

    monkeypatch.setitem(sys.modules, "nh3", None)
    monkeypatch.setitem(sys.modules, "markdown_it", None)
    _sanitize._nh3.cache_clear()
    _sanitize._markdown.cache_clear()
    yield
    _sanitize._nh3.cache_clear()
    _sanitize._markdown.cache_clear()


def test_without_the_libraries_markdown_is_shown_as_escaped_source(without_the_notebook_extra):
    from mcpclient._display import sanitize as _sanitize

    assert not _sanitize.available()
    for payload in PAYLOADS:
        data = assert_inert(markdown(payload))
        assert "<pre" in data["text/html"]
    assert "# Title" in to_html(markdown("# Title"))
