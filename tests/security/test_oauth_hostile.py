"""The OAuth layer against hostile servers on 127.0.0.1 (each port its own origin).

- A ``requests.Session`` lent to ``OAuth(session=...)`` keeps its credentials (headers,
  ``auth``, cookies) with the MCP server's origin: the authorization server, and a third origin
  its metadata redirects to, never see them.
- A status line or a chunk header echoing the client secret shows in no error.
- Metadata nested far deeper than any document needs gives a clear ``DiscoveryError``.
"""

from __future__ import annotations

import json
import uuid

import pytest
import requests

from mcpclient import MCPError
from mcpclient.auth import ClientCredentials, DiscoveryError, MemoryTokenStore, OAuth
from tests.security.scripted_http import Answer, ScriptedHTTP
from tests.security.test_secrets import exception_texts, forms, leaks

pytestmark = pytest.mark.timeout(60)

LENT = "lent-" + uuid.uuid4().hex
LENT_PASSWORD = "lent-pw-" + uuid.uuid4().hex
LENT_COOKIE = "lent-cookie-" + uuid.uuid4().hex
CLIENT_SECRET = "client-secret/" + uuid.uuid4().hex + "+x="


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


@pytest.fixture
def mcp():
    with ScriptedHTTP() as server:
        yield server


@pytest.fixture
def auth():
    with ScriptedHTTP() as server:
        yield server


@pytest.fixture
def third():
    with ScriptedHTTP() as server:
        yield server


def _serve_resource(mcp: ScriptedHTTP, issuer: str) -> str:
    url = mcp.origin + "/mcp"
    mcp.routes["/.well-known/oauth-protected-resource/mcp"] = Answer(
        body=_json({"resource": url, "authorization_servers": [issuer]})
    )
    return url


def _metadata(issuer: str, token_endpoint: str) -> bytes:
    return _json({"issuer": issuer, "token_endpoint": token_endpoint,
                  "token_endpoint_auth_methods_supported": ["client_secret_basic"]})


def _token(path: str, headers: dict[str, str], body: bytes) -> Answer:
    return Answer(body=_json({"access_token": "the-access-token-" + uuid.uuid4().hex, "token_type": "Bearer",
                              "expires_in": 3600}))


def _lent_session() -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {LENT}"
    session.headers["X-Api-Key"] = LENT
    session.auth = ("alice", LENT_PASSWORD)
    session.cookies.set("sid", LENT_COOKIE, domain="127.0.0.1", path="/")  # a cookie knows no port
    return session


def test_a_lent_sessions_credentials_stay_with_the_mcp_origin(mcp, auth, third):
    url = _serve_resource(mcp, auth.origin)
    # The authorization server's metadata redirects to a third origin, which serves it.
    auth.routes["/.well-known/oauth-authorization-server"] = Answer(
        302, headers={"Location": third.origin + "/metadata"}
    )
    third.routes["/metadata"] = Answer(body=_metadata(auth.origin, third.origin + "/token"))
    third.routes["/token"] = _token
    session = _lent_session()
    oauth = OAuth(url, session=session, grant=ClientCredentials("the-client", CLIENT_SECRET),
                  store=MemoryTokenStore())
    tokens = oauth.authorize()
    assert tokens.access_token.startswith("the-access-token-")
    assert [path for path, _ in third.seen] == ["/metadata", "/token"]  # the whole chain ran
    secrets = forms(LENT, LENT_PASSWORD, f"alice:{LENT_PASSWORD}", LENT_COOKIE)
    assert leaks(auth.headers_seen() + third.headers_seen(), secrets) == []
    # The MCP server's own origin still gets them (the session was lent for it).
    assert any(LENT in line for line in mcp.headers_seen())
    assert session.headers["Authorization"] == f"Bearer {LENT}"  # the lent session is untouched


def test_a_redirect_back_home_after_leaving_carries_no_lent_credentials(mcp, auth):
    url = _serve_resource(mcp, auth.origin)
    # The metadata leaves for the authorization server's origin and comes back to the MCP one.
    auth.routes["/.well-known/oauth-authorization-server"] = Answer(
        302, headers={"Location": mcp.origin + "/as-metadata"}
    )
    mcp.routes["/as-metadata"] = Answer(body=_metadata(auth.origin, auth.origin + "/token"))
    auth.routes["/token"] = _token
    oauth = OAuth(url, session=_lent_session(), grant=ClientCredentials("the-client", CLIENT_SECRET),
                  store=MemoryTokenStore())
    oauth.authorize()
    back = [headers for path, headers in mcp.seen if path == "/as-metadata"]
    assert back and leaks([repr(h) for h in back], forms(LENT, LENT_PASSWORD)) == []
    assert leaks(auth.headers_seen(), forms(LENT, LENT_PASSWORD)) == []


@pytest.mark.parametrize("where", ["reason", "chunk-header"])
def test_a_token_endpoint_echoing_the_client_secret_in_its_status_line_shows_it_nowhere(mcp, auth, where):
    url = _serve_resource(mcp, auth.origin)
    auth.routes["/.well-known/oauth-authorization-server"] = Answer(body=_metadata(auth.origin, auth.origin + "/token"))

    def echo(path: str, headers: dict[str, str], body: bytes) -> Answer:
        echoed = f"{headers.get('authorization', '')} {CLIENT_SECRET}"
        if where == "reason":
            return Answer(400, _json({"error": "invalid_client"}), reason=f"denied {echoed}")
        return Answer(200, chunk_header=echoed)

    auth.routes["/token"] = echo
    oauth = OAuth(url, grant=ClientCredentials("the-client", CLIENT_SECRET), store=MemoryTokenStore())
    with pytest.raises(MCPError) as info:
        oauth.authorize()
    sent = [h["authorization"] for p, h in auth.seen if p == "/token"]
    assert sent, auth.seen  # the secret was sent, and echoed back
    found = leaks(exception_texts(info.value), forms(CLIENT_SECRET, *sent))
    assert found == [], found[:3]


DEEP = 200_000


@pytest.mark.parametrize("document", ["resource", "authorization-server"])
def test_metadata_nested_200000_deep_is_a_clear_error(mcp, auth, document):
    url = _serve_resource(mcp, auth.origin)
    deep = b'{"issuer": "x", "deep": ' + b"[" * DEEP + b"]" * DEEP + b"}"
    if document == "resource":
        mcp.routes["/.well-known/oauth-protected-resource/mcp"] = Answer(body=deep)
    else:
        auth.routes["/.well-known/oauth-authorization-server"] = Answer(body=deep)
    oauth = OAuth(url, grant=ClientCredentials("the-client", CLIENT_SECRET), store=MemoryTokenStore())
    with pytest.raises(DiscoveryError, match="nests deeper than"):
        oauth.authorize()
