"""The authorization code grant with PKCE: the authorization request, the checks on the
response (``state``, then RFC 9207 ``iss``), and the code exchange."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlencode, urlsplit

from ._discovery import ServerMetadata
from ._dpop import DPoPKey
from ._errors import AuthorizationError, DiscoveryError
from ._fetch import Fetcher
from ._pkce import make_state, make_verifier, s256_challenge
from ._redirect import RedirectHandler, check_authorization_url
from ._token_endpoint import apply_client_auth, request_token
from ._tokens import ClientInfo, Tokens

__all__ = ["authorization_code_flow", "check_pkce", "read_callback"]

log = logging.getLogger(__name__)


def check_pkce(metadata: ServerMetadata) -> None:
    """Refuse a server whose metadata does not list S256 PKCE (the 2025-03-26 defaults excepted)."""
    methods = metadata.list("code_challenge_methods_supported")
    if not metadata.fallback and (methods is None or "S256" not in methods):
        raise AuthorizationError(
            f"the authorization server {metadata.issuer} does not advertise PKCE with S256 "
            "(code_challenge_methods_supported); refusing to authorize without it"
        )


def authorization_code_flow(
    fetcher: Fetcher,
    handler: RedirectHandler,
    metadata: ServerMetadata,
    client: ClientInfo,
    resource: str,
    scopes: list[str],
    *,
    dpop: DPoPKey | None,
    timeout: float | None,
) -> Tokens:
    """Send the user to the authorization endpoint through ``handler``; exchange the code."""
    endpoint = metadata.authorization_endpoint
    if endpoint is None:
        raise DiscoveryError(f"the authorization server {metadata.issuer} has no authorization_endpoint")
    redirect_uri = handler.redirect_uri
    verifier, state = make_verifier(), make_state()
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": s256_challenge(verifier),
        "code_challenge_method": "S256",
        "state": state,
        "resource": resource,
    }
    if scopes:
        params["scope"] = " ".join(scopes)
    url = endpoint + ("&" if urlsplit(endpoint).query else "?") + urlencode(params)
    check_authorization_url(url)
    log.info("authorizing at %s", fetcher.shown(endpoint))
    callback = handler.authorize(url, timeout=timeout)
    code = read_callback(callback, state, metadata)
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
        "resource": resource,
    }
    headers: dict[str, str] = {}
    apply_client_auth(client, data, headers, audience=metadata.issuer)
    return request_token(
        fetcher, metadata.token_endpoint, data, headers=headers, dpop=dpop, issuer=metadata.issuer, resource=resource
    )


def read_callback(callback: str, state: str, metadata: ServerMetadata) -> str:
    """Check the authorization response and return its code; raise ``AuthorizationError``.

    ``state`` must match. ``iss``, when present, must equal the recorded issuer by simple
    string comparison, and must be present when the server advertises
    ``authorization_response_iss_parameter_supported``; on a mismatch the response's
    ``error`` fields are neither used nor shown (RFC 9207 section 2.4).
    """
    try:
        query = parse_qs(urlsplit(callback).query, keep_blank_values=True)
    except (ValueError, TypeError) as exc:
        raise AuthorizationError("the authorization redirect URL could not be read") from exc
    values = {name: items[0] for name, items in query.items() if len(items) == 1}
    if values.get("state") != state:
        raise AuthorizationError("the authorization response does not carry this request's state; it was ignored")
    if "iss" in query and values.get("iss") != metadata.issuer:
        raise AuthorizationError(
            f"the authorization response names another issuer than {metadata.issuer!r}; "
            "possible mix-up attack, the response was not used"
        )
    if "iss" not in query and metadata.raw.get("authorization_response_iss_parameter_supported") is True:
        raise AuthorizationError(
            f"{metadata.issuer} promises an iss parameter in authorization responses but sent none; "
            "the response was not used"
        )
    if "error" in values:
        description = values.get("error_description", "")[:300]
        raise AuthorizationError(
            f"the authorization server refused: {values['error'][:100]}" + (f" ({description})" if description else ""),
            error=values["error"][:100],
        )
    code = values.get("code")
    if not code:
        raise AuthorizationError("the authorization response has no code")
    return code
