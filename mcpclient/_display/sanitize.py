"""Notebook output made inert: the one gate every HTML string mcpclient shows goes through.

A front end renders what the kernel sends as trusted: JupyterLab puts ``text/html`` and
``text/markdown`` from a running kernel into the page unsanitised, where a script could use
the Jupyter API to write files and run code in the kernel. So server text reaches a
notebook only as HTML that passed ``clean``: the ``nh3`` sanitiser (the Rust ``ammonia``)
with an allow-list of tags, attributes, classes, style properties and URLs
(``TAGS``/``ATTRIBUTES``, ``_keep``). Links go only to http(s) and mailto URLs, media only
to ``data:`` URIs of a raster image or audio type with clean base64 (SVG can carry script),
never to relative URLs (they would reach the Jupyter server). A server's Markdown is
rendered by markdown-it-py with raw HTML off and the same link rule (``markdown_html``),
then cleaned. Both libraries come with the ``notebook`` extra and are imported on first
use, never by ``import mcpclient``.

Without them, ``clean`` returns the HTML as ``mcpclient._display.html`` built it, where every
server string went through ``html.escape`` and every URL through ``data_uri``/``web_url``,
and ``markdown_html`` returns None so that Markdown is shown as escaped source text.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

__all__ = ["available", "clean", "data_uri", "markdown_html", "web_url"]

#: Media types shown inline, as ``data:`` URIs only. Raster images and audio: none of these
#: can carry script in any context (``image/svg+xml`` can, so it is shown as a placeholder).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})
AUDIO_TYPES = frozenset({"audio/mpeg", "audio/mp3", "audio/wav", "audio/x-wav", "audio/wave", "audio/ogg",
                         "audio/webm", "audio/flac", "audio/aac", "audio/mp4"})
LINK_SCHEMES = ("http", "https", "mailto")

TAGS = frozenset({
    "a", "audio", "b", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "i", "img", "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
})
ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "style"},
    "audio": {"src", "controls"},
    "ol": {"start"},
    "div": {"style"},
    "pre": {"style"},
    "th": {"style"},
    "td": {"style"},
}
#: The CSS properties mcpclient's own markup uses (and markdown-it's table alignment).
STYLE_PROPERTIES = frozenset({
    "border-left", "color", "font-family", "margin", "max-width", "opacity", "padding-left", "text-align",
    "white-space",
})

_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_DATA = re.compile(r"data:([a-z0-9.+-]+/[a-z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})")
# What a browser ignores in a URL before reading its scheme (WHATWG URL: leading and
# trailing C0 controls and spaces are stripped, tabs and newlines removed anywhere).
_URL_TRIM = "".join(map(chr, range(0x21)))
_URL_DROP = str.maketrans("", "", "\t\n\r")


def data_uri(mime: str | None, data: str, kind: str) -> str | None:
    """A ``data:`` URI for base64 ``data`` of an allowed image or audio type, else None."""
    mime = (mime or "").strip().lower()
    data = data.strip()
    allowed = IMAGE_TYPES if kind == "image" else AUDIO_TYPES if kind == "audio" else frozenset()
    if mime not in allowed or not _BASE64.fullmatch(data):
        return None
    return f"data:{mime};base64,{data}"


def _scheme(url: str) -> str:
    url = url.strip(_URL_TRIM).translate(_URL_DROP)
    head, colon, _ = url.partition(":")
    return head.lower() if colon else ""


def web_url(url: str | None) -> bool:
    """Whether ``url`` may be a link in a notebook: an http(s) or mailto URL, as a browser reads it."""
    return url is not None and _scheme(url) in LINK_SCHEMES


def _media(url: str, kinds: frozenset[str]) -> bool:
    found = _DATA.fullmatch(url.strip(_URL_TRIM).translate(_URL_DROP))
    return found is not None and found.group(1) in kinds


def _keep(tag: str, attribute: str, value: str) -> str | None:
    """nh3's second look at each kept attribute: URLs only of the kinds above."""
    if attribute == "href":
        return value if _scheme(value) in LINK_SCHEMES else None
    if attribute == "src":
        return value if _media(value, IMAGE_TYPES if tag == "img" else AUDIO_TYPES) else None
    return value


@functools.lru_cache(maxsize=1)
def _nh3() -> Any:
    try:
        import nh3
    except ImportError:
        return None
    return nh3


def available() -> bool:
    """Whether the sanitiser (``nh3``) and the Markdown renderer (``markdown-it-py``) are installed."""
    return _nh3() is not None and _markdown() is not None


def clean(html: str) -> str:
    """``html`` with every tag, attribute and URL outside the allow-list removed (``nh3``).

    Without nh3 the HTML is returned as built: callers build it from escaped text only.
    """
    nh3 = _nh3()
    if nh3 is None:
        return html
    result: str = nh3.clean(
        html, tags=set(TAGS), attributes=ATTRIBUTES, attribute_filter=_keep, url_schemes={*LINK_SCHEMES, "data"},
        allowed_classes={"div": {"mcpclient"}}, tag_attribute_values={"a": {"target": {"_blank"}}},
        filter_style_properties=set(STYLE_PROPERTIES),
        link_rel="noopener noreferrer", strip_comments=True,
    )
    return result


@functools.lru_cache(maxsize=1)
def _markdown() -> Callable[[str], str] | None:
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        return None
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])

    def validate(url: str) -> bool:
        # Links and images share this test; ``clean`` then keeps images of data: URIs only.
        return _scheme(url) in LINK_SCHEMES or _media(url, IMAGE_TYPES)

    md.validateLink = validate  # type: ignore[method-assign]
    render: Callable[[str], str] = md.render
    return render


def markdown_html(text: str) -> str | None:
    """A server's Markdown as clean HTML; None when nh3 or markdown-it-py is missing."""
    render = _markdown()
    if render is None or _nh3() is None:
        return None
    return clean(render(text))
