"""Finding 1 end to end: a backslash URL (``http://127.0.0.1:EVIL\\@127.0.0.1:GOOD/...``) is
GOOD to ``urlsplit`` and EVIL to urllib3. Served as a redirect or as the legacy SSE
``endpoint``, it must never get a request, let alone a credential, to the EVIL server.

Two real servers on 127.0.0.1; every kind of credential: a static header, a token provider
and an ``OAuth`` object holding a token.
"""

from __future__ import annotations

import uuid

import pytest

from mcpclient import Client, HTTPStatusError, MCPError, SSETransport, StreamableHTTPTransport, TransportError
from mcpclient.auth import MemoryTokenStore, OAuth
from mcpclient.auth._discovery import canonical_resource
from mcpclient.auth._tokens import Tokens
from tests.faults.hostile_http import HostileHTTP
from tests.security.legacy_sse import LegacySSE

pytestmark = pytest.mark.timeout(60)

SECRET = "s3cr3t-" + uuid.uuid4().hex


def static_header(url: str) -> dict:
    return {"headers": {"Authorization": f"Bearer {SECRET}"}}


def token_provider(url: str) -> dict:
    return {"token_provider": lambda: SECRET}


def oauth(url: str) -> dict:
    store = MemoryTokenStore()
    store.save(canonical_resource(url), {"tokens": Tokens(access_token=SECRET).to_json(), "clients": {}})
    return {"auth": OAuth(url, store=store)}


CREDENTIALS = [static_header, token_provider, oauth]


@pytest.fixture
def good():
    server = HostileHTTP().start()
    yield server
    server.stop()


@pytest.fixture
def evil():
    server = HostileHTTP().start()
    yield server
    server.stop()


def port_of(server: HostileHTTP) -> int:
    return server.httpd.server_address[1]


@pytest.mark.parametrize("credential", CREDENTIALS)
def test_a_backslash_redirect_never_reaches_the_other_port(good, evil, credential):
    target = f"http://127.0.0.1:{port_of(evil)}\\@127.0.0.1:{port_of(good)}/mcp"
    transport = StreamableHTTPTransport(good.url, **credential(good.url))
    with Client(transport, timeout=5, protocol="legacy") as client:
        client.initialize()
        assert any(SECRET in value for value in good.seen[0].values())  # the credential is in use
        with pytest.raises(HTTPStatusError, match="another origin") as info:
            client.call_tool("echo", {"key": uuid.uuid4().hex, "fault": "redirect", "to": target})
        assert f":{port_of(evil)}/" in str(info.value)  # the message shows where it really pointed
    assert evil.seen == []


@pytest.mark.parametrize("credential", CREDENTIALS)
def test_a_backslash_sse_endpoint_never_gets_a_post(evil, credential):
    good = LegacySSE().start()
    try:
        good.endpoint = f"http://127.0.0.1:{port_of(evil)}\\@127.0.0.1:{good.port}/messages"
        error: MCPError | None = None
        try:
            transport = SSETransport(good.url, endpoint_timeout=3, **credential(good.url))
        except TransportError as exc:
            error = exc
        else:  # the unfixed client accepts the endpoint; show where its POST goes
            try:
                transport.send({"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=3)
            except MCPError as exc:
                error = exc
            finally:
                transport.close()
    finally:
        good.stop()
    assert evil.seen == []
    assert good.seen == []
    assert error is not None and "another origin" in str(error)


def test_an_ambiguous_configured_url_is_refused_before_anything_is_sent(good, evil):
    ambiguous = f"http://127.0.0.1:{port_of(evil)}\\@127.0.0.1:{port_of(good)}/mcp"
    with pytest.raises(ValueError, match="ambiguous"):
        StreamableHTTPTransport(ambiguous, headers={"Authorization": f"Bearer {SECRET}"})
    with pytest.raises(ValueError, match="ambiguous"):
        SSETransport(ambiguous, token_provider=lambda: SECRET)
    assert evil.seen == [] and good.seen == []
