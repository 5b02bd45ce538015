"""The conformance suite's ``auth/*`` client scenarios, driven through ``mcpclient.auth.OAuth``.

``tests/conformance/client.py`` hands every ``auth/`` scenario to :func:`run`; this file can
also be run on its own: ``python tests/conformance/auth_scenarios.py URL`` with the scenario in
``MCP_CONFORMANCE_SCENARIO`` and its data in ``MCP_CONFORMANCE_CONTEXT``, as the suite does.

The suite's mock authorization servers redirect to ``http://localhost:3000/callback``, where
nothing listens: ``HeadlessRedirect`` (a replaceable redirect handler, as a user could write)
reads the code from the authorization endpoint's ``Location`` header instead of a browser.
Everything else is the library's own behaviour, configured per scenario only where a user
would configure it (pre-registered credentials, a grant, DPoP).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import requests

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcpclient.auth import (  # noqa: E402
    ClientCredentials,
    EnterpriseManaged,
    JWTBearer,
    OAuth,
    RedirectHandler,
)

log = logging.getLogger("conformance.auth")

CALLBACK = "http://localhost:3000/callback"
#: The Client ID Metadata Document URL the suite expects from a CIMD-capable client.
CIMD_URL = "https://conformance-test.local/client-metadata.json"


class HeadlessRedirect(RedirectHandler):
    """Follows the authorization URL without a browser and returns its redirect target."""

    redirect_uri = CALLBACK  # type: ignore[assignment]

    def authorize(self, authorization_url: str, *, timeout: float | None = None) -> str:
        response = requests.get(authorization_url, allow_redirects=False, timeout=10)
        location = response.headers.get("Location")
        if not location:
            raise RuntimeError(f"the authorization endpoint answered {response.status_code} without a redirect")
        return urljoin(authorization_url, location)


def build_auth(scenario: str, context: dict[str, Any]) -> OAuth:
    """The ``OAuth`` a user would configure for this scenario's server."""
    name = scenario.removeprefix("auth/")
    common: dict[str, Any] = {"client_name": "mcpclient-conformance", "timeout": 10.0}
    if name == "client-credentials-basic":
        return OAuth(grant=ClientCredentials(context["client_id"], context["client_secret"]), **common)
    if name == "client-credentials-jwt":
        grant = ClientCredentials(
            context["client_id"],
            private_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm"),
        )
        return OAuth(grant=grant, **common)
    if name == "enterprise-managed-authorization":
        grant = EnterpriseManaged(
            id_token=context["idp_id_token"],
            idp_token_endpoint=context["idp_token_endpoint"],
            idp_client_id=context["idp_client_id"],
            client_id=context["client_id"],
            client_secret=context["client_secret"],
        )
        return OAuth(grant=grant, **common)
    if name == "wif-jwt-bearer":
        return OAuth(grant=JWTBearer(context["valid_jwt"], client_id=context["client_id"]), **common)
    interactive: dict[str, Any] = {"redirect_handler": HeadlessRedirect(), **common}
    if name == "pre-registration":
        return OAuth(client_id=context["client_id"], client_secret=context["client_secret"], **interactive)
    if name in ("dpop", "dpop-nonce"):
        return OAuth(dpop=True, client_metadata_url=CIMD_URL, **interactive)
    return OAuth(client_metadata_url=CIMD_URL, **interactive)


def run(url: str, scenario: str, context: dict[str, Any], version: str) -> None:
    """Connect with OAuth, list the tools and call one, like the suite's reference client."""
    import mcpclient

    auth = build_auth(scenario, context)
    # A dated (handshake-era) spec version means the legacy protocol, as in client.py.
    protocol = "legacy" if version and version < "2026" else "auto"
    try:
        with mcpclient.connect(url, http=mcpclient.HTTP(auth=auth), timeout=20.0, protocol=protocol) as client:
            tools = client.list_tools()
            if tools and scenario != "auth/client-credentials-jwt":
                client.call_tool(tools[0].name, {})
    finally:
        auth.close()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=os.environ.get("MCP_CONFORMANCE_LOG", "INFO"), stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    try:
        run(argv[-1], scenario, context, version)
    except Exception as exc:  # the suite reads the exit code; the message goes to stderr
        log.error("%s failed: %s: %s", scenario, type(exc).__name__, exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
