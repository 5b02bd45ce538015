"""``OAuth``: MCP authorization as a ``requests`` auth object for the HTTP transports.

What happens on a request (all under one lock per ``OAuth``, so threads share one flow):

1. The token for this server, refreshed first when it expires within ``refresh_leeway``
   seconds, is attached (``Bearer``, or ``DPoP`` with a fresh proof) to requests to the
   server's origin only.
2. On 401: discovery (see ``_discovery``), then a refresh if possible, else the grant: the
   authorization code flow with PKCE through the redirect handler, or a machine-to-machine
   ``Grant``; then the request is sent again.
3. On 403 ``insufficient_scope``: step-up, re-authorizing with the union of the scopes
   requested before and the challenged ones, unless the token already has them.
4. A ``use_dpop_nonce`` challenge is answered by resending with the server's nonce.

At most ``max_authorizations`` authorizations happen in a row without a successful request;
then the 401/403 is handed back to the transport, which raises.

Every error leaving ``OAuth`` (from a request's auth hooks or from ``authorize``) is scrubbed
of every secret the flow knows (``Redactor.scrub``), whichever module built its message from
whatever a server sent; log lines quoting a server are redacted where they are written.
"""

from __future__ import annotations

import logging
import pickle
import threading
from typing import Any, Mapping
from urllib.parse import urlsplit

import requests
from requests.cookies import extract_cookies_to_jar

from .._core import origin as _origin
from .._core.text import clean
from ..transports.base import ExtensionSource
from ._code_flow import authorization_code_flow, check_pkce
from ._discovery import (
    Challenge,
    ResourceMetadata,
    ServerMetadata,
    canonical_resource,
    fetch_resource_metadata,
    fetch_server_metadata,
    parse_www_authenticate,
)
from ._dpop import DPoPKey
from ._errors import AuthorizationError, TokenRequestError
from ._fetch import Fetcher, check_url, safe_url
from ._m2m import Grant, GrantContext
from ._redirect import RedirectHandler, default_redirect_handler
from ._registration import ClientSettings, obtain_client, still_usable
from ._token_endpoint import apply_client_auth, request_token
from ._tokens import ClientInfo, MemoryTokenStore, Tokens, TokenStore

__all__ = ["OAuth"]

log = logging.getLogger(__name__)

_RESENDS_PER_REQUEST = 4


