"""The authorization grants that are MCP extensions declare themselves (issue #30).

A client whose transport's ``OAuth`` uses the client credentials grant declares
``io.modelcontextprotocol/oauth-client-credentials`` under ``capabilities.extensions``; the
enterprise-managed grant declares ``io.modelcontextprotocol/enterprise-managed-authorization``.
Seen on the wire (a ``requests.Session`` hook records each request body) against the official
SDK's servers: the ``initialize`` of the legacy era (Streamable HTTP and HTTP+SSE), and every
request's ``_meta`` in the 2026-07-28 era. The SDK servers ask for no token, so no grant runs:
the declaration follows from the configuration, as it must be known at the first request.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
import requests

from mcpclient import Client, HTTP, SSETransport, StreamableHTTPTransport, connect
from mcpclient.auth import ClientCredentials, EnterpriseManaged, JWTBearer, OAuth
from tests.helpers import require_mcp_sdk

pytestmark = pytest.mark.timeout(60)

CLIENT_CREDENTIALS = "io.modelcontextprotocol/oauth-client-credentials"
ENTERPRISE = "io.modelcontextprotocol/enterprise-managed-authorization"

GRANTS = {
    "client-credentials": (lambda: ClientCredentials("svc", "s3cret"), CLIENT_CREDENTIALS),
    "enterprise-managed": (lambda: EnterpriseManaged(
        id_token="id.token.value", idp_token_endpoint="https://idp.example.com/token", idp_client_id="idp-client",
        client_id="mcp-client"), ENTERPRISE),
}


@pytest.fixture
def sdk_server() -> Iterator[Any]:
    require_mcp_sdk()
    from tests.http.conftest import start_sdk_server

    started: list[Any] = []

    def start(*args: str) -> Any:
        started.append(start_sdk_server(*args))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def recording_session() -> tuple[requests.Session, list[dict[str, Any]]]:
    """A session whose every POSTed JSON-RPC message is recorded."""
    sent: list[dict[str, Any]] = []
    session = requests.Session()

    def record(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        body = response.request.body
        if body:
            sent.append(json.loads(body))

    session.hooks["response"].append(record)
    return session, sent


def opening_declared(sent: list[dict[str, Any]]) -> dict[str, Any]:
    """What the opening request (``initialize`` or ``server/discover``) declared."""
    opening = next(m for m in sent if m.get("method") in ("initialize", "server/discover"))
    return declared(opening, "legacy" if opening["method"] == "initialize" else "2026-07-28")


def declared(message: dict[str, Any], era: str) -> dict[str, Any]:
    params = message.get("params") or {}
    if era == "legacy":
        return params["capabilities"].get("extensions") or {}
    return params["_meta"]["io.modelcontextprotocol/clientCapabilities"].get("extensions") or {}


@pytest.mark.parametrize("grant", GRANTS)
@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_a_grant_that_is_an_extension_is_declared(sdk_server, grant, era):
    server = sdk_server("--transport", "streamable-http")
    make, identifier = GRANTS[grant]
    session, sent = recording_session()
    transport = StreamableHTTPTransport(server.url, session=session, auth=OAuth(grant=make()))
    with Client(transport, protocol=era) as client:
        assert client.call_tool("echo", {"text": "up"}).text == "up"
    assert opening_declared(sent)[identifier] == {}
    if era != "legacy":  # every request carries the client's capabilities
        call = next(m for m in sent if m.get("method") == "tools/call")
        assert declared(call, era)[identifier] == {}


def test_the_declaration_travels_over_http_sse_and_through_connect(sdk_server):
    server = sdk_server("--transport", "sse")
    session, sent = recording_session()
    with Client(SSETransport(server.url, session=session, auth=OAuth(grant=ClientCredentials("svc", "s3cret"))),
                protocol="legacy"):
        pass
    assert CLIENT_CREDENTIALS in opening_declared(sent)

    server = sdk_server("--transport", "streamable-http")
    session, sent = recording_session()
    with connect(server.url, protocol="legacy",
                 http=HTTP(session=session, auth=OAuth(grant=ClientCredentials("svc", "s3cret")))):
        pass
    assert CLIENT_CREDENTIALS in opening_declared(sent)


@pytest.mark.parametrize("auth", [
    lambda: OAuth(),                                            # the authorization code flow
    lambda: OAuth(grant=JWTBearer("a.workload.jwt")),           # no MCP extension of its own
    lambda: None,
], ids=["code-flow", "jwt-bearer", "no-auth"])
def test_other_authorization_declares_nothing(sdk_server, auth):
    server = sdk_server("--transport", "streamable-http")
    session, sent = recording_session()
    with Client(StreamableHTTPTransport(server.url, session=session, auth=auth()), protocol="legacy"):
        pass
    assert not {CLIENT_CREDENTIALS, ENTERPRISE} & set(opening_declared(sent))
