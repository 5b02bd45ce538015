"""Requests to the token endpoint: client authentication, DPoP, and reading the answer."""

from __future__ import annotations

import base64
import logging
import time
from typing import Any
from urllib.parse import quote

from .._core.text import clean
from . import _jwt
from ._dpop import DPoPKey
from ._errors import TokenRequestError
from ._fetch import Fetcher, safe_url
from ._tokens import ClientInfo, Tokens

__all__ = ["apply_client_auth", "choose_auth_method", "request_token"]

log = logging.getLogger(__name__)

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def choose_auth_method(supported: list[str] | None, *, has_secret: bool, has_key: bool = False) -> str:
    """The token endpoint auth method to use, given the server's list (None: not advertised).

    With a private key: ``private_key_jwt``. With a secret: ``client_secret_basic``, else
    ``client_secret_post``. Without either: ``none``. RFC 8414's default when the server
    lists nothing is ``client_secret_basic``.
    """
    listed = supported if supported is not None else ["client_secret_basic"]
    if has_key:
        return "private_key_jwt"
    if has_secret:
        for method in ("client_secret_basic", "client_secret_post"):
            if method in listed:
                return method
        return "client_secret_basic"
    return "none"


def apply_client_auth(
    client: ClientInfo,
    data: dict[str, str],
    headers: dict[str, str],
    *,
    audience: str,
    private_key: Any = None,
    signing_algorithm: str | None = None,
) -> None:
    """Add client authentication for ``client`` to a token request's form ``data``/``headers``."""
    method = client.token_endpoint_auth_method
    if method == "client_secret_basic" and client.client_secret is not None:
        # RFC 6749 section 2.3.1: both parts form-urlencoded before base64.
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    elif method == "client_secret_post" and client.client_secret is not None:
        data["client_id"] = client.client_id
        data["client_secret"] = client.client_secret
    elif method == "private_key_jwt":
        if private_key is None:
            raise TokenRequestError("private_key_jwt needs a private key; pass private_key=")
        data["client_assertion_type"] = ASSERTION_TYPE
        data["client_assertion"] = _jwt.client_assertion(client.client_id, audience, private_key, alg=signing_algorithm)
    else:
        data["client_id"] = client.client_id


def request_token(
    fetcher: Fetcher,
    token_endpoint: str,
    data: dict[str, str],
    *,
    headers: dict[str, str] | None = None,
    dpop: DPoPKey | None = None,
    issuer: str | None,
    resource: str | None,
    previous: Tokens | None = None,
) -> Tokens:
    """POST ``data`` to the token endpoint and return the tokens it grants.

    With ``dpop`` a proof is sent, and one ``use_dpop_nonce`` challenge is answered by retrying
    with the server's nonce (RFC 9449 section 8). A refresh answer without a new refresh token
    keeps ``previous``'s. Raises ``TokenRequestError`` with the server's ``error`` code.
    """
    grant = data.get("grant_type", "?")
    for attempt in (1, 2):
        sent = dict(headers or {})
        if dpop is not None:
            sent["DPoP"] = dpop.proof("POST", token_endpoint)
        response, body = fetcher.post(token_endpoint, "the token endpoint", TokenRequestError, data=data, headers=sent)
        if dpop is not None:
            fresh = dpop.remember_nonce(token_endpoint, response.headers.get("DPoP-Nonce"))
            error = body.get("error") if isinstance(body, dict) else None
            if response.status_code in (400, 401) and error == "use_dpop_nonce" and fresh and attempt == 1:
                log.debug("the token endpoint asked for a DPoP nonce; retrying")
                continue
        break
    if response.status_code != 200 or not isinstance(body, dict):
        # The server's texts may echo the request (refresh token, client secret, code...).
        redact = fetcher.redactor.redact
        error = body.get("error") if isinstance(body, dict) else None
        description = body.get("error_description") if isinstance(body, dict) else None
        error = redact(error)[:100] if isinstance(error, str) else None
        description = redact(description)[:300] if isinstance(description, str) else None  # redact, then cut
        message = f"the token endpoint {safe_url(token_endpoint)} refused the {grant} request (HTTP {response.status_code}"
        message += f", {error}" if error else ""
        message += f": {description})" if description else ")"
        raise TokenRequestError(
            message, error=error, error_description=description, status_code=response.status_code, url=safe_url(token_endpoint)
        )
    access = body.get("access_token")
    token_type = body.get("token_type")
    if not isinstance(access, str) or not access or not isinstance(token_type, str):
        raise TokenRequestError(
            f"the token endpoint {safe_url(token_endpoint)} answered without access_token or token_type",
            url=safe_url(token_endpoint),
        )
    if token_type.lower() not in ("bearer", "dpop"):
        raise TokenRequestError(f"unsupported token_type {token_type[:40]!r}", url=safe_url(token_endpoint))
    if token_type.lower() == "dpop" and dpop is None:
        raise TokenRequestError("the server issued a DPoP token without a proof being sent", url=safe_url(token_endpoint))
    expires_in = body.get("expires_in")
    refresh = body.get("refresh_token")
    scope = body.get("scope")
    if not isinstance(scope, str):
        scope = data.get("scope") or (previous.scope if previous else None)
    fetcher.redactor.add(access, refresh if isinstance(refresh, str) else None)
    tokens = Tokens(
        access_token=access,
        token_type="DPoP" if token_type.lower() == "dpop" else "Bearer",
        refresh_token=refresh if isinstance(refresh, str) and refresh else (previous.refresh_token if previous else None),
        expires_at=time.time() + float(expires_in) if isinstance(expires_in, (int, float)) and expires_in > 0 else None,
        scope=scope,
        issuer=issuer,
        resource=resource,
    )
    log.info("obtained a %s token by %s from %s", clean(tokens.token_type, 40), grant, fetcher.shown(token_endpoint))
    return tokens
