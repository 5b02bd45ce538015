"""A SharedClient with OAuth travels as what it connects to and how it authorizes, never a token.

Real loopback servers: the official SDK's resource server (tests/servers/sdk_oauth_server.py),
which checks each token with the authorization server of tests/scale/authorization_server.py
(client credentials, with a secret or a private key, and DPoP proofs). The parent fetches a
token; a spawned worker that receives the shared client gets its own, from the grant or from
the token store it was given, signing with the same keys.
"""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from mcpclient import HTTP, SharedClient, SharedGroup
from mcpclient.auth import ClientCredentials, DPoPKey, FileTokenStore, MemoryTokenStore, OAuth
from mcpclient.auth._tokens import Tokens
from tests.helpers import require_mcp_sdk
from tests.http.conftest import start_sdk_server
from tests.scale import _work
from tests.scale.authorization_server import CLIENT_ID, AuthorizationServer

OAUTH_SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_oauth_server.py"

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def start_servers(scale_path):
    """Start an authorization server (``public_key``: the client's, for ``private_key_jwt``)
    and the SDK resource server it answers for; both stopped at the end."""
    require_mcp_sdk()
    started = []

    def start(public_key=None) -> tuple[AuthorizationServer, str]:
        issuer = AuthorizationServer(public_key).start()
        started.append(issuer)
        mcp = start_sdk_server("--issuer", issuer.url, script=OAUTH_SERVER)
        started.append(mcp)
        return issuer, mcp.url

    yield start
    for server in reversed(started):
        server.stop()


@pytest.fixture
def servers(start_servers):
    return start_servers()


def tokens_of(issuer: AuthorizationServer) -> list[str]:
    return [entry["token"] for entry in issuer.issued]


def spawned_add(shared: SharedClient, a: int, b: int) -> dict:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_work.add, shared, a, b).result(60)


def test_a_worker_fetches_its_own_token_and_none_travels(servers):
    issuer, url = servers
    shared = SharedClient(url, timeout=20, http=HTTP(auth=OAuth(grant=ClientCredentials(CLIENT_ID, issuer.secret))))
    try:
        assert shared.call_tool("add", {"a": 1, "b": 2}).text == "3"  # the parent holds a token now
        [parent_token] = tokens_of(issuer)
        data = pickle.dumps(shared)
        assert parent_token.encode() not in data and b"token-" not in data
        answer = spawned_add(shared, 2, 3)
        assert answer["sum"] == "5" and answer["opened"] == 1
        assert len(tokens_of(issuer)) == 2 and tokens_of(issuer)[0] == parent_token  # the worker's own grant
        assert issuer.issued[1]["resource"] == url  # for the same server, as the parent's
    finally:
        shared.close()


def test_a_worker_reads_its_token_from_the_file_store_it_was_given(servers, tmp_path):
    issuer, url = servers
    store = FileTokenStore(tmp_path / "tokens")
    shared = SharedClient(url, timeout=20,
                          http=HTTP(auth=OAuth(grant=ClientCredentials(CLIENT_ID, issuer.secret), store=store)))
    try:
        assert shared.call_tool("add", {"a": 1, "b": 2}).text == "3"
        [token] = tokens_of(issuer)
        data = pickle.dumps(shared)
        assert token.encode() not in data and tmp_path.name.encode() in data  # the store travels as its directory
        answer = spawned_add(shared, 4, 5)
        assert answer["sum"] == "9" and answer["opened"] == 1
        assert tokens_of(issuer) == [token]  # no new grant: the worker used the stored token
    finally:
        shared.close()


def test_a_memory_token_store_travels_empty():
    store = MemoryTokenStore()
    store.save("http://127.0.0.1:1/mcp", {"tokens": Tokens(access_token="token-in-memory").to_json(), "clients": {}})
    data = pickle.dumps(SharedClient("http://127.0.0.1:1/mcp",
                                     http=HTTP(auth=OAuth("http://127.0.0.1:1/mcp", store=store))))
    assert b"token-in-memory" not in data
    assert pickle.loads(pickle.dumps(store)).load("http://127.0.0.1:1/mcp") is None


def test_an_oauth_part_that_cannot_be_pickled_is_named():
    class Local(ClientCredentials):
        pass

    auth = OAuth("http://127.0.0.1:1/mcp", grant=Local(CLIENT_ID, "s"))
    with pytest.raises(TypeError, match=r"the option http=HTTP\(auth=...\) \(a OAuth\).*its grant \(a Local\)"):
        pickle.dumps(SharedClient("http://127.0.0.1:1/mcp", http=HTTP(auth=auth)))


