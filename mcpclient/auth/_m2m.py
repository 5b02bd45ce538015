"""Grants without a user at a browser: client credentials, workload identity (JWT bearer) and
enterprise-managed authorization (ID-JAG token exchange, then JWT bearer).

Each is a ``Grant``: given the discovered authorization server, it obtains tokens. Pass one as
``OAuth(grant=...)``. Failures raise ``TokenRequestError`` at once: these grants never retry
and never fall back to another grant type.
"""

from __future__ import annotations

import abc
import logging
from typing import Any, Callable, ClassVar, Union

from . import _jwt
from ._discovery import ServerMetadata
from ._dpop import DPoPKey
from ._errors import TokenRequestError
from ._fetch import Fetcher, safe_url
from ._token_endpoint import apply_client_auth, choose_auth_method, request_token
from ._tokens import ClientInfo, Tokens

__all__ = ["ClientCredentials", "EnterpriseManaged", "Grant", "GrantContext", "JWTBearer"]

log = logging.getLogger(__name__)

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
#: The identifiers of the MCP authorization extensions (the ext-auth repository, SEP-2133 names).
CLIENT_CREDENTIALS_EXTENSION = "io.modelcontextprotocol/oauth-client-credentials"
ENTERPRISE_MANAGED_EXTENSION = "io.modelcontextprotocol/enterprise-managed-authorization"

#: A string, or a callable returning a fresh one (e.g. reading a projected token file).
Credential = Union[str, Callable[[], str]]


def _value(credential: Credential, what: str) -> str:
    value = credential() if callable(credential) else credential
    if not isinstance(value, str) or not value:
        raise TokenRequestError(f"{what} is empty")
    return value.strip()


class GrantContext:
    """What a ``Grant`` needs: the authorization server, the resource, the scopes, and a way
    to call the token endpoint with client authentication and DPoP applied."""

    def __init__(
        self, fetcher: Fetcher, metadata: ServerMetadata, resource: str, scopes: list[str] | None, dpop: DPoPKey | None
    ) -> None:
        self.fetcher = fetcher
        self.metadata = metadata
        self.resource = resource
        self.scopes = scopes
        self.dpop = dpop

    def token(
        self,
        data: dict[str, str],
        *,
        client: ClientInfo | None = None,
        private_key: Any = None,
        signing_algorithm: str | None = None,
    ) -> Tokens:
        """Send ``data`` (plus ``resource`` and ``scope``) to the token endpoint."""
        data = dict(data)
        data.setdefault("resource", self.resource)
        if self.scopes:
            data.setdefault("scope", " ".join(self.scopes))
        headers: dict[str, str] = {}
        if client is not None:
            apply_client_auth(
                client, data, headers, audience=self.metadata.issuer, private_key=private_key,
                signing_algorithm=signing_algorithm,
            )
        return request_token(
            self.fetcher, self.metadata.token_endpoint, data, headers=headers, dpop=self.dpop,
            issuer=self.metadata.issuer, resource=self.resource,
        )


class Grant(abc.ABC):
    """How ``OAuth`` obtains tokens without a user; subclass it for another grant type.

    ``extension`` names the MCP extension the grant is, if one is: a client using the grant
    declares it under ``capabilities.extensions`` (in both eras), as the extension asks.
    """

    extension: ClassVar[str | None] = None

    @abc.abstractmethod
    def obtain(self, context: GrantContext) -> Tokens:
        """Get new tokens from ``context.metadata``'s token endpoint; raise ``TokenRequestError``."""


class ClientCredentials(Grant):
    """The client credentials grant (the MCP ``oauth-client-credentials`` extension).

    Authenticate with ``client_secret`` (``client_secret_basic``, or ``client_secret_post``
    when the server supports only that) or with ``private_key`` (``private_key_jwt``, RFC 7523:
    a PEM string or a ``cryptography`` key; needs the ``jwt`` extra).

    It pickles (a ``SharedClient`` passed to a worker process) as its settings: the client ID,
    the secret or the private key (as PKCS#8 PEM: the pickle is as secret as they are), never a
    token; the worker runs the grant itself.
    """

    extension = CLIENT_CREDENTIALS_EXTENSION

    def __init__(
        self,
        client_id: str,
        client_secret: str | None = None,
        *,
        private_key: Any = None,
        signing_algorithm: str | None = None,
        token_endpoint_auth_method: str | None = None,
    ) -> None:
        if (client_secret is None) == (private_key is None):
            raise ValueError("give exactly one of client_secret and private_key")
        self.client_id = client_id
        self._secret = client_secret
        self._key = private_key
        self._alg = signing_algorithm
        self._method = token_endpoint_auth_method
        if private_key is not None:
            self._key = _jwt.load_private_key(private_key)

    def __repr__(self) -> str:
        how = "private_key_jwt" if self._key is not None else "client secret"
        return f"<ClientCredentials {self.client_id!r} ({how})>"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if state.get("_key") is not None:
            state["_key"] = _jwt.travelling(state["_key"])  # a cryptography key does not pickle
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        key = state.get("_key")
        self.__dict__.update(state, _key=key.load() if isinstance(key, _jwt.TravellingKey) else key)

    def obtain(self, context: GrantContext) -> Tokens:
        supported = context.metadata.list("token_endpoint_auth_methods_supported")
        method = self._method or choose_auth_method(
            supported, has_secret=self._secret is not None, has_key=self._key is not None
        )
        client = ClientInfo(
            client_id=self.client_id, client_secret=self._secret, token_endpoint_auth_method=method,
            issuer=context.metadata.issuer, source="pre-registered",
        )
        return context.token(
            {"grant_type": "client_credentials"}, client=client, private_key=self._key, signing_algorithm=self._alg
        )


