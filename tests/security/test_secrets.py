"""Secrets a server echoes never show: not in errors, their attributes, tracebacks or logs.

Hostile servers on 127.0.0.1 (``echo_server``) echo the request's ``Authorization`` header,
raw, base64 and percent-encoded, into every place a server text can reach the caller: an
HTTP 500 body, an invalid JSON body, JSON-RPC errors at HTTP 200 and 400, SSE events and a
server log message. Each credential kind is tried: a static header, a token provider, HTTP
Basic and ``mcpclient.OAuth``. Token endpoints (``responses``) echo the refresh token and the
client secret in ``error_description``. Everything is looked at with the root logger at DEBUG.
"""

from __future__ import annotations

import base64
import json
import logging
import socket
import time
import traceback
import uuid
from typing import Any
from urllib.parse import parse_qs, unquote

import pytest
import requests
import responses

from mcpclient import Client, MCPError, StreamableHTTPTransport
from mcpclient.auth import ClientCredentials, MemoryTokenStore, OAuth, TokenRequestError, _netguard
from mcpclient.auth._discovery import canonical_resource
from mcpclient.auth._tokens import ClientInfo, Tokens
from tests.security.echo_server import MODES, EchoServer, encodings

pytestmark = pytest.mark.timeout(60)


def _secret(kind: str) -> str:
    # "/", "+" and "=" make the percent-encoded and URL-safe base64 forms differ from the raw one.
    hexed = uuid.uuid4().hex
    return f"{kind}-{hexed[:16]}/{hexed[16:]}+x="


STATIC = _secret("static")
TOKEN = _secret("token")
PASSWORD = _secret("password")
ACCESS = _secret("access")
REFRESH = _secret("refresh")
CLIENT_SECRET = _secret("client-secret")


def forms(*secrets: str) -> list[str]:
    """Every form of ``secrets`` a leak would take (see ``echo_server.encodings``)."""
    return [form for secret in secrets for form in encodings(secret)]


def leaks(texts: list[str], secrets: list[str]) -> list[tuple[str, str]]:
    """(form, text) for each text holding a form, or its first 12 characters (a cut copy)."""
    return [(form, text[:200]) for text in texts for form in secrets if form[:12] in text]


def exception_texts(exc: BaseException) -> list[str]:
    """What a user could see of ``exc``: str, repr, traceback, and every attribute, down its chain."""
    texts = ["".join(traceback.format_exception(type(exc), exc, exc.__traceback__))]
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        texts += [str(current), repr(current), repr(current.args), repr(vars(current))]
        current = current.__cause__ or current.__context__
    return texts


def log_texts(caplog: pytest.LogCaptureFixture) -> list[str]:
    texts = [caplog.text]
    for record in caplog.records:
        texts += [record.getMessage(), repr(record.args), repr(record.msg)]
        if record.exc_info and record.exc_info[1] is not None:
            texts += exception_texts(record.exc_info[1])
    return texts


def _oauth_with_a_token(url: str) -> OAuth:
    """An ``OAuth`` holding a valid access token for ``url`` (as after an earlier authorization)."""
    store = MemoryTokenStore()
    tokens = Tokens(access_token=ACCESS, refresh_token=REFRESH, expires_at=time.time() + 3600)
    store.save(canonical_resource(url), {"tokens": tokens.to_json(), "clients": {}})
    return OAuth(url, store=store)


# name -> (transport options for a server URL, the secrets the server receives)
AUTH = {
    "static-header": (lambda url: {"headers": {"Authorization": f"Bearer {STATIC}"}}, [STATIC]),
    "token-provider": (lambda url: {"token_provider": lambda: TOKEN}, [TOKEN]),
    "basic": (lambda url: {"auth": requests.auth.HTTPBasicAuth("alice", PASSWORD)}, [PASSWORD, f"alice:{PASSWORD}"]),
    "oauth": (lambda url: {"auth": _oauth_with_a_token(url)}, [ACCESS, REFRESH]),
}


@pytest.fixture
def caplog_debug(caplog):
    caplog.set_level(logging.DEBUG)  # the root logger: mcpclient, requests and urllib3 alike
    return caplog


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("auth", list(AUTH))
def test_a_server_echoing_the_credential_shows_it_nowhere(caplog_debug, auth, mode):
    options, secrets = AUTH[auth]
    texts: list[str] = []
    with EchoServer() as server:
        transport = StreamableHTTPTransport(server.url, **options(server.url))
        with Client(transport, timeout=5, protocol="legacy") as client:
            try:
                result = client.call_tool("echo", {"mode": mode})
            except MCPError as exc:
                texts += exception_texts(exc)
                if mode == "sse-log":
                    raise
            else:
                assert mode == "sse-log", f"{mode} should have failed, got {result!r}"
            texts += [repr(client), repr(transport), str(transport)]
    # The credential did reach the server (the test would prove nothing otherwise)...
    assert any(secrets[0] in header or base64.b64encode(secrets[-1].encode()).decode() in header
               for header in server.seen)
    # ...and the server echoed it back; but it shows nowhere a user or a log collector can see.
    texts += log_texts(caplog_debug)
    found = leaks(texts, forms(*secrets, *set(server.seen)))  # the secrets, and the headers that carried them
    assert found == [], found[:3]


