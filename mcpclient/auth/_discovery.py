"""Discovery: the 401 challenge, Protected Resource Metadata and authorization server metadata.

Order (MCP 2025-11-25 / 2026-07-28 authorization, "Authorization Server Discovery"):

1. ``resource_metadata`` from the ``WWW-Authenticate`` challenge, else the well-known Protected
   Resource Metadata URLs: path-suffixed (``/.well-known/oauth-protected-resource/mcp``), then root.
2. The first authorization server listed, whose metadata is read from, in order,
   ``/.well-known/oauth-authorization-server{path}``, ``/.well-known/openid-configuration{path}``
   and ``{path}/.well-known/openid-configuration`` (only the first two for an issuer without a path).
   The document's ``issuer`` must equal the issuer identifier exactly (RFC 8414 section 3.3).
3. A server with no Protected Resource Metadata is a 2025-03-26 server: its authorization server
   is the MCP server's origin and, when that has no metadata either, the endpoints default to
   ``/authorize``, ``/token`` and ``/register`` there.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from attrs import frozen

from .._core import origin as _origin
from .._core.text import clean
from ._errors import DiscoveryError
from ._fetch import Fetcher, check_url, safe_url

__all__ = [
    "Challenge",
    "ResourceMetadata",
    "ServerMetadata",
    "canonical_resource",
    "fetch_resource_metadata",
    "fetch_server_metadata",
    "metadata_urls",
    "parse_www_authenticate",
    "resource_matches",
    "resource_metadata_urls",
]

log = logging.getLogger(__name__)


# -- WWW-Authenticate ------------------------------------------------------------------------


@frozen
class Challenge:
    """One challenge of a ``WWW-Authenticate`` header: its scheme and parameters (lower-cased names)."""

    scheme: str
    params: dict[str, str]

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def scopes(self) -> list[str]:
        return self.params.get("scope", "").split()

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None


_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*,?')
_SCHEME = re.compile(rf"\s*,?\s*({_TOKEN})(?:\s+|$|,)")


def parse_www_authenticate(values: str | list[str] | None) -> list[Challenge]:
    """Parse ``WWW-Authenticate`` (RFC 9110 section 11.6.1) into challenges; lenient, never raises."""
    if not values:
        return []
    if isinstance(values, str):
        values = [values]
    challenges: list[Challenge] = []
    for text in values:
        pos = 0
        while pos < len(text):
            match = _SCHEME.match(text, pos)
            if not match:
                break
            scheme, pos = match.group(1), match.end()
            params: dict[str, str] = {}
            while pos < len(text):
                param = _PARAM.match(text, pos)
                if not param:
                    break  # the next challenge, or a token68 (which MCP never uses)
                name, value = param.group(1).lower(), param.group(2)
                if value.startswith('"'):
                    value = re.sub(r"\\(.)", r"\1", value[1:-1])
                params.setdefault(name, value)
                pos = param.end()
            challenges.append(Challenge(scheme=scheme, params=params))
    return challenges


# -- Protected Resource Metadata -------------------------------------------------------------


@frozen
class ResourceMetadata:
    """A validated Protected Resource Metadata document (RFC 9728)."""

    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] | None
    url: str
    raw: dict[str, Any]


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707): lower-case scheme and host, no default
    port, no fragment or query, no trailing slash on the path."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and (scheme, port) not in (("https", 443), ("http", 80)):
        host += f":{port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, host, path, "", ""))


def resource_matches(resource: str, server_url: str) -> bool:
    """True if ``resource`` (from the metadata) identifies ``server_url``: same origin, and its
    path equal to or a parent of the server's path at a ``/`` boundary."""
    try:
        want, have = urlsplit(canonical_resource(resource)), urlsplit(canonical_resource(server_url))
    except ValueError:
        return False
    if not _origin.same_origin(resource, _origin.origin_or_none(server_url)):
        return False
    return have.path == want.path or have.path.startswith(want.path + "/")


def resource_metadata_urls(server_url: str) -> list[str]:
    """The well-known Protected Resource Metadata URLs of ``server_url``, in the order to try."""
    parts = urlsplit(server_url)
    root = urlunsplit((parts.scheme, parts.netloc, "/.well-known/oauth-protected-resource", "", ""))
    path = parts.path.rstrip("/")
    if not path:
        return [root]
    return [root + path, root]


