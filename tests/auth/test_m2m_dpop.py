"""Machine-to-machine grants, JWT signing and DPoP proofs."""

from __future__ import annotations

import base64
import hashlib
import json
from urllib.parse import parse_qs

import pytest
import requests
import responses

pytest.importorskip("cryptography")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, utils  # noqa: E402

from mcpclient.auth import ClientCredentials, DPoPKey, EnterpriseManaged, JWTBearer, OAuth, TokenRequestError  # noqa: E402
from mcpclient.auth._jwt import public_jwk, sign, thumbprint  # noqa: E402

from .fakes import ISSUER, MCP, PRM  # noqa: E402


def b64d(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def decode(jwt: str) -> tuple[dict, dict]:
    header, claims, _ = jwt.split(".")
    return json.loads(b64d(header)), json.loads(b64d(claims))


def verify_es256(jwt: str, public_key) -> None:
    signing_input, signature = jwt.rsplit(".", 1)
    raw = b64d(signature)
    der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public_key.verify(der, signing_input.encode(), ec.ECDSA(hashes.SHA256()))


@pytest.fixture
def server():
    """An MCP server wanting a token and an authorization server granting them; records token requests."""
    seen: list[tuple[dict, dict]] = []
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        def mcp(request):
            if "Authorization" not in request.headers:
                return 401, {"WWW-Authenticate": f'Bearer resource_metadata="{PRM}"'}, ""
            return 200, {}, "{}"

        def token(request):
            form = {k: v[0] for k, v in parse_qs(request.body).items()}
            seen.append((form, dict(request.headers)))
            if form.get("grant_type") == "fail":
                return 400, {}, json.dumps({"error": "invalid_grant"})
            kind = "DPoP" if "DPoP" in request.headers else "Bearer"
            return 200, {}, json.dumps({"access_token": f"t{len(seen)}", "token_type": kind, "expires_in": 600})

        rsps.add_callback(responses.POST, MCP, callback=mcp)
        rsps.add(responses.GET, PRM, json={"resource": MCP, "authorization_servers": [ISSUER]})
        rsps.add(responses.GET, ISSUER + "/.well-known/oauth-authorization-server", json={
            "issuer": ISSUER, "token_endpoint": ISSUER + "/token",
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "private_key_jwt"],
            "dpop_signing_alg_values_supported": ["ES256"],
            "code_challenge_methods_supported": ["S256"],
        })
        rsps.add_callback(responses.POST, ISSUER + "/token", callback=token)
        rsps.seen = seen
        yield rsps


def test_client_credentials_with_a_secret_use_basic_auth(server):
    assert requests.post(MCP, auth=OAuth(grant=ClientCredentials("id", "se:cret"))).status_code == 200
    form, headers = server.seen[0]
    assert form["grant_type"] == "client_credentials" and form["resource"] == MCP
    assert base64.b64decode(headers["Authorization"][6:]) == b"id:se%3Acret"
    assert "client_secret" not in form


def test_client_credentials_with_a_private_key_send_a_signed_assertion(server):
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    requests.post(MCP, auth=OAuth(grant=ClientCredentials("id", private_key=pem.decode())))
    form, _ = server.seen[0]
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    header, claims = decode(form["client_assertion"])
    assert header["alg"] == "ES256"
    assert claims["iss"] == claims["sub"] == "id" and claims["aud"] == ISSUER and claims["exp"] > claims["iat"]
    verify_es256(form["client_assertion"], key.public_key())


def test_jwt_bearer_sends_the_workload_assertion_and_never_retries(server):
    class Failing(JWTBearer):
        def obtain(self, context):
            return context.token({"grant_type": "fail", "assertion": "x"})

    requests.post(MCP, auth=OAuth(grant=JWTBearer(lambda: "workload.jwt.value", client_id="w")))
    form, _ = server.seen[0]
    assert form == {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "workload.jwt.value",
                    "client_id": "w", "resource": MCP}
    with pytest.raises(TokenRequestError) as info:
        requests.post(MCP, auth=OAuth(grant=Failing("x")))
    assert info.value.error == "invalid_grant"
    assert len(server.seen) == 2


