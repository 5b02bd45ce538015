"""The authorization code flow end to end against scripted servers (``responses``)."""

from __future__ import annotations

import logging
import time

import pytest
import requests
import responses

from mcpclient.auth import AuthorizationError, MemoryTokenStore, OAuth
from mcpclient.auth._pkce import s256_challenge

from .fakes import ISSUER, MCP, PRM, REDIRECT, Approve, FakeServers


@pytest.fixture
def rsps():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


def post(auth: OAuth, url: str = MCP) -> requests.Response:
    return requests.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, auth=auth)


def test_a_401_leads_to_discovery_registration_authorization_and_a_retry(rsps):
    servers = FakeServers(rsps)
    handler = Approve()
    response = post(OAuth(redirect_handler=handler))
    assert response.status_code == 200
    assert servers.mcp_auth == [None, "Bearer access-1"]
    assert servers.registrations[0]["redirect_uris"] == [REDIRECT]
    assert servers.registrations[0]["application_type"] == "native"
    authorize = handler.requests[0]
    token = servers.token_requests[0]
    assert authorize["code_challenge_method"] == "S256"
    assert authorize["code_challenge"] == s256_challenge(token["code_verifier"])
    assert authorize["resource"] == token["resource"] == MCP
    assert token["grant_type"] == "authorization_code" and token["redirect_uri"] == REDIRECT


def test_the_token_is_reused_without_new_authorization(rsps):
    servers = FakeServers(rsps)
    auth = OAuth(redirect_handler=Approve())
    post(auth)
    post(auth)
    assert servers.mcp_auth == [None, "Bearer access-1", "Bearer access-1"]
    assert len(servers.token_requests) == 1


def test_tokens_are_never_sent_to_another_origin(rsps):
    FakeServers(rsps)
    other = "https://elsewhere.example.com/mcp"
    seen = []
    rsps.add_callback(responses.POST, other, callback=lambda r: (seen.append(r.headers.get("Authorization")), (200, {}, "{}"))[1])
    auth = OAuth(redirect_handler=Approve())
    post(auth)
    post(auth, other)
    assert seen == [None]


def test_an_expiring_token_is_refreshed_before_the_request(rsps):
    servers = FakeServers(rsps, expires_in=30)  # within the 60 s leeway at once
    auth = OAuth(redirect_handler=Approve())
    post(auth)
    post(auth)
    assert [r["grant_type"] for r in servers.token_requests] == ["authorization_code", "refresh_token"]
    assert servers.token_requests[1]["refresh_token"] == "refresh-1"
    assert servers.token_requests[1]["resource"] == MCP
    assert servers.mcp_auth[-1] == "Bearer access-2"


def test_a_401_with_a_refresh_token_refreshes_instead_of_reauthorizing(rsps):
    servers = FakeServers(rsps)
    handler = Approve()
    auth = OAuth(redirect_handler=handler)
    post(auth)
    servers.issued.clear()  # the server revokes the access token
    assert post(auth).status_code == 200
    assert [r["grant_type"] for r in servers.token_requests] == ["authorization_code", "refresh_token"]
    assert len(handler.requests) == 1


def test_a_failed_refresh_falls_back_to_authorization(rsps):
    servers = FakeServers(rsps, refresh=False)
    store = MemoryTokenStore()
    handler = Approve()
    auth = OAuth(redirect_handler=handler, store=store)
    post(auth)
    record = store.load(MCP)
    record["tokens"]["refresh_token"] = "revoked"
    record["tokens"]["expires_at"] = time.time() - 1
    store.save(MCP, record)
    fresh = OAuth(redirect_handler=handler, store=store)
    assert post(fresh).status_code == 200
    assert [r["grant_type"] for r in servers.token_requests] == ["authorization_code", "refresh_token", "authorization_code"]


def test_step_up_asks_for_the_union_of_scopes(rsps):
    servers = FakeServers(rsps, prm={"scopes_supported": ["read"]})
    handler = Approve()
    auth = OAuth(redirect_handler=handler)
    post(auth)
    servers.required = {"write"}
    assert post(auth).status_code == 200
    assert handler.requests[0]["scope"] == "read"
    assert set(handler.requests[1]["scope"].split()) == {"read", "write"}


def test_step_up_stops_when_the_token_already_has_the_scopes(rsps):
    servers = FakeServers(rsps, required=("admin",), prm={"scopes_supported": ["admin"]})
    handler = Approve()
    auth = OAuth(redirect_handler=handler)
    post(auth)
    servers.issued = {token: set() for token in servers.issued}  # the server now wants more than it says
    assert post(auth).status_code == 403
    assert len(handler.requests) == 1


def test_step_up_attempts_are_limited(rsps):
    servers = FakeServers(rsps, required=("admin",), prm={"scopes_supported": ["admin"]}, grantable={"admin"})
    handler = Approve()
    auth = OAuth(redirect_handler=handler)
    post(auth)
    servers.required = {"admin", "root"}  # the authorization server never grants root
    assert post(auth).status_code == 403
    assert len(handler.requests) == 1 + 3


