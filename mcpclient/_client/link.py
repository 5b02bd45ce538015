"""A link a server asks a person to open: where the browser will really go, or a refusal.

A consent prompt shows a URL and the host it goes to; the person decides on that host. The
host must therefore be the one the *browser* will use, and browsers parse URLs by the WHATWG
URL standard, which differs from ``urllib.parse``: ``\\`` ends the authority, tabs and
newlines inside the URL are dropped, percent-escapes in the host are decoded, ``0x7f.1`` is
the IPv4 address 127.0.0.1, ``http:evil.com`` has the host ``evil.com``, and international
names are mapped by UTS 46 (fullwidth dots are dots). ``judge(url)`` parses with ada, a
WHATWG-conformant parser (the ``ada-url`` package, in the ``cli`` and ``prompting`` extras),
and with ``urllib.parse``, and returns the host only when both name the same one. There is
no fallback to ``urllib.parse`` alone: without ada every link is refused, with a message
saying what to install.

A link is refused (``LinkRefused``, whose message says why, for the person) when:

* it is not an ``http`` or ``https`` URL with ``//`` and a host;
* it holds anything ``_text.clean`` would escape (controls, newlines, tabs, bidi controls,
  invisible format characters, lone surrogates), whitespace, or a backslash: a browser
  drops or rewrites these, so the link shown would not be the link opened;
* its authority holds ``@`` (user info, real or as a trick: ``https://bank.com@evil.com``);
* the two parsers disagree on its scheme, host or port (percent-escapes in the host,
  IPv4 shorthand, IDNA 2003 against UTS 46 names such as ``faß.de``, ...);
* it is longer than ``MAX_LENGTH`` characters, too long to read before saying yes.

The host is shown as the browser sends it: lower case, international names in punycode
(``xn--pple-43d.com`` for a Cyrillic "apple"), IPv4 and IPv6 addresses in their canonical
form. ``Link.href`` is ada's serialisation of the URL, the one handed to the browser.
"""

from __future__ import annotations

import ipaddress
import types
from importlib import import_module
from urllib.parse import urlsplit

import attrs

from .._core.text import is_clean

__all__ = ["Link", "LinkRefused", "MAX_LENGTH", "judge"]

#: The longest link a person is asked about.
MAX_LENGTH = 8192
_DEFAULT_PORTS = {"http": 80, "https": 443}
INSTALL_HINT = "pip install 'mcpclient[prompting]'"


class LinkRefused(ValueError):
    """The link cannot be shown for consent; the message says why, for the person."""


@attrs.frozen
class Link:
    """A link judged safe to show: ``href`` to open, ``host`` (and ``port``) it goes to."""

    href: str
    scheme: str
    host: str
    port: int | None  #: None for the scheme's default port

    @property
    def authority(self) -> str:
        """``host`` or ``host:port``, as shown to the person."""
        return self.host if self.port is None else f"{self.host}:{self.port}"

    @property
    def international(self) -> bool:
        """Whether the host is an international name (a punycode label)."""
        return any(label.startswith("xn--") for label in self.host.split("."))


def _ada() -> types.ModuleType:
    try:
        return import_module("ada_url")
    except ImportError:
        raise LinkRefused(
            "links cannot be checked here: the WHATWG URL parser ada-url is not installed "
            f"({INSTALL_HINT})"
        ) from None


def judge(url: object) -> Link:
    """The host ``url`` takes a browser to, as a ``Link``; raises ``LinkRefused`` otherwise."""
    if not isinstance(url, str) or not url:
        raise LinkRefused("the server sent no link")
    if len(url) > MAX_LENGTH:
        raise LinkRefused(f"the link is longer than {MAX_LENGTH} characters")
    if not is_clean(url) or any(char.isspace() for char in url):
        raise LinkRefused("the link holds control, invisible or space characters, which a browser would rewrite")
    if "\\" in url:
        raise LinkRefused("the link holds a backslash, which browsers and other programs read differently")
    ada = _ada()
    try:
        parsed = ada.URL(url)
    except ValueError:
        raise LinkRefused("the link is not a valid URL") from None
    scheme = parsed.protocol.rstrip(":")
    try:
        split = urlsplit(url)
        split_port = split.port
    except ValueError:
        raise LinkRefused("the link is not a valid URL") from None
    if scheme not in _DEFAULT_PORTS or split.scheme.lower() != scheme:
        raise LinkRefused("only http and https links are offered")
    if not url[len(split.scheme):].startswith("://"):
        raise LinkRefused("the link does not name its host after '//'")
    if "@" in split.netloc or parsed.username or parsed.password:
        raise LinkRefused("the link carries user info ('@' before the host), which can disguise its host")
    host = parsed.hostname
    if not host or _split_host(ada, split.hostname) != _canonical(host):
        raise LinkRefused("URL parsers disagree on the link's host: it may not go where it seems to")
    port = int(parsed.port) if parsed.port else None
    if (split_port if split_port != _DEFAULT_PORTS[scheme] else None) != port:
        raise LinkRefused("URL parsers disagree on the link's port")
    return Link(href=parsed.href, scheme=scheme, host=host, port=port)


def _canonical(host: str) -> str:
    """One spelling of an IP literal (brackets off), names as they are."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        return bare


def _split_host(ada: types.ModuleType, host: str | None) -> str | None:
    """``urlsplit``'s host as a browser would send it, or None when it cannot be one.

    A non-ASCII name is encoded both by IDNA 2003 (Python's codec, what most other programs
    do) and by UTS 46 (ada, what browsers do); when they differ the name is ambiguous.
    """
    if not host:
        return None
    if host.isascii():
        return _canonical(host.lower())
    try:
        python = host.encode("idna").decode("ascii").lower()
        browser = ada.idna_to_ascii(host).decode("ascii")
    except (UnicodeError, ValueError):
        return None
    return browser if browser == python else None
