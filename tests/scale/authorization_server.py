"""A small OAuth authorization server on 127.0.0.1 for the travel tests: client credentials only.

It serves its metadata (RFC 8414), a token endpoint for the ``client_credentials`` grant of
one pre-registered client (``client_secret_basic`` or ``client_secret_post``, or
``private_key_jwt`` when made with the client's public key: the assertion's ES256 signature
and claims are checked), and RFC 7662 introspection, which the SDK resource server
(tests/servers/sdk_oauth_server.py) asks. A DPoP proof sent to the token endpoint (RFC 9449)
is checked (signature by the key in its header, ``htm``, ``htu``) and its key's RFC 7638
thumbprint recorded; the token is still issued as ``Bearer``, as an authorization server that
does not bind tokens does, because the SDK resource server takes only bearer tokens. It
records every token it issued (with how the client authenticated and the proof's thumbprint),
so a test can tell which process fetched a token, with which key, and check that none travelled.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote

CLIENT_ID = "worker-client"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def b64d(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def verified_es256(jwt: str, public_key: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The header and claims of an ES256 compact JWS signed by ``public_key``, else None."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, utils

    try:
        header, claims, signature = jwt.split(".")
        raw = b64d(signature)
        der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        public_key.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
        found = json.loads(b64d(header)), json.loads(b64d(claims))
    except (ValueError, InvalidSignature):
        return None
    return found if found[0].get("alg") == "ES256" else None


def jwk_key(jwk: dict[str, str]) -> Any:
    """The EC P-256 public key of a JWK."""
    from cryptography.hazmat.primitives.asymmetric import ec

    x, y = (int.from_bytes(b64d(jwk[k]), "big") for k in ("x", "y"))
    return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()


def jwk_thumbprint(jwk: dict[str, str]) -> str:
    """RFC 7638, computed here (not with the client's code under test)."""
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    return b64e(hashlib.sha256(canonical.encode()).digest())


class AuthorizationServer:
    """Start with ``start()``, end with ``stop()``; ``issued`` is every token handed out."""

    def __init__(self, public_key: Any = None) -> None:
        self.secret = "secret-" + uuid.uuid4().hex
        self.public_key = public_key  # the client's, for private_key_jwt
        self.issued: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> AuthorizationServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "token_endpoint": f"{self.url}/token",
            "introspection_endpoint": f"{self.url}/introspect",
            "response_types_supported": ["code"],
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]
            + (["private_key_jwt"] if self.public_key is not None else []),
            "dpop_signing_alg_values_supported": ["ES256"],
        }

    def authenticated(self, form: dict[str, str], authorization: str | None) -> str | None:
        """How the client authenticated (``secret`` or ``private_key_jwt``), None if it did not."""
        if form.get("client_assertion_type") == ASSERTION_TYPE and self.public_key is not None:
            found = verified_es256(form.get("client_assertion", ""), self.public_key)
            claims = found[1] if found else {}
            good = claims.get("iss") == claims.get("sub") == CLIENT_ID and claims.get("aud") == self.url
            return "private_key_jwt" if good and claims.get("exp", 0) > time.time() else None
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization.startswith("Basic "):
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
            client_id, secret = unquote(client_id), unquote(secret)
        return "secret" if (client_id, secret) == (CLIENT_ID, self.secret) else None

    def proof_thumbprint(self, proof: str) -> str | None:
        """The thumbprint of a valid DPoP proof's key for this token endpoint, None if invalid."""
        try:
            jwk = json.loads(b64d(proof.split(".")[0]))["jwk"]
            found = verified_es256(proof, jwk_key(jwk))
        except (ValueError, KeyError, TypeError):
            return None
        if found is None or found[0].get("typ") != "dpop+jwt":
            return None
        claims = found[1]
        return jwk_thumbprint(jwk) if (claims.get("htm"), claims.get("htu")) == ("POST", f"{self.url}/token") else None

    def token(self, form: dict[str, str], headers: Any) -> tuple[int, dict[str, Any]]:
        how = self.authenticated(form, headers.get("Authorization"))
        if how is None:
            return 401, {"error": "invalid_client"}
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        jkt = None
        if headers.get("DPoP"):
            jkt = self.proof_thumbprint(headers["DPoP"])
            if jkt is None:
                return 400, {"error": "invalid_dpop_proof"}
        token = "token-" + uuid.uuid4().hex
        with self._lock:
            self.issued.append({"token": token, "resource": form.get("resource"), "exp": int(time.time()) + 3600,
                                "auth": how, "jkt": jkt})
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600}

    def introspect(self, form: dict[str, str]) -> dict[str, Any]:
        with self._lock:
            found = next((entry for entry in self.issued if entry["token"] == form.get("token")), None)
        if found is None:
            return {"active": False}
        return {"active": True, "client_id": CLIENT_ID, "scope": "", "exp": found["exp"], "aud": found["resource"]}


def _handler(server: AuthorizationServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.startswith("/.well-known/oauth-authorization-server"):
                self._answer(200, server.metadata())
            else:
                self._answer(404, {"error": "not_found"})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            form = {key: values[0] for key, values in parse_qs(body).items()}
            if self.path == "/token":
                self._answer(*server.token(form, self.headers))
            elif self.path == "/introspect":
                self._answer(200, server.introspect(form))
            else:
                self._answer(404, {"error": "not_found"})

        def _answer(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