def test_authorizations_stop_after_the_limit(rsps):
    servers = FakeServers(rsps)
    servers.issued = type("Never", (dict,), {"__setitem__": lambda self, k, v: None})()
    handler = Approve()
    response = post(OAuth(redirect_handler=handler, max_authorizations=2))
    assert response.status_code == 401
    assert len(handler.requests) == 2


def test_offline_access_is_requested_only_when_the_server_lists_it(rsps):
    FakeServers(rsps, metadata={"scopes_supported": ["read", "offline_access"]}, prm={"scopes_supported": ["read"]})
    handler = Approve()
    post(OAuth(redirect_handler=handler))
    assert handler.requests[0]["scope"].split() == ["read", "offline_access"]


def test_scope_is_omitted_when_nothing_defines_it(rsps):
    FakeServers(rsps)
    handler = Approve()
    post(OAuth(redirect_handler=handler))
    assert "scope" not in handler.requests[0]


def test_the_authorization_server_without_pkce_is_refused(rsps):
    servers = FakeServers(rsps)
    del servers.metadata["code_challenge_methods_supported"]
    handler = Approve()
    with pytest.raises(AuthorizationError, match="PKCE"):
        post(OAuth(redirect_handler=handler))
    assert handler.requests == []


def test_a_wrong_iss_is_refused_before_the_code_is_used(rsps):
    servers = FakeServers(rsps)
    with pytest.raises(AuthorizationError, match="another issuer") as info:
        post(OAuth(redirect_handler=Approve(iss="https://evil.example.com", extra={"error": "access_denied"})))
    assert servers.token_requests == []
    assert "access_denied" not in str(info.value)


def test_a_missing_iss_is_refused_when_advertised(rsps):
    servers = FakeServers(rsps)
    with pytest.raises(AuthorizationError, match="promises an iss"):
        post(OAuth(redirect_handler=Approve(iss=None)))
    assert servers.token_requests == []


def test_a_missing_iss_is_accepted_when_not_advertised(rsps):
    FakeServers(rsps, metadata={"authorization_response_iss_parameter_supported": False})
    assert post(OAuth(redirect_handler=Approve(iss=None))).status_code == 200


def test_a_state_mismatch_is_refused(rsps):
    servers = FakeServers(rsps)

    class Forged(Approve):
        def authorize(self, authorization_url, *, timeout=None):
            return super().authorize(authorization_url).replace("state=", "state=x")

    with pytest.raises(AuthorizationError, match="state"):
        post(OAuth(redirect_handler=Forged()))
    assert servers.token_requests == []


def test_a_resource_metadata_for_another_server_is_refused(rsps):
    FakeServers(rsps, prm={"resource": "https://evil.example.com/mcp"})
    handler = Approve()
    with pytest.raises(AuthorizationError, match="not for"):
        post(OAuth(redirect_handler=handler))
    assert handler.requests == []


def test_registrations_are_kept_per_issuer_and_redone_when_the_server_moves(rsps):
    servers = FakeServers(rsps)
    auth = OAuth(redirect_handler=Approve())
    post(auth)
    new = "https://auth2.example.com"
    servers.prm["authorization_servers"] = [new]
    rsps.replace(responses.GET, PRM, json=servers.prm)
    rsps.add(responses.GET, new + "/.well-known/oauth-authorization-server",
             json={**servers.metadata, "issuer": new, "token_endpoint": ISSUER + "/token",
                   "registration_endpoint": ISSUER + "/register"})
    servers.issued.clear()
    auth._failures = 0
    handler = Approve(iss=new)
    auth._handler = handler
    assert post(auth).status_code == 200
    assert len(servers.registrations) == 2
    assert handler.requests[0]["client_id"] == "client-2"
    assert servers.token_requests[-1]["grant_type"] == "authorization_code"  # the old refresh token was not used


def test_no_secret_appears_in_logs_reprs_or_errors(rsps, caplog):
    servers = FakeServers(rsps)
    caplog.set_level(logging.DEBUG)
    auth = OAuth(redirect_handler=Approve(), client_id="cid", client_secret="s3cret-value")
    post(auth)
    servers.metadata["authorization_response_iss_parameter_supported"] = True
    tokens = auth.tokens
    texts = [caplog.text, repr(auth), repr(tokens), str(auth._load_record())]
    try:
        OAuth(redirect_handler=Approve(iss="https://evil.example.com"), client_secret="s3cret-value",
              client_id="cid", server_url=MCP).authorize()
    except AuthorizationError as exc:
        texts.append(str(exc))
    leaked = [t for t in texts[:3] + texts[4:] for secret in ("access-1", "refresh-1", "s3cret-value", "code-1") if secret in t]
    assert not leaked
    assert "'***'" in repr(tokens)


def test_authorize_before_connecting_uses_well_known_discovery(rsps):
    servers = FakeServers(rsps)
    auth = OAuth(MCP, redirect_handler=Approve())
    tokens = auth.authorize()
    assert tokens.issuer == ISSUER and tokens.resource == MCP
    assert post(auth).status_code == 200
    assert servers.mcp_auth == ["Bearer access-1"]


def test_prm_url_from_the_challenge_is_used_first(rsps):
    FakeServers(rsps)
    post(OAuth(redirect_handler=Approve()))
    urls = [call.request.url for call in rsps.calls if "well-known" in call.request.url]
    assert urls[0] == PRM
