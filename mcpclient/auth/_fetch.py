"""Guarded HTTP for the OAuth layer: which URLs may be fetched, and fetching them safely.

Metadata documents name the next URLs to fetch, so a hostile or compromised server could
point the client anywhere. Every URL the OAuth layer requests (each redirect hop included)
must therefore be HTTPS, or plain HTTP to a loopback host; it must carry no user info or
fragment; and its host must not be (or resolve to) a link-local or cloud-metadata address.
``check_url`` refuses such URLs early, with a clear message; the connection itself
(``_netguard``) resolves once, checks again and connects only to the checked addresses, so a
name that answers differently the second time (DNS rebinding) gains nothing.
This module is also the one place where ``requests`` exceptions of the OAuth layer become
``AuthorizationError`` subclasses.

A ``requests.Session`` lent to ``OAuth(session=...)`` lends its proxies and TLS settings to
every request, but its credentials (its headers other than ``User-Agent``, its ``auth``, its
cookies) belong to the MCP server's origin (``Fetcher.home``): they are sent only to that
origin, and only while a redirect chain has not left it; a hop to any other origin goes
without them, and so does every later hop of that chain, wherever it leads.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from typing import Any, Mapping
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests

from .._core import bounded as _bounded
from .._core import origin as _origin
from .._core.credentials import Credentials
from .._core.redact import Redactor
from .._core.text import clean
from . import _netguard
from ._errors import AuthorizationError, DiscoveryError

__all__ = ["Fetcher", "check_url", "is_loopback_host", "safe_url"]

log = logging.getLogger(__name__)

#: Metadata documents are small; a larger answer is refused rather than read into memory.
MAX_DOCUMENT_BYTES = 1024 * 1024
MAX_REDIRECTS = 5

_METADATA_HOSTS = frozenset({"metadata", "metadata.google.internal", "metadata.goog", "instance-data"})
#: Form fields of OAuth requests whose values are secrets (RFC 6749, 7521, 7523, 7636, 8693).
SECRET_FIELDS = frozenset({
    "client_secret", "client_assertion", "assertion", "refresh_token", "code", "code_verifier",
    "subject_token", "actor_token", "password", "access_token",
})



def safe_url(url: str | None) -> str:
    """``url`` without user info, query string or fragment, cleaned (``_text``), for messages and logs."""
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = host + (f":{parts.port}" if parts.port else "")
        return clean(urlunsplit((parts.scheme, netloc, parts.path, "", "")), None)  # a server's URL: inert
    except ValueError:
        return "<invalid URL>"


def is_loopback_host(host: str | None) -> bool:
    """True for ``localhost``, ``*.localhost`` and loopback IP literals.

    A name only: the connection checks that such a name really resolves to loopback.
    """
    if not host:
        return False
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: Any, what: str, error: type[AuthorizationError] = DiscoveryError) -> str:
    """Return ``url`` if the OAuth layer may request it, else raise ``error``.

    ``what`` names the URL in the message ("the token endpoint").
    """
    if not isinstance(url, str) or not url:
        raise error(f"{what} is missing or not a string")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise error(f"{what} is not a valid URL") from exc
    if parts.scheme not in ("https", "http") or not host:
        raise error(f"{what} must be an https URL, got {safe_url(url)!r}", url=safe_url(url))
    if _origin.origin_or_none(url) is None:
        raise error(f"{what} is ambiguous (URL parsers disagree on its host or port); refused", url=safe_url(url))
    if parts.scheme == "http" and not is_loopback_host(host):
        raise error(
            f"{what} must use https (plain http is allowed only for localhost), got {safe_url(url)!r}",
            url=safe_url(url),
        )
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise error(f"{what} must not contain user info", url=safe_url(url))
    if parts.fragment:
        raise error(f"{what} must not contain a fragment", url=safe_url(url))
    if host.lower().rstrip(".") in _METADATA_HOSTS:
        raise error(f"{what} points at a cloud metadata service ({host}); refused", url=safe_url(url))
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None and _netguard.forbidden_address(literal):
        raise error(f"{what} points at a link-local or metadata address ({host}); refused", url=safe_url(url))
    if literal is None:
        # Resolved here for an early, clear refusal; the connection checks again what it uses.
        try:
            _netguard.checked_addresses(host, parts.port, loopback_only=parts.scheme == "http")
        except _netguard.RefusedAddress as exc:
            raise error(f"{what}: {exc}", url=safe_url(url)) from None
        except (OSError, UnicodeError):
            pass  # unresolvable: the request itself will fail with a clear error
    return url


class Fetcher:
    """Sends the OAuth layer's own requests (metadata, registration, tokens) with a timeout.

    Thread-safe as far as the ``requests.Session`` is (concurrent ``send`` is fine).
    ``redactor`` knows every secret posted through this fetcher (and those its owner adds,
    such as the tokens it was granted): errors built from an answer are redacted with it.
    ``session`` (lent by the user) gives its settings to every request and its credentials
    to requests to ``home`` only (the MCP server's origin, set by ``OAuth``; None: nowhere).
    """

    def __init__(self, session: requests.Session | None = None, timeout: float = 30.0) -> None:
        # Never ``session`` itself: the connection checks live in the guarded session's adapter.
        self.session = _netguard.guarded_session(session)
        self._lent = session
        self.home: _origin.Origin | None = None
        self.timeout = timeout
        #: What the flow sends its own servers (each header it is given, secret form fields,
        #: and what its owner enters: the client secret, the tokens it was granted).
        self.credentials = Credentials()
        self.redactor: Redactor = self.credentials.redactor

    def shown(self, url: str | None) -> str:
        """``safe_url(url)`` redacted: a server-named URL as messages and logs may show it."""
        return self.redactor.redact(safe_url(url))

    def get_json(
        self, url: str, what: str, error: type[AuthorizationError] = DiscoveryError
    ) -> tuple[int, dict[str, Any] | None]:
        """GET a JSON document, checking every redirect hop; returns (status, document or None).

        A non-200 status, a non-JSON body or a non-object JSON gives ``None`` with the
        status (callers probing well-known URLs move on). Network failures raise ``error``.
        """
        current = check_url(url, what, error)
        home = True  # every hop so far was on the home origin: the lent credentials may go
        for _ in range(MAX_REDIRECTS + 1):
            home = home and self._at_home(current)
            response = self._send("GET", current, what, error, headers={"Accept": "application/json"}, home=home)
            try:
                if response.is_redirect and "location" in response.headers:
                    try:
                        target = urljoin(current, response.headers["location"])
                    except ValueError:
                        target = ""
                    current = check_url(target, f"a redirect from {what}", error)
                    log.debug("following a redirect from %s to %s", self.shown(url), self.shown(current))
                    continue
                if response.status_code != 200:
                    log.debug("%s: %s answered HTTP %d", what, self.shown(current), response.status_code)
                    return response.status_code, None
                body = _read_limited(response, what, error)
            finally:
                response.close()
            try:
                document = _load(body, what, self.shown(current), error)
            except (ValueError, UnicodeDecodeError):
                log.debug("%s: %s did not answer with JSON", what, self.shown(current))
                return 200, None
            return 200, document if isinstance(document, dict) else None
        raise error(f"{what}: too many redirects from {self.shown(url)}", url=self.shown(url))

    def post(
        self,
        url: str,
        what: str,
        error: type[AuthorizationError],
        *,
        data: Mapping[str, str] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[requests.Response, Any]:
        """POST a form (``data``) or JSON (``json_body``); returns the response and its parsed JSON.

        Redirects are not followed: a token or registration endpoint that redirects would
        have the client resend credentials to wherever it points.
        """
        check_url(url, what, error)
        sent = {"Accept": "application/json", **(headers or {})}
        # Whatever the server echoes of this request must not show in an error or a log.
        self.credentials.sent(*(value for name, value in (data or {}).items() if name in SECRET_FIELDS))
        for value in (headers or {}).values():  # the caller's headers: each a credential (Basic, DPoP)
            self.credentials.sent_header(value)
        response = self._send(
            "POST", url, what, error, headers=sent, data=data, json_body=json_body, home=self._at_home(url)
        )
        try:
            body = _read_limited(response, what, error)
        finally:
            response.close()
        try:
            parsed = _load(body, what, self.shown(url), error) if body else None
        except (ValueError, UnicodeDecodeError):
            parsed = None
        return response, parsed

    def _at_home(self, url: str) -> bool:
        return self.home is not None and _origin.same_origin(url, self.home)

    def _send(
        self,
        method: str,
        url: str,
        what: str,
        error: type[AuthorizationError],
        *,
        headers: Mapping[str, str],
        data: Mapping[str, str] | None = None,
        json_body: Any = None,
        home: bool = False,
    ) -> requests.Response:
        """Send one request, with the lent session's credentials only when ``home`` says."""
        lent = self._lent
        sent: dict[str, Any] = dict(headers)
        auth = cookies = None
        if home and lent is not None:
            sent = {**lent.headers, **sent}
            auth, cookies = lent.auth, lent.cookies
        try:
            return self.session.request(
                method,
                url,
                headers=sent,
                data=data,
                json=json_body,
                auth=auth,
                cookies=cookies,
                timeout=self.timeout,
                allow_redirects=False,
                stream=True,
            )
        except _netguard.RefusedAddress as exc:
            raise error(f"{what}: {exc}", url=safe_url(url)) from None
        except requests.RequestException as exc:
            raise error(f"{what}: could not reach {self.shown(url)}: {type(exc).__name__}", url=self.shown(url)) from exc


def _load(body: bytes, what: str, shown_url: str, error: type[AuthorizationError]) -> Any:
    """``json.loads(body)``; a document nested deeper than ``_bounded.MAX_DEPTH`` raises ``error``.

    Raises ``ValueError`` when the body is not JSON.
    """
    try:
        document = json.loads(body)
    except RecursionError:  # json's own limit: deeper still
        too_deep = True
    else:
        too_deep = _bounded.deeper_than(document)
    if too_deep:
        raise error(
            f"{what}: the answer from {shown_url} nests deeper than {_bounded.MAX_DEPTH} levels; refused",
            url=shown_url,
        )
    return document


def _read_limited(response: requests.Response, what: str, error: type[AuthorizationError]) -> bytes:
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_content(65536):
            size += len(chunk)
            if size > MAX_DOCUMENT_BYTES:
                raise error(f"{what}: the answer from {safe_url(response.url)} is larger than 1 MiB; refused")
            chunks.append(chunk)
    except requests.RequestException as exc:
        raise error(f"{what}: reading the answer failed: {type(exc).__name__}", url=safe_url(response.url)) from exc
    return b"".join(chunks)
