"""Compact JWS signing on ``cryptography`` (the ``jwt`` extra): client assertions and DPoP proofs.

Hand-written rather than a JWT library because the OAuth layer only ever *signs* (it never
verifies a token), and needs public JWKs and RFC 7638 thumbprints for DPoP, which would need
extra glue around PyJWT anyway; the whole thing is the few functions below.
Supported keys: EC P-256/P-384/P-521 (ES256/384/512), RSA (RS256/384/512, PS256/384/512)
and Ed25519 (EdDSA).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from typing import Any

from ._pkce import b64url

__all__ = [
    "TravellingKey", "client_assertion", "default_algorithm", "generate_key", "load_private_key", "public_jwk", "sign",
    "thumbprint", "travelling",
]

_INSTALL_HINT = "JWT signing needs the 'cryptography' package: pip install 'mcpclient[jwt]'"


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa, utils
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(_INSTALL_HINT) from exc
    return hashes, serialization, ec, ed25519, padding, rsa, utils


def load_private_key(key: Any, password: bytes | None = None) -> Any:
    """A ``cryptography`` private key from PEM text/bytes, or ``key`` itself if already one."""
    if not isinstance(key, (str, bytes)):
        return key
    _, serialization, *_ = _crypto()
    data = key.encode("ascii") if isinstance(key, str) else key
    try:
        return serialization.load_pem_private_key(data, password=password)
    except (ValueError, TypeError) as exc:
        raise ValueError("the private key is not a readable PEM private key") from exc


class TravellingKey:
    """A private key as it travels in a pickle (a grant or a ``DPoPKey`` passed to a worker
    process): its PKCS#8 PEM, unencrypted, so the receiving process can sign with it.

    The pickle then holds the key, as it holds a client secret: it is as secret as the key,
    and goes only where the engine sends its tasks. Its repr never shows the key."""

    __slots__ = ("pem",)

    def __init__(self, pem: bytes) -> None:
        self.pem = pem

    def __repr__(self) -> str:
        return "<TravellingKey (private key, not shown)>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (TravellingKey, (self.pem,))

    def load(self) -> Any:
        """The ``cryptography`` private key again."""
        return load_private_key(self.pem)


def travelling(key: Any) -> TravellingKey:
    """``key`` (a ``cryptography`` private key) as it travels; ``TypeError`` naming why when it
    cannot be exported (a key held in a hardware module, say)."""
    _, serialization, *_ = _crypto()
    try:
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    except Exception as exc:
        raise TypeError(
            f"the private key (a {type(key).__name__}) cannot travel to another process: it cannot be exported "
            f"as PEM ({type(exc).__name__}); create the grant in the worker"
        ) from exc
    return TravellingKey(pem)


def generate_key() -> Any:
    """A new EC P-256 key (for DPoP)."""
    _, _, ec, *_ = _crypto()
    return ec.generate_private_key(ec.SECP256R1())


def default_algorithm(key: Any) -> str:
    """The JWS ``alg`` for ``key``: ES256/384/512 by curve, RS256 for RSA, EdDSA for Ed25519."""
    _, _, ec, ed25519, _, rsa, _ = _crypto()
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}[key.curve.name]
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise ValueError(f"unsupported private key type {type(key).__name__}")


def _int_bytes(value: int, length: int) -> bytes:
    return value.to_bytes(length, "big")


def public_jwk(key: Any) -> dict[str, str]:
    """The public JWK of a private key (members in RFC 7638 order)."""
    _, _, ec, ed25519, _, rsa, _ = _crypto()
    _, serialization, *_ = _crypto()
    if isinstance(key, ec.EllipticCurvePrivateKey):
        numbers = key.public_key().public_numbers()
        size = (key.curve.key_size + 7) // 8
        crv = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}[key.curve.name]
        return {"crv": crv, "kty": "EC", "x": b64url(_int_bytes(numbers.x, size)), "y": b64url(_int_bytes(numbers.y, size))}
    if isinstance(key, rsa.RSAPrivateKey):
        numbers = key.public_key().public_numbers()
        e = numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")
        n = numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")
        return {"e": b64url(e), "kty": "RSA", "n": b64url(n)}
    if isinstance(key, ed25519.Ed25519PrivateKey):
        raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"crv": "Ed25519", "kty": "OKP", "x": b64url(raw)}
    raise ValueError(f"unsupported private key type {type(key).__name__}")


def thumbprint(jwk: dict[str, str]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK."""
    required = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}[jwk["kty"]]
    canonical = json.dumps({k: jwk[k] for k in required}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def sign(claims: dict[str, Any], key: Any, *, alg: str | None = None, header: dict[str, Any] | None = None) -> str:
    """Sign ``claims`` as a compact JWS with ``key``; ``header`` adds protected header members."""
    hashes, _, ec, ed25519, padding, rsa, utils = _crypto()
    alg = alg or default_algorithm(key)
    protected = {"alg": alg, **(header or {})}
    signing_input = (
        b64url(json.dumps(protected, separators=(",", ":")).encode("utf-8"))
        + "."
        + b64url(json.dumps(claims, separators=(",", ":")).encode("utf-8"))
    ).encode("ascii")
    digests: dict[str, Any] = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}
    digest = digests.get(alg[-3:], hashes.SHA256)
    if alg.startswith("ES") and isinstance(key, ec.EllipticCurvePrivateKey):
        der = key.sign(signing_input, ec.ECDSA(digest()))
        r, s = utils.decode_dss_signature(der)
        size = (key.curve.key_size + 7) // 8
        signature = _int_bytes(r, size) + _int_bytes(s, size)
    elif alg.startswith("RS") and isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(signing_input, padding.PKCS1v15(), digest())
    elif alg.startswith("PS") and isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(
            signing_input, padding.PSS(mgf=padding.MGF1(digest()), salt_length=digest().digest_size), digest()
        )
    elif alg == "EdDSA" and isinstance(key, ed25519.Ed25519PrivateKey):
        signature = key.sign(signing_input)
    else:
        raise ValueError(f"algorithm {alg!r} does not fit a {type(key).__name__}")
    return signing_input.decode("ascii") + "." + b64url(signature)


def client_assertion(client_id: str, audience: str, key: Any, *, alg: str | None = None, lifetime: int = 300) -> str:
    """A ``private_key_jwt`` client assertion (RFC 7523 section 3): iss = sub = client_id."""
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + lifetime,
        "jti": b64url(secrets.token_bytes(16)),
    }
    return sign(claims, key, alg=alg, header={"typ": "JWT"})