class OAuth(requests.auth.AuthBase, ExtensionSource):
    """OAuth 2.1 authorization for one MCP server, per the MCP authorization specification.

    Use it as ``StreamableHTTPTransport(url, auth=OAuth())`` or ``connect(url, auth=OAuth())``.
    The server is the one the first request goes to, unless ``server_url`` names it; tokens
    are only ever sent to that server's origin.

    Interactive use (the default): ``redirect_handler`` shows the consent page (by default the
    system browser and a loopback listener, or a paste prompt in notebooks and headless
    sessions). The client ID comes from ``client_id``/``client_secret`` when given
    (pre-registered), else from ``client_metadata_url`` (a Client ID Metadata Document you
    host) when the server supports those, else from dynamic registration as ``client_name``.

    Machine to machine: pass ``grant=ClientCredentials(...)``, ``JWTBearer(...)`` or
    ``EnterpriseManaged(...)``; no browser is involved. A grant that is an MCP extension
    (client credentials: ``io.modelcontextprotocol/oauth-client-credentials``; enterprise-managed:
    ``io.modelcontextprotocol/enterprise-managed-authorization``) is declared under the
    client's ``capabilities.extensions`` by the Client whose transport has this ``auth``.

    Other arguments: ``scopes`` overrides the scope selection (challenge, then
    ``scopes_supported``); ``store`` keeps tokens and registrations (``MemoryTokenStore`` by
    default, ``FileTokenStore`` to survive restarts); ``dpop=True`` (or a ``DPoPKey``) asks
    for DPoP-bound tokens when the authorization server supports them (needs the ``jwt``
    extra); ``offline_access`` adds that scope when the server lists it, for refresh tokens;
    ``session`` and ``timeout`` (seconds) are for the requests to the authorization server
    (the session lends its proxies and TLS settings, and its headers, auth and cookies to the
    MCP server's origin only; the connections are the guarded ones of ``_netguard``).

    Raises ``AuthorizationError`` (or a subclass) from the request that needed authorization.
    Thread-safe.
    """

    def __init__(
        self,
        server_url: str | None = None,
        *,
        scopes: list[str] | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        token_endpoint_auth_method: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "mcpclient",
        client_metadata: dict[str, Any] | None = None,
        redirect_handler: RedirectHandler | None = None,
        grant: Grant | None = None,
        store: TokenStore | None = None,
        dpop: bool | DPoPKey = False,
        offline_access: bool = True,
        session: requests.Session | None = None,
        timeout: float = 30.0,
        authorization_timeout: float | None = 300.0,
        refresh_leeway: float = 60.0,
        max_authorizations: int = 3,
    ) -> None:
        if max_authorizations < 1:
            raise ValueError("max_authorizations must be 1 or more")
        #: What it was made with: its pickle (``__reduce__``), never a token it obtained.
        self._spec: dict[str, Any] = {
            "scopes": scopes, "client_id": client_id, "client_secret": client_secret,
            "token_endpoint_auth_method": token_endpoint_auth_method, "client_metadata_url": client_metadata_url,
            "client_name": client_name, "client_metadata": client_metadata, "redirect_handler": redirect_handler,
            "grant": grant, "store": store, "dpop": dpop, "offline_access": offline_access, "session": session,
            "timeout": timeout, "authorization_timeout": authorization_timeout, "refresh_leeway": refresh_leeway,
            "max_authorizations": max_authorizations,
        }
        self._settings = ClientSettings(
            client_id=client_id,
            client_secret=client_secret,
            token_endpoint_auth_method=token_endpoint_auth_method,
            client_metadata_url=client_metadata_url,
            client_name=client_name,
            client_metadata=client_metadata,
        )
        self._scopes = list(scopes) if scopes is not None else None
        self._handler = redirect_handler
        self._grant = grant
        self._store = store if store is not None else MemoryTokenStore()
        self._dpop = DPoPKey() if dpop is True else (dpop or None)
        self._offline_access = offline_access
        self._fetcher = Fetcher(session, timeout)
        self._fetcher.redactor.add(client_secret, permanent=True)
        self._authorization_timeout = authorization_timeout
        self._refresh_leeway = refresh_leeway
        self._max_authorizations = max_authorizations
        self._lock = threading.RLock()
        self._server_url: str | None = None
        self._key: str | None = None
        self._origin: _origin.Origin | None = None
        self._record: dict[str, Any] | None = None
        self._metadata: dict[str, ServerMetadata] = {}
        self._requested: list[str] = []
        self._failures = 0
        if server_url is not None:
            self._bind(server_url)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as what it was made with and the server it is bound to, so that a worker
        process (a ``SharedClient`` passed to it) authorizes on its own: never a token, a
        registration or a DPoP key it made (``dpop=True`` makes a new key there). The token
        store travels as its own pickle: a ``FileTokenStore`` as its directory (the worker
        reads the tokens saved there), a ``MemoryTokenStore`` empty. Raises ``TypeError``
        naming an argument that cannot be pickled."""
        for name, value in self._spec.items():
            try:
                pickle.dumps(value)
            except Exception as exc:
                raise TypeError(
                    f"an OAuth cannot be pickled: its {name} (a {type(value).__name__}) cannot be "
                    f"({type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}); give a picklable one, "
                    "or create the OAuth in the worker"
                ) from exc
        return (_rebuilt, (self._server_url, self._spec))

    def __repr__(self) -> str:
        what = type(self._grant).__name__ if self._grant else "authorization code"
        return f"<OAuth {safe_url(self._server_url) or 'unbound'} ({what})>"

    def declared_extensions(self) -> Mapping[str, Mapping[str, Any]]:
        """The grant's MCP extension, if it is one (see the class docstring), with no settings."""
        extension = self._grant.extension if self._grant is not None else None
        return {extension: {}} if extension else {}

    # -- public helpers -----------------------------------------------------------------------

    @property
    def tokens(self) -> Tokens | None:
        """The current tokens for the server, or None (never logged or shown: see its repr)."""
        with self._lock:
            return self._load_tokens() if self._key else None

    def authorize(self, server_url: str | None = None) -> Tokens:
        """Authorize now, before any MCP request (e.g. to open the browser at start-up).

        Discovers through the well-known metadata (there is no challenge yet).
        """
        if server_url is not None:
            self._bind(server_url)
        if self._key is None:
            raise ValueError("authorize() needs server_url the first time")
        with self._lock, self._fetcher.redactor.scrubbing():
            self._authorize(None, step_up=False, sent_token=None)
            tokens = self._load_tokens()
            assert tokens is not None
            return tokens

    def logout(self) -> None:
        """Forget the tokens and registrations for this server, here and in the store."""
        with self._lock:
            if self._key is not None:
                self._store.delete(self._key)
            self._record = {"tokens": None, "clients": {}}
            self._requested = []

    def close(self) -> None:
        """Release the redirect handler's listener; the object stays usable."""
        if self._handler is not None:
            self._handler.close()

    # -- requests.auth.AuthBase -----------------------------------------------------------------

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        with self._fetcher.redactor.scrubbing():
            return self._attach(r)

    def _attach(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        self._bind(r.url or "")
        # Transports may copy one template request, sharing its hooks dict; never grow it.
        r.hooks = {event: list(hooks) for event, hooks in r.hooks.items()}
        r.register_hook("response", self._on_response)  # type: ignore[no-untyped-call]
        if self._same_origin(r.url):
            tokens = self._fresh_tokens()
            if tokens is not None:
                self._apply(r, tokens)
        return r

    def _on_response(self, response: requests.Response, **kwargs: Any) -> requests.Response:
        with self._fetcher.redactor.scrubbing():
            return self._answer(response, kwargs)

    def _answer(self, response: requests.Response, kwargs: dict[str, Any]) -> requests.Response:
        if not self._same_origin(response.url or (response.request.url if response.request else None)):
            return response
        for attempt in range(_RESENDS_PER_REQUEST):
            if self._dpop is not None:
                self._dpop.remember_nonce(response.url, response.headers.get("DPoP-Nonce"))
            status = response.status_code
            if status not in (401, 403):
                if status < 400:
                    self._failures = 0
                return response
            challenge = _pick(parse_www_authenticate(response.headers.get("WWW-Authenticate")))
            sent = _sent_token(response.request)
            if status == 401 and challenge is not None and challenge.error == "use_dpop_nonce":
                if self._dpop is None or not response.headers.get("DPoP-Nonce"):
                    return response
                log.debug("the server asked for a DPoP nonce; resending")
            elif status == 401:
                # A token refreshed or obtained for this very request that is refused again
                # will not be helped by another refresh: authorize afresh.
                if not self._authorize_locked(challenge, step_up=False, sent_token=sent, refresh=attempt == 0):
                    return response
            elif challenge is not None and challenge.error == "insufficient_scope":
                if not self._authorize_locked(challenge, step_up=True, sent_token=sent):
                    return response
            else:
                return response
            response = self._resend(response, kwargs)
        return response

    # -- tokens ------------------------------------------------------------------------------------

    def _bind(self, url: str) -> None:
        if self._key is not None:
            return
        try:
            bound = _origin.origin(url)
        except ValueError as exc:
            raise AuthorizationError(f"cannot authorize for {safe_url(url)!r}: {exc}") from None
        with self._lock:
            if self._key is None:
                self._server_url = url
                self._key = canonical_resource(url)
                self._origin = bound
                self._fetcher.home = bound  # where the credentials of a lent session belong

    def _same_origin(self, url: str | None) -> bool:
        # Decided on the URL as urllib3 connects to it: a token never goes anywhere else.
        return _origin.same_origin(url, self._origin, allow_userinfo=True)

    def _load_record(self) -> dict[str, Any]:
        if self._record is None:
            stored = self._store.load(self._key) if self._key else None
            self._record = stored if isinstance(stored, dict) else {}
            self._record.setdefault("clients", {})
        return self._record

    def _load_tokens(self) -> Tokens | None:
        return Tokens.from_json(self._load_record().get("tokens"))

    def _save(self, tokens: Tokens | None = None, *, clear_tokens: bool = False, client: ClientInfo | None = None,
              forget_client: str | None = None) -> None:
        record = self._load_record()
        if tokens is not None:
            record["tokens"] = tokens.to_json()
        elif clear_tokens:
            record.pop("tokens", None)
        if client is not None and client.issuer:
            record["clients"][client.issuer] = client.to_json()
        if forget_client is not None:
            record["clients"].pop(forget_client, None)
        if self._key is not None:
            self._store.save(self._key, record)

    def _fresh_tokens(self) -> Tokens | None:
        with self._lock:
            tokens = self._load_tokens()
            if tokens is None or not tokens.expires_within(self._refresh_leeway):
                return tokens
            if tokens.refresh_token and tokens.issuer:
                try:
                    metadata = self._server_metadata(tokens.issuer, legacy=False)
                    return self._refresh(tokens, metadata)
                except AuthorizationError as exc:
                    log.info("refreshing the token failed (%s); authorizing again when the server asks",
                             self._fetcher.redactor.scrub(exc))
            if tokens.expires_within(0):
                self._save(clear_tokens=True)
                return None
            return tokens

    def _apply(self, r: requests.PreparedRequest, tokens: Tokens) -> None:
        r.headers.pop("DPoP", None)
        self._fetcher.redactor.add(tokens.access_token, tokens.refresh_token)
        if tokens.token_type == "DPoP" and self._dpop is not None:
            r.headers["Authorization"] = "DPoP " + tokens.access_token
            r.headers["DPoP"] = self._dpop.proof(r.method or "GET", r.url or "", access_token=tokens.access_token)
        else:
            r.headers["Authorization"] = "Bearer " + tokens.access_token

    def _resend(self, response: requests.Response, kwargs: dict[str, Any]) -> requests.Response:
        response.content  # noqa: B018 - drain the body so the connection can be reused
        response.close()
        prepared = response.request.copy()
        extract_cookies_to_jar(prepared._cookies, response.request, response.raw)  # type: ignore[attr-defined,no-untyped-call]
        prepared.prepare_cookies(prepared._cookies)  # type: ignore[attr-defined]
        prepared.headers.pop("Authorization", None)
        prepared.headers.pop("DPoP", None)
        with self._lock:
            tokens = self._load_tokens()
        if tokens is not None:
            self._apply(prepared, tokens)
        retried = response.connection.send(prepared, **kwargs)
        retried.history.append(response)
        retried.request = prepared
        return retried

    # -- authorization -----------------------------------------------------------------------------

    def _authorize_locked(
        self, challenge: Challenge | None, *, step_up: bool, sent_token: str | None, refresh: bool = True
    ) -> bool:
        with self._lock:
            return self._authorize(challenge, step_up=step_up, sent_token=sent_token, refresh=refresh)

    def _authorize(
        self, challenge: Challenge | None, *, step_up: bool, sent_token: str | None, refresh: bool = True
    ) -> bool:
        """Get usable tokens; True if the request should be sent again."""
        current = self._load_tokens()
        if current is not None and sent_token is not None and current.access_token != sent_token:
            return True  # another thread already got a new token
        if step_up and current is not None and challenge is not None and challenge.scopes:
            if set(challenge.scopes) <= set(current.scopes):
                log.warning(
                    "the server refused a token that already has the scopes it asks for (%s); not re-authorizing",
                    clean(self._fetcher.redactor.redact(" ".join(challenge.scopes))),
                )
                return False
        if self._failures >= self._max_authorizations:
            log.warning("giving up after %d authorizations without a successful request", self._failures)
            return False
        assert self._server_url is not None
        prm = fetch_resource_metadata(self._fetcher, self._server_url, challenge.resource_metadata if challenge else None)
        if prm is not None:
            issuer, resource, legacy = self._pick_issuer(prm, current), prm.resource, False
        else:
            scheme = urlsplit(self._server_url).scheme.lower()
            issuer = f"{scheme}://{urlsplit(self._server_url).netloc}"
            resource, legacy = canonical_resource(self._server_url), True
            log.info("%s has no protected resource metadata; using %s as its authorization server (2025-03-26)",
                     safe_url(self._server_url), clean(issuer))
        metadata = self._server_metadata(issuer, legacy=legacy)
        if current is not None and current.issuer != metadata.issuer:
            log.info("the authorization server changed to %s; dropping the old tokens",
                     clean(self._fetcher.shown(metadata.issuer)))
            self._save(clear_tokens=True)
            current = None
        scopes = self._choose_scopes(challenge, prm, metadata, current)
        if refresh and not step_up and current is not None and current.refresh_token:
            try:
                self._refresh(current, metadata)
                return True
            except AuthorizationError as exc:
                log.info("refreshing the token failed (%s); authorizing again", self._fetcher.redactor.scrub(exc))
                self._save(clear_tokens=True)
        self._failures += 1
        self._requested = scopes
        if self._grant is not None:
            dpop = self._dpop_for(metadata)
            tokens = self._grant.obtain(GrantContext(self._fetcher, metadata, resource, scopes or None, dpop))
        else:
            tokens = self._authorization_code(metadata, resource, scopes)
        self._save(tokens)
        return True

    def _pick_issuer(self, prm: ResourceMetadata, current: Tokens | None) -> str:
        servers = prm.authorization_servers
        if current is not None and current.issuer in servers:
            return current.issuer
        return servers[0]

    def _server_metadata(self, issuer: str, *, legacy: bool) -> ServerMetadata:
        cached = self._metadata.get(issuer)
        if cached is None or (cached.fallback and not legacy):
            cached = fetch_server_metadata(self._fetcher, issuer, allow_fallback=legacy)
            for what in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
                value = getattr(cached, what)
                if value is not None:
                    check_url(value, f"the {what.replace('_', ' ')} of {issuer}")
            self._metadata[issuer] = cached
        return cached

    def _choose_scopes(
        self, challenge: Challenge | None, prm: ResourceMetadata | None, metadata: ServerMetadata, current: Tokens | None
    ) -> list[str]:
        if self._scopes is not None:
            base = list(self._scopes)
        elif challenge is not None and challenge.scopes:
            base = challenge.scopes
        elif prm is not None and prm.scopes_supported:
            base = list(prm.scopes_supported)
        else:
            base = []
        previous = self._requested or (current.scopes if current else [])
        scopes = list(dict.fromkeys([*previous, *base]))
        if (
            self._offline_access
            and self._grant is None
            and "offline_access" not in scopes
            and metadata.supports("scopes_supported", "offline_access")
            and metadata.supports("grant_types_supported", "refresh_token") is not False
        ):
            scopes.append("offline_access")
        return scopes

    def _dpop_for(self, metadata: ServerMetadata) -> DPoPKey | None:
        if self._dpop is None:
            return None
        algs = metadata.list("dpop_signing_alg_values_supported")
        if not algs or self._dpop.alg not in algs:
            log.info("%s does not support DPoP with %s; using bearer tokens", clean(self._fetcher.shown(metadata.issuer)),
                     self._dpop.alg)
            return None
        return self._dpop

    def _refresh(self, tokens: Tokens, metadata: ServerMetadata) -> Tokens:
        client = ClientInfo.from_json(self._load_record()["clients"].get(metadata.issuer))
        if client is None:
            raise TokenRequestError("no client registration for refreshing")
        data = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token or ""}
        if tokens.resource:
            data["resource"] = tokens.resource
        headers: dict[str, str] = {}
        apply_client_auth(client, data, headers, audience=metadata.issuer)
        fresh = request_token(
            self._fetcher, metadata.token_endpoint, data, headers=headers, dpop=self._dpop_for(metadata),
            issuer=metadata.issuer, resource=tokens.resource, previous=tokens,
        )
        self._save(fresh)
        log.debug("refreshed the access token at %s", clean(self._fetcher.shown(metadata.issuer)))
        return fresh

    def _client_for(self, metadata: ServerMetadata, redirect_uri: str) -> ClientInfo:
        stored = ClientInfo.from_json(self._load_record()["clients"].get(metadata.issuer))
        if stored is not None and still_usable(stored, metadata, redirect_uri):
            return stored
        client = obtain_client(
            self._fetcher, metadata, self._settings, redirect_uri=redirect_uri,
            grant_types=["authorization_code", "refresh_token"],
        )
        self._save(client=client)
        return client

    def _authorization_code(self, metadata: ServerMetadata, resource: str, scopes: list[str]) -> Tokens:
        check_pkce(metadata)
        if self._handler is None:
            self._handler = default_redirect_handler()
        client = self._client_for(metadata, self._handler.redirect_uri)
        try:
            return authorization_code_flow(
                self._fetcher, self._handler, metadata, client, resource, scopes,
                dpop=self._dpop_for(metadata), timeout=self._authorization_timeout,
            )
        except TokenRequestError as exc:
            if exc.error == "invalid_client" and client.source == "dynamic":
                self._save(forget_client=metadata.issuer)  # register afresh next time
            raise


def _pick(challenges: list[Challenge]) -> Challenge | None:
    for challenge in challenges:
        if challenge.scheme.lower() in ("bearer", "dpop"):
            return challenge
    return None


def _sent_token(request: requests.PreparedRequest | None) -> str | None:
    header = request.headers.get("Authorization") if request is not None else None
    if not header or " " not in header:
        return None
    return header.split(" ", 1)[1].strip()


def _rebuilt(server_url: str | None, spec: dict[str, Any]) -> OAuth:
    """Unpickle an ``OAuth``: a new one, made as the original was."""
    return OAuth(server_url, **spec)