def test_enterprise_managed_exchanges_the_id_token_then_uses_the_grant(server):
    idp = "https://idp.example.com/token"
    server.add(responses.POST, idp, json={
        "access_token": "id-jag", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A",
    })
    grant = EnterpriseManaged(id_token="id-token", idp_token_endpoint=idp, idp_client_id="idp-c", client_id="c",
                              client_secret="s")
    assert requests.post(MCP, auth=OAuth(grant=grant)).status_code == 200
    exchange_call = next(c for c in server.calls if c.request.url == idp)
    sent = {k: v[0] for k, v in parse_qs(exchange_call.request.body).items()}
    assert sent["subject_token"] == "id-token" and sent["audience"] == ISSUER and sent["resource"] == MCP
    assert sent["requested_token_type"].endswith("id-jag") and sent["client_id"] == "idp-c"
    form, headers = server.seen[0]
    assert form["grant_type"].endswith("jwt-bearer") and form["assertion"] == "id-jag"
    assert headers["Authorization"].startswith("Basic ")


def test_dpop_binds_the_token_and_sends_fresh_proofs(server):
    seen_mcp = []
    server.remove(responses.POST, MCP)
    server.add_callback(responses.POST, MCP, callback=lambda r: (
        seen_mcp.append(dict(r.headers)),
        (401, {"WWW-Authenticate": f'DPoP resource_metadata="{PRM}"'}, "") if "Authorization" not in r.headers
        else (200, {}, "{}"))[1])
    key = DPoPKey()
    auth = OAuth(grant=ClientCredentials("id", "s"), dpop=key)
    requests.post(MCP, auth=auth)
    requests.post(MCP + "?x=1", auth=auth)
    _, token_headers = server.seen[0]
    header, claims = decode(token_headers["DPoP"])
    assert header["typ"] == "dpop+jwt" and header["jwk"] == key.jwk and "d" not in header["jwk"]
    assert claims["htm"] == "POST" and claims["htu"] == ISSUER + "/token"
    proofs = [h["DPoP"] for h in seen_mcp if "DPoP" in h]
    assert len(proofs) == 2 and proofs[0] != proofs[1]
    _, first = decode(proofs[0])
    _, second = decode(proofs[1])
    assert seen_mcp[1]["Authorization"] == "DPoP t1"
    assert first["ath"] == base64.urlsafe_b64encode(hashlib.sha256(b"t1").digest()).rstrip(b"=").decode()
    assert second["htu"] == MCP  # no query string
    assert first["jti"] != second["jti"]


def test_dpop_nonces_from_the_server_are_used_once_asked_for(server):
    calls = []

    def mcp(request):
        calls.append(dict(request.headers))
        if "Authorization" not in request.headers:
            return 401, {"WWW-Authenticate": f'DPoP resource_metadata="{PRM}"'}, ""
        _, claims = decode(request.headers["DPoP"])
        if claims.get("nonce") != "n1":
            return 401, {"WWW-Authenticate": 'DPoP error="use_dpop_nonce"', "DPoP-Nonce": "n1"}, ""
        return 200, {}, "{}"

    server.remove(responses.POST, MCP)
    server.add_callback(responses.POST, MCP, callback=mcp)
    assert requests.post(MCP, auth=OAuth(grant=ClientCredentials("id", "s"), dpop=True)).status_code == 200
    assert len(calls) == 3
    assert len(server.seen) == 1  # the nonce challenge did not cause a new authorization


def test_jwk_thumbprint_matches_rfc7638_example():
    jwk = {
        "kty": "RSA", "e": "AQAB",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3"
             "oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu"
             "6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJ"
             "zKnqDKgw",
    }
    assert thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


def test_signatures_verify_for_each_key_type():
    from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa

    for key in (ec.generate_private_key(ec.SECP384R1()), rsa.generate_private_key(65537, 2048),
                ed25519.Ed25519PrivateKey.generate()):
        token = sign({"a": 1}, key)
        signing_input, signature = token.rsplit(".", 1)
        raw = b64d(signature)
        if isinstance(key, ec.EllipticCurvePrivateKey):
            der = utils.encode_dss_signature(int.from_bytes(raw[:48], "big"), int.from_bytes(raw[48:], "big"))
            key.public_key().verify(der, signing_input.encode(), ec.ECDSA(hashes.SHA384()))
        elif isinstance(key, rsa.RSAPrivateKey):
            key.public_key().verify(raw, signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        else:
            key.public_key().verify(raw, signing_input.encode())
        assert public_jwk(key)["kty"] in ("EC", "RSA", "OKP")