def fetch_resource_metadata(fetcher: Fetcher, server_url: str, hint: str | None) -> ResourceMetadata | None:
    """Find and validate the server's Protected Resource Metadata; None if it has none.

    Raises ``DiscoveryError`` when a document exists but is unusable, or names another resource.
    """
    candidates = resource_metadata_urls(server_url)
    if hint:
        candidates.insert(0, hint)
    for url in candidates:
        status, document = fetcher.get_json(url, "the protected resource metadata")
        if document is None:
            continue
        resource = document.get("resource")
        if not isinstance(resource, str) or not resource:
            raise DiscoveryError(f"the protected resource metadata at {safe_url(url)} has no 'resource'", url=safe_url(url))
        if not resource_matches(resource, server_url):
            raise DiscoveryError(
                f"the protected resource metadata at {safe_url(url)} is for {safe_url(resource)!r}, not for "
                f"{safe_url(server_url)!r}; refusing to authorize (RFC 9728 section 3.3)",
                url=safe_url(url),
            )
        servers = document.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not all(isinstance(s, str) and s for s in servers):
            raise DiscoveryError(
                f"the protected resource metadata at {safe_url(url)} lists no authorization_servers",
                url=safe_url(url),
            )
        scopes = document.get("scopes_supported")
        scopes = [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else None
        log.debug("protected resource metadata from %s: %d authorization server(s)", fetcher.shown(url), len(servers))
        return ResourceMetadata(
            resource=resource, authorization_servers=list(servers), scopes_supported=scopes, url=url, raw=document
        )
    return None


# -- authorization server metadata -----------------------------------------------------------


@frozen
class ServerMetadata:
    """Authorization server metadata (RFC 8414 / OpenID Connect Discovery), validated.

    ``fallback`` is true when the endpoints are the 2025-03-26 defaults, not a document.
    """

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None
    raw: dict[str, Any]
    fallback: bool = False

    def supports(self, field: str, value: str) -> bool | None:
        """Whether list ``field`` contains ``value``; None when the field is absent."""
        listed = self.raw.get(field)
        if not isinstance(listed, list):
            return None
        return value in listed

    def list(self, field: str) -> list[str] | None:
        listed = self.raw.get(field)
        return [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else None


def metadata_urls(issuer: str) -> list[str]:
    """The metadata URLs of ``issuer``, in the order the MCP specification gives."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, p, "", ""))

    if not path:
        return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    return [
        at("/.well-known/oauth-authorization-server" + path),
        at("/.well-known/openid-configuration" + path),
        at(path + "/.well-known/openid-configuration"),
    ]


def fetch_server_metadata(fetcher: Fetcher, issuer: str, *, allow_fallback: bool = False) -> ServerMetadata:
    """Read and validate the metadata of the authorization server ``issuer``.

    ``allow_fallback`` (2025-03-26 servers only) gives default endpoints when no document exists.
    Raises ``DiscoveryError`` on an issuer mismatch, a document without a token endpoint, or
    no document at all.
    """
    check_url(issuer, "the authorization server identifier")
    for url in metadata_urls(issuer):
        status, document = fetcher.get_json(url, "the authorization server metadata")
        if document is None:
            continue
        if document.get("issuer") != issuer:
            raise DiscoveryError(
                f"the authorization server metadata at {safe_url(url)} names issuer "
                f"{str(document.get('issuer'))[:200]!r}, not {issuer!r}; it must not be used (RFC 8414 section 3.3)",
                url=safe_url(url),
            )
        token_endpoint = document.get("token_endpoint")
        if not isinstance(token_endpoint, str) or not token_endpoint:
            raise DiscoveryError(f"the authorization server metadata at {safe_url(url)} has no token_endpoint", url=safe_url(url))
        auth = document.get("authorization_endpoint")
        reg = document.get("registration_endpoint")
        log.debug("authorization server metadata for %s from %s", clean(fetcher.redactor.redact(issuer)), fetcher.shown(url))
        return ServerMetadata(
            issuer=issuer,
            authorization_endpoint=auth if isinstance(auth, str) and auth else None,
            token_endpoint=token_endpoint,
            registration_endpoint=reg if isinstance(reg, str) and reg else None,
            raw=document,
        )
    if allow_fallback:
        base = issuer.rstrip("/")
        log.info("no authorization server metadata at %s; using the 2025-03-26 default endpoints",
                 clean(fetcher.shown(issuer)))
        return ServerMetadata(
            issuer=issuer,
            authorization_endpoint=base + "/authorize",
            token_endpoint=base + "/token",
            registration_endpoint=base + "/register",
            raw={},
            fallback=True,
        )
    raise DiscoveryError(
        f"the authorization server {issuer!r} publishes no metadata at any of: "
        + ", ".join(metadata_urls(issuer)),
        url=safe_url(issuer),
    )