def test_a_private_key_jwt_grant_travels_and_the_worker_signs_with_the_same_key(start_servers):
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    body = "".join(pem.splitlines()[1:-1])
    issuer, url = start_servers(key.public_key())
    grant = ClientCredentials(CLIENT_ID, private_key=pem)
    shared = SharedClient(url, timeout=20, http=HTTP(auth=OAuth(grant=grant)))
    try:
        assert shared.call_tool("add", {"a": 1, "b": 2}).text == "3"
        [parent] = issuer.issued
        assert parent["auth"] == "private_key_jwt"
        data = pickle.dumps(shared)
        assert parent["token"].encode() not in data
        assert b"BEGIN PRIVATE KEY" in data  # the key travels, as docs/scale.md says: the pickle is as secret
        for shown in (repr(shared), repr(grant), repr(shared._options["http"].auth), repr(shared._options["http"]), repr(grant.__getstate__())):
            assert body[:40] not in shown and "PRIVATE" not in shown
        answer = spawned_add(shared, 2, 3)
        assert answer["sum"] == "5" and answer["opened"] == 1
        worker = issuer.issued[1]
        assert worker["auth"] == "private_key_jwt" and worker["token"] != parent["token"]  # signed with the same key
    finally:
        shared.close()


@pytest.mark.parametrize("given", ["key", "true"])
def test_a_dpop_key_travels_and_dpop_true_makes_a_key_per_process(start_servers, given):
    pytest.importorskip("cryptography")
    issuer, url = start_servers()
    key = DPoPKey() if given == "key" else None
    auth = OAuth(grant=ClientCredentials(CLIENT_ID, issuer.secret), dpop=key or True)
    shared = SharedClient(url, timeout=20, http=HTTP(auth=auth))
    try:
        assert shared.call_tool("add", {"a": 1, "b": 2}).text == "3"
        [parent] = issuer.issued
        assert parent["jkt"] is not None and (key is None or parent["jkt"] == key.thumbprint)
        assert "PRIVATE" not in repr(auth) and "PRIVATE" not in repr(key)
        answer = spawned_add(shared, 2, 3)
        assert answer["sum"] == "5" and answer["opened"] == 1
        worker = issuer.issued[1]
        assert worker["jkt"] is not None
        if key is not None:
            assert worker["jkt"] == key.thumbprint  # the worker proved possession of the same key
        else:
            assert worker["jkt"] != parent["jkt"]  # dpop=True: a key of its own, made in the worker
    finally:
        shared.close()


def test_a_shared_group_with_oauth_travels_as_its_settings(start_servers):
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())  # a cryptography key object, not PEM text
    issuer, url = start_servers(key.public_key())
    group = SharedGroup({"secure": url}, timeout=20,
                        http=HTTP(auth=OAuth(grant=ClientCredentials(CLIENT_ID, private_key=key),
                                                                dpop=DPoPKey())))
    try:
        assert group.call_tool("secure__add", {"a": 1, "b": 2}).text == "3"
        [parent] = issuer.issued
        data = pickle.dumps(group)
        assert parent["token"].encode() not in data
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            answer = pool.submit(_work.group_add, group, "secure__add", 4, 5).result(60)
        assert answer["sum"] == "9" and answer["opened"] == 1
        worker = issuer.issued[1]
        assert worker["auth"] == "private_key_jwt" and worker["jkt"] == parent["jkt"] is not None
        assert worker["token"] != parent["token"]
    finally:
        group.close()


def test_a_private_key_that_cannot_be_exported_is_named():
    class HeldInHardware:  # a key object whose private bytes cannot be read (a double: an HSM key)
        def private_bytes(self, *args):
            raise ValueError("not exportable")

    auth = OAuth("http://127.0.0.1:1/mcp", grant=ClientCredentials(CLIENT_ID, private_key=HeldInHardware()))
    with pytest.raises(TypeError, match=r"its grant \(a ClientCredentials\).*the private key \(a HeldInHardware\) "
                                        r"cannot travel to another process.*create the grant in the worker"):
        pickle.dumps(SharedClient("http://127.0.0.1:1/mcp", http=HTTP(auth=auth)))
