"""The errors of the OAuth layer, all under ``AuthorizationError`` (an ``MCPError``)::

    MCPError
    └── AuthorizationError        authorization with the server's authorization server failed
        ├── DiscoveryError        metadata missing, invalid, insecure or for another server
        ├── RegistrationError     no client ID could be obtained
        └── TokenRequestError     the token endpoint refused (``error``, ``error_description``)

Messages never contain tokens, client secrets, authorization codes or PKCE verifiers.
"""

from __future__ import annotations

from typing import Any

from .._exceptions import MCPError

__all__ = ["AuthorizationError", "DiscoveryError", "RegistrationError", "TokenRequestError"]


class AuthorizationError(MCPError):
    """Authorization failed; no token was sent to the MCP server.

    ``error`` is the OAuth error code when the authorization server sent one (e.g.
    ``access_denied``), ``url`` the address involved, without query string.
    """

    def __init__(self, message: str, *, error: str | None = None, url: str | None = None) -> None:
        self.error = error
        self.url = url
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), str(self), self.error, self.url))


def _rebuild(cls: type[AuthorizationError], message: str, error: Any, url: Any) -> AuthorizationError:
    return cls(message, error=error, url=url)


class DiscoveryError(AuthorizationError):
    """Protected resource or authorization server metadata is missing, invalid or unsafe."""


class RegistrationError(AuthorizationError):
    """No client ID: pre-registered, metadata document and dynamic registration all failed."""


class TokenRequestError(AuthorizationError):
    """The token endpoint refused the request.

    ``error`` and ``error_description`` are the server's (RFC 6749 section 5.2);
    ``status_code`` is the HTTP status.
    """

    def __init__(
        self,
        message: str,
        *,
        error: str | None = None,
        error_description: str | None = None,
        status_code: int | None = None,
        url: str | None = None,
    ) -> None:
        self.error_description = error_description
        self.status_code = status_code
        super().__init__(message, error=error, url=url)

    def __reduce__(self) -> Any:
        return (
            _rebuild_token_error,
            (str(self), self.error, self.error_description, self.status_code, self.url),
        )


def _rebuild_token_error(message: str, error: Any, description: Any, status: Any, url: Any) -> TokenRequestError:
    return TokenRequestError(message, error=error, error_description=description, status_code=status, url=url)
