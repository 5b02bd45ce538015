"""The errors of the OAuth layer, all under ``AuthorizationError`` (an ``MCPError``)::

    MCPError
    └── AuthorizationError        authorization with the server's authorization server failed
        ├── DiscoveryError        metadata missing, invalid, insecure or for another server
        ├── RegistrationError     no client ID could be obtained
        └── TokenRequestError     the token endpoint refused (``error``, ``error_description``)

They live in the one tree in ``mcpclient._core.exceptions``; this module names them for the auth
package. Messages never contain tokens, client secrets, authorization codes or PKCE verifiers.
"""

from __future__ import annotations

from .._core.exceptions import AuthorizationError, DiscoveryError, RegistrationError, TokenRequestError

__all__ = ["AuthorizationError", "DiscoveryError", "RegistrationError", "TokenRequestError"]
