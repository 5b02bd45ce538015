"""DPoP proof-of-possession (RFC 9449): one key per ``OAuth`` object, proofs, server nonces."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .._core import origin as _origin
from . import _jwt
from ._pkce import b64url

__all__ = ["DPoPKey"]


def _nonce_key(url: str) -> _origin.Origin | None:
    # Nonces belong to the origin the request really went to (None: an ambiguous URL, no nonce).
    return _origin.origin_or_none(url)


def _htu(url: str) -> str:
    # RFC 9449 section 4.2: the target URI without query and fragment.
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


class DPoPKey:
    """A DPoP signing key and the nonces servers have handed out, per origin.

    ``key`` is a ``cryptography`` private key or PEM; by default a new EC P-256 key is made
    (kept in memory only, so tokens bound to it die with the process). Thread-safe.

    It pickles (an ``OAuth(dpop=key)`` passed to a worker process) as its key, PKCS#8 PEM (the
    pickle is as secret as the key), and its algorithm: the worker signs its proofs with the
    same key, so a token bound to it that the worker reads from a ``FileTokenStore`` is usable
    there. The nonces servers handed out stay behind (a server hands the worker its own).
    ``OAuth(dpop=True)`` travels as ``True``: each process makes its own key.
    """

    def __init__(self, key: Any = None, *, alg: str | None = None) -> None:
        self._key = _jwt.load_private_key(key) if key is not None else _jwt.generate_key()
        self.alg = alg or _jwt.default_algorithm(self._key)
        self.jwk = _jwt.public_jwk(self._key)
        self.thumbprint = _jwt.thumbprint(self.jwk)
        self._nonces: dict[_origin.Origin, str] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<DPoPKey {self.alg} jkt={self.thumbprint}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_received_key, (_jwt.travelling(self._key), self.alg))

    def proof(self, method: str, url: str, *, access_token: str | None = None) -> str:
        """A fresh proof for one request; with ``access_token`` it carries ``ath``."""
        claims: dict[str, Any] = {
            "jti": b64url(secrets.token_bytes(16)),
            "htm": method.upper(),
            "htu": _htu(url),
            "iat": int(time.time()),
        }
        with self._lock:
            key = _nonce_key(url)
            nonce = self._nonces.get(key) if key is not None else None
        if nonce:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        return _jwt.sign(claims, self._key, alg=self.alg, header={"typ": "dpop+jwt", "jwk": self.jwk})

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Record a ``DPoP-Nonce`` from ``url``'s server; True if it is new."""
        if not nonce:
            return False
        origin = _nonce_key(url)
        if origin is None:
            return False
        with self._lock:
            changed = self._nonces.get(origin) != nonce
            self._nonces[origin] = nonce
        return changed


def _received_key(key: _jwt.TravellingKey, alg: str) -> DPoPKey:
    """Unpickle a ``DPoPKey``: the same key, no nonces."""
    return DPoPKey(key.load(), alg=alg)