class JWTBearer(Grant):
    """The JWT bearer grant (RFC 7523) with a workload identity token (workload identity federation).

    ``assertion`` is the JWT from your platform (a string, or a callable returning a fresh one,
    e.g. reading a projected service account token). ``client_id`` and ``client_secret`` are
    sent when the authorization server wants them.
    """

    def __init__(self, assertion: Credential, *, client_id: str | None = None, client_secret: str | None = None) -> None:
        self._assertion = assertion
        self.client_id = client_id
        self._secret = client_secret

    def __repr__(self) -> str:
        return f"<JWTBearer client_id={self.client_id!r}>"

    def obtain(self, context: GrantContext) -> Tokens:
        client = None
        if self.client_id is not None:
            supported = context.metadata.list("token_endpoint_auth_methods_supported")
            client = ClientInfo(
                client_id=self.client_id, client_secret=self._secret,
                token_endpoint_auth_method=choose_auth_method(supported, has_secret=self._secret is not None),
                issuer=context.metadata.issuer, source="pre-registered",
            )
        data = {"grant_type": JWT_BEARER, "assertion": _value(self._assertion, "the workload identity assertion")}
        return context.token(data, client=client)


class EnterpriseManaged(Grant):
    """Enterprise-managed authorization (SEP-990): the enterprise IdP exchanges the user's ID
    token for an identity assertion grant (ID-JAG, RFC 8693 token exchange), which the MCP
    server's authorization server takes as a JWT bearer grant.

    ``id_token`` is the user's ID token from single sign-on (string or callable);
    ``idp_token_endpoint`` and ``idp_client_id`` (and ``idp_client_secret``) identify the
    client at the IdP; ``client_id``/``client_secret`` at the MCP authorization server.
    """

    extension = ENTERPRISE_MANAGED_EXTENSION

    def __init__(
        self,
        *,
        id_token: Credential,
        idp_token_endpoint: str,
        idp_client_id: str,
        client_id: str,
        client_secret: str | None = None,
        idp_client_secret: str | None = None,
    ) -> None:
        self._id_token = id_token
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_client_id = idp_client_id
        self._idp_secret = idp_client_secret
        self.client_id = client_id
        self._secret = client_secret

    def __repr__(self) -> str:
        return f"<EnterpriseManaged client_id={self.client_id!r} idp={safe_url(self.idp_token_endpoint)!r}>"

    def obtain(self, context: GrantContext) -> Tokens:
        id_jag = self._exchange(context)
        supported = context.metadata.list("token_endpoint_auth_methods_supported")
        client = ClientInfo(
            client_id=self.client_id, client_secret=self._secret,
            token_endpoint_auth_method=choose_auth_method(supported, has_secret=self._secret is not None),
            issuer=context.metadata.issuer, source="pre-registered",
        )
        return context.token({"grant_type": JWT_BEARER, "assertion": id_jag}, client=client)

    def _exchange(self, context: GrantContext) -> str:
        data = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "subject_token": _value(self._id_token, "the ID token"),
            "subject_token_type": ID_TOKEN,
            "audience": context.metadata.issuer,
            "resource": context.resource,
        }
        if context.scopes:
            data["scope"] = " ".join(context.scopes)
        headers: dict[str, str] = {}
        idp_client = ClientInfo(
            client_id=self.idp_client_id, client_secret=self._idp_secret,
            token_endpoint_auth_method="client_secret_basic" if self._idp_secret else "none", source="pre-registered",
        )
        apply_client_auth(idp_client, data, headers, audience=self.idp_token_endpoint)
        response, body = context.fetcher.post(
            self.idp_token_endpoint, "the identity provider's token endpoint", TokenRequestError, data=data, headers=headers
        )
        if response.status_code != 200 or not isinstance(body, dict):
            error = body.get("error") if isinstance(body, dict) else None
            error = context.fetcher.redactor.redact(error)[:100] if isinstance(error, str) else None
            raise TokenRequestError(
                f"the identity provider refused the token exchange (HTTP {response.status_code}"
                + (f", {error})" if isinstance(error, str) else ")"),
                error=error if isinstance(error, str) else None, status_code=response.status_code,
                url=safe_url(self.idp_token_endpoint),
            )
        assertion = body.get("access_token")
        if body.get("issued_token_type") != ID_JAG or not isinstance(assertion, str) or not assertion:
            raise TokenRequestError(
                "the identity provider did not issue an identity assertion grant (issued_token_type "
                f"{context.fetcher.redactor.redact(str(body.get('issued_token_type')))[:80]!r})",
                url=safe_url(self.idp_token_endpoint),
            )
        log.info("exchanged the ID token for an identity assertion grant at %s", safe_url(self.idp_token_endpoint))
        return assertion