# -- token endpoints that echo the request ---------------------------------------------------

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
ISSUER = "https://auth.example.com"


@pytest.fixture
def public_dns(monkeypatch):
    """Every host resolves to a public documentation address; no real DNS."""

    def resolve(host, port, family=0, type=0, *args):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("203.0.113.10", 0))]

    monkeypatch.setattr(_netguard, "_resolve", resolve)


def _echo_token_request(request: Any) -> tuple[int, dict[str, str], str]:
    """A token endpoint that refuses every request, echoing all of it (raw and decoded)."""
    body = request.body if isinstance(request.body, str) else (request.body or b"").decode()
    form = {k: v[0] for k, v in parse_qs(body).items()}
    header = request.headers.get("Authorization", "")
    decoded = base64.b64decode(header.partition(" ")[2]).decode() if header.startswith("Basic ") else ""
    description = (f"rejected {form.get('refresh_token', '')} {form.get('client_secret', '')} {header} {decoded} "
                   f"{unquote(decoded)} {body} {json.dumps(form)}")
    return 400, {"Content-Type": "application/json"}, json.dumps(
        {"error": "invalid_grant", "error_description": description.strip()}
    )


def _authorization_server(rsps: responses.RequestsMock, mcp_status: int) -> None:
    challenge = f'Bearer resource_metadata="{PRM}"'
    rsps.add(responses.POST, MCP, status=mcp_status, headers={"WWW-Authenticate": challenge}, json={})
    rsps.add(responses.GET, PRM, json={"resource": MCP, "authorization_servers": [ISSUER]})
    rsps.add(responses.GET, ISSUER + "/.well-known/oauth-authorization-server", json={
        "issuer": ISSUER, "token_endpoint": ISSUER + "/token",
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
    })
    rsps.add_callback(responses.POST, ISSUER + "/token", callback=_echo_token_request)


def _mcp_request(auth: OAuth) -> requests.Response:
    return requests.post(MCP, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, auth=auth)


@pytest.mark.parametrize("method", ["client_secret_post", "client_secret_basic"])
def test_a_refresh_echoed_by_the_token_endpoint_shows_nowhere(public_dns, caplog_debug, method):
    store = MemoryTokenStore()
    expired = Tokens(access_token=ACCESS, refresh_token=REFRESH, expires_at=time.time() - 10, issuer=ISSUER)
    client = ClientInfo(client_id="the-client", client_secret=CLIENT_SECRET, token_endpoint_auth_method=method,
                        issuer=ISSUER, source="pre-registered")
    store.save(canonical_resource(MCP), {"tokens": expired.to_json(), "clients": {ISSUER: client.to_json()}})
    oauth = OAuth(MCP, store=store)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        _authorization_server(rsps, mcp_status=200)
        _mcp_request(oauth)  # the refresh fails (logged), the request goes out without a token
        refreshes = [c for c in rsps.calls if c.request.url == ISSUER + "/token"]
    assert refreshes and REFRESH in unquote(refreshes[0].request.body)  # the secrets were sent
    messages = [r.getMessage() for r in caplog_debug.records]
    assert any("refreshing the token failed" in m and "invalid_grant" in m for m in messages), messages
    found = leaks(log_texts(caplog_debug) + [repr(oauth)], forms(REFRESH, CLIENT_SECRET, ACCESS))
    assert found == [], found[:3]


@pytest.mark.parametrize("method", ["client_secret_post", "client_secret_basic"])
def test_client_credentials_echoed_by_the_token_endpoint_show_nowhere(public_dns, caplog_debug, method):
    oauth = OAuth(MCP, grant=ClientCredentials("the-client", CLIENT_SECRET, token_endpoint_auth_method=method))
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        _authorization_server(rsps, mcp_status=401)
        with pytest.raises(TokenRequestError) as info:
            _mcp_request(oauth)
    error = info.value
    assert error.error == "invalid_grant" and error.error_description, vars(error)
    pair = f"the-client:{CLIENT_SECRET}"
    found = leaks(exception_texts(error) + log_texts(caplog_debug) + [repr(oauth)], forms(CLIENT_SECRET, pair))
    assert found == [], found[:3]
