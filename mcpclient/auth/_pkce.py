"""PKCE (RFC 7636, S256 only) and the ``state`` parameter."""

from __future__ import annotations

import base64
import hashlib
import secrets

__all__ = ["b64url", "make_state", "make_verifier", "s256_challenge"]


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515 appendix C)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def make_verifier() -> str:
    """A fresh code verifier: 86 characters from the unreserved set (RFC 7636 section 4.1)."""
    return b64url(secrets.token_bytes(64))


def s256_challenge(verifier: str) -> str:
    """``BASE64URL(SHA256(verifier))`` (RFC 7636 section 4.2)."""
    return b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def make_state() -> str:
    """An unguessable ``state`` value binding the authorization response to this request."""
    return b64url(secrets.token_bytes(32))
