"""OAuth 2.1 authorization for remote MCP servers, as a ``requests`` auth object.

    >>> from mcpclient import HTTP, connect
    >>> from mcpclient.auth import OAuth, FileTokenStore
    >>> client = connect("https://mcp.example.com/mcp", http=HTTP(auth=OAuth(store=FileTokenStore())))

``OAuth`` discovers the authorization server, registers, authorizes in the browser (or asks
for the redirect URL in notebooks and headless sessions), stores and refreshes tokens and
steps up scopes. Machine-to-machine grants (``ClientCredentials``, ``JWTBearer`` for workload
identity, ``EnterpriseManaged``) and DPoP (``dpop=True``) need no user; JWT signing needs the
``jwt`` extra (``pip install 'mcpclient[jwt]'``).

``TokenProvider`` is the base of a ``token_provider=`` that is told how long it may take.
"""

from ._dpop import DPoPKey
from ._errors import AuthorizationError, DiscoveryError, RegistrationError, TokenRequestError
from ._m2m import ClientCredentials, EnterpriseManaged, Grant, GrantContext, JWTBearer
from ._oauth import OAuth
from ._redirect import LoopbackRedirectHandler, PasteRedirectHandler, RedirectHandler, default_redirect_handler
from ._tokens import ClientInfo, FileTokenStore, MemoryTokenStore, Tokens, TokenStore
from ..transports._token import TokenProvider

__all__ = [
    "AuthorizationError",
    "ClientCredentials",
    "ClientInfo",
    "DPoPKey",
    "DiscoveryError",
    "EnterpriseManaged",
    "FileTokenStore",
    "Grant",
    "GrantContext",
    "JWTBearer",
    "LoopbackRedirectHandler",
    "MemoryTokenStore",
    "OAuth",
    "PasteRedirectHandler",
    "RedirectHandler",
    "RegistrationError",
    "TokenProvider",
    "TokenRequestError",
    "TokenStore",
    "Tokens",
    "default_redirect_handler",
]
