"""Getting a client ID, in the specification's order: pre-registered credentials, a Client ID
Metadata Document (when the server supports it), then Dynamic Client Registration (RFC 7591)."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from .._core.text import clean
from ._discovery import ServerMetadata
from ._errors import RegistrationError
from ._fetch import Fetcher, is_loopback_host, safe_url
from ._token_endpoint import choose_auth_method
from ._tokens import ClientInfo

__all__ = ["ClientSettings", "obtain_client", "still_usable"]

log = logging.getLogger(__name__)


class ClientSettings:
    """What the user told ``OAuth`` about the client (see ``OAuth`` for each argument)."""

    def __init__(
        self,
        *,
        client_id: str | None,
        client_secret: str | None,
        token_endpoint_auth_method: str | None,
        client_metadata_url: str | None,
        client_name: str,
        client_metadata: dict[str, Any] | None,
    ) -> None:
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError("client_metadata_url must be an https URL with a path (a Client ID Metadata Document)")
        self.client_id = client_id
        self.client_secret = client_secret
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.client_metadata = dict(client_metadata or {})

    def __repr__(self) -> str:
        return f"<ClientSettings client_id={self.client_id!r} name={self.client_name!r}>"


def application_type(redirect_uri: str) -> str:
    """``native`` for loopback and private-scheme redirects, ``web`` otherwise (SEP-837)."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https") or is_loopback_host(parts.hostname):
        return "native"
    return "web"


def still_usable(client: ClientInfo, metadata: ServerMetadata, redirect_uri: str | None) -> bool:
    """Whether a stored registration can be reused with this server and redirect URI."""
    if client.issuer != metadata.issuer or client.expired():
        return False
    if client.source == "dynamic" and redirect_uri is not None and redirect_uri not in client.redirect_uris:
        return False
    return True


def obtain_client(
    fetcher: Fetcher,
    metadata: ServerMetadata,
    settings: ClientSettings,
    *,
    redirect_uri: str | None,
    grant_types: list[str],
) -> ClientInfo:
    """A client ID for ``metadata.issuer``; raises ``RegistrationError`` when none can be had."""
    supported = metadata.list("token_endpoint_auth_methods_supported")
    if settings.client_id is not None:
        method = settings.token_endpoint_auth_method or choose_auth_method(
            supported, has_secret=settings.client_secret is not None
        )
        log.debug("using the pre-registered client ID at %s", clean(fetcher.shown(metadata.issuer)))
        return ClientInfo(
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            token_endpoint_auth_method=method,
            redirect_uris=[redirect_uri] if redirect_uri else [],
            issuer=metadata.issuer,
            source="pre-registered",
        )
    if settings.client_metadata_url is not None and metadata.raw.get("client_id_metadata_document_supported") is True:
        log.debug("using the client ID metadata document %s at %s", settings.client_metadata_url,
                  clean(fetcher.shown(metadata.issuer)))
        return ClientInfo(
            client_id=settings.client_metadata_url,
            token_endpoint_auth_method="none",
            redirect_uris=[redirect_uri] if redirect_uri else [],
            issuer=metadata.issuer,
            source="metadata-document",
        )
    if metadata.registration_endpoint is None:
        raise RegistrationError(
            f"the authorization server {metadata.issuer} supports neither Client ID Metadata Documents "
            "(or no client_metadata_url was given) nor dynamic client registration: pass the client_id "
            "(and client_secret) you registered there",
            url=safe_url(metadata.issuer),
        )
    return _register(fetcher, metadata, settings, redirect_uri=redirect_uri, grant_types=grant_types, supported=supported)


def _register(
    fetcher: Fetcher,
    metadata: ServerMetadata,
    settings: ClientSettings,
    *,
    redirect_uri: str | None,
    grant_types: list[str],
    supported: list[str] | None,
) -> ClientInfo:
    endpoint = metadata.registration_endpoint
    assert endpoint is not None
    wanted = settings.token_endpoint_auth_method
    if wanted is None:
        wanted = "none" if supported is None or "none" in supported else choose_auth_method(supported, has_secret=True)
    body: dict[str, Any] = {
        "client_name": settings.client_name,
        "grant_types": grant_types,
        "response_types": ["code"] if "authorization_code" in grant_types else [],
        "token_endpoint_auth_method": wanted,
    }
    if redirect_uri is not None:
        body["redirect_uris"] = [redirect_uri]
        body["application_type"] = application_type(redirect_uri)
    body.update(settings.client_metadata)
    response, answer = fetcher.post(endpoint, "the registration endpoint", RegistrationError, json_body=body)
    if response.status_code not in (200, 201) or not isinstance(answer, dict) or not isinstance(answer.get("client_id"), str):
        error = answer.get("error") if isinstance(answer, dict) else None
        description = answer.get("error_description") if isinstance(answer, dict) else None
        error = fetcher.redactor.redact(error)[:100] if isinstance(error, str) else None
        detail = f" ({error}: {fetcher.redactor.redact(str(description))[:200]})" if error else ""
        raise RegistrationError(
            f"dynamic client registration at {safe_url(endpoint)} failed with HTTP {response.status_code}{detail}; "
            "if the server needs a pre-registered client, pass client_id (and client_secret)",
            error=error if isinstance(error, str) else None,
            url=safe_url(endpoint),
        )
    secret = answer.get("client_secret")
    secret = secret if isinstance(secret, str) and secret else None
    method = answer.get("token_endpoint_auth_method")
    if not isinstance(method, str):
        method = wanted if (wanted == "none") == (secret is None) else ("client_secret_basic" if secret else "none")
    expires = answer.get("client_secret_expires_at")
    uris = answer.get("redirect_uris")
    log.info("registered client %s at %s", clean(fetcher.redactor.excerpt(answer["client_id"], 100)),
             clean(fetcher.shown(metadata.issuer)))
    return ClientInfo(
        client_id=answer["client_id"],
        client_secret=secret,
        token_endpoint_auth_method=method,
        redirect_uris=[u for u in uris if isinstance(u, str)] if isinstance(uris, list) and uris
        else ([redirect_uri] if redirect_uri else []),
        issuer=metadata.issuer,
        source="dynamic",
        secret_expires_at=float(expires) if isinstance(expires, (int, float)) and expires > 0 else None,
    )


