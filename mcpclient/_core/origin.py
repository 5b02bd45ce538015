"""Same-origin decisions, made on the URL as it will actually be connected to.

Why a module of its own: ``urllib.parse`` and urllib3 (which requests uses to prepare a URL
and to connect) do not always agree where the host ends. For urllib3, as for browsers, ``\\``
ends the authority; for ``urlsplit`` it does not, so ``http://a:1\\@b:2/`` is ``b:2`` to
``urlsplit`` and ``a:1`` to the connection. An origin check done with one parser while the
request is sent with the other sends credentials to a host the check never saw. Every "is this
the same origin" decision in mcpclient (redirects, the legacy SSE endpoint, which requests
get a token, OAuth, DPoP nonces) goes through here, and a URL the parsers disagree on is
never called the same origin as anything.
"""

from __future__ import annotations

import ipaddress
from typing import Tuple
from urllib.parse import urlsplit

import requests
import urllib3.util

__all__ = ["Origin", "connect_url", "has_userinfo", "origin", "origin_or_none", "same_origin"]

#: (scheme, host, port): lower-case scheme and host (IPv6 without brackets), explicit port.
Origin = Tuple[str, str, int]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def connect_url(url: str) -> str:
    """``url`` as requests sends it (urllib3 normalization, IDNA, percent-encoding).

    Raises ``ValueError`` for a URL requests would refuse.
    """
    prepared = requests.PreparedRequest()
    try:
        prepared.prepare_url(url, None)
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, UnicodeError) as exc:
        raise ValueError(f"not a usable URL: {type(exc).__name__}") from exc
    return prepared.url or ""


def origin(url: str) -> Origin:
    """The origin a request to ``url`` connects to.

    Raises ``ValueError`` when it is not an http(s) URL with a host, or when ``urlsplit`` and
    urllib3 disagree on its scheme, host or port, on ``url`` as written or as prepared: such
    a URL is ambiguous and no origin decision should be made on it.
    """
    if not isinstance(url, str):
        raise ValueError("a URL must be a string")
    prepared = connect_url(url)
    connect = _urllib3_origin(prepared)
    # requests picks the connection pool with urlparse, urllib3 connects with its own parser:
    # both must name the same place, and so must the URL as it was written.
    if _split_origin(prepared) != connect or _split_origin(url) != connect:
        raise ValueError("the URL's host or port is ambiguous (URL parsers disagree on it)")
    return connect


def origin_or_none(url: str | None) -> Origin | None:
    """``origin(url)``, or None for a missing, invalid or ambiguous URL."""
    if not url:
        return None
    try:
        return origin(url)
    except ValueError:
        return None


def has_userinfo(url: str) -> bool:
    """Whether ``url`` carries user info (``user:password@``) by either parser's reading."""
    try:
        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None or "@" in parts.netloc:
            return True
        return urllib3.util.parse_url(url).auth is not None
    except ValueError:
        return True  # unparseable: treat as the worst case
    except urllib3.exceptions.LocationParseError:
        return True


def same_origin(url: str | None, expected: Origin | None, *, allow_userinfo: bool = False) -> bool:
    """True only if a request to ``url`` connects to ``expected``, unambiguously.

    A URL with user info is refused unless ``allow_userinfo`` (a server naming a URL with
    credentials in it is up to no good; the user's own configured URL may carry them).
    """
    if not url or expected is None:
        return False
    if not allow_userinfo and has_userinfo(url):
        return False
    return origin_or_none(url) == expected


def _urllib3_origin(url: str) -> Origin:
    try:
        parsed = urllib3.util.parse_url(url)
    except urllib3.exceptions.LocationParseError as exc:
        raise ValueError("not a usable URL") from exc
    scheme = (parsed.scheme or "").lower()
    host = (parsed.host or "").lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return _complete(scheme, host, parsed.port)


def _split_origin(url: str) -> Origin:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise ValueError("not a usable host name") from exc
    return _complete(scheme, host, parts.port)  # .port raises ValueError on a bad port


def _complete(scheme: str, host: str, port: int | None) -> Origin:
    if scheme not in _DEFAULT_PORTS or not host:
        raise ValueError("an http:// or https:// URL with a host is required")
    if ":" in host:  # an IPv6 literal: one spelling of it ([0:0::1] is [::1])
        try:
            host = str(ipaddress.IPv6Address(host))
        except ValueError:
            pass  # a zone id: left as written (the parsers then disagree on it)
    return scheme, host, _DEFAULT_PORTS[scheme] if port is None else port
