"""A Streamable HTTP MCP server (official MCP Python SDK) that is an OAuth protected resource.

The SDK's own resource-server side: its bearer middleware answers 401 with a
``WWW-Authenticate`` naming its protected resource metadata (served by the SDK too), which
names the authorization server given by ``--issuer``. A token is checked by the issuer's
introspection endpoint (RFC 7662, ``ISSUER/introspect``), and must have been issued for this
server (``validate_token_resource``).

Tools: ``add(a, b)`` -> ``a + b``.
``python tests/servers/sdk_oauth_server.py --issuer http://127.0.0.1:PORT``: prints
``LISTENING http://127.0.0.1:PORT/mcp`` once it serves (a free loopback port).
"""

from __future__ import annotations

import argparse
import socket
import sys
import warnings

import anyio
import httpx
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

warnings.filterwarnings("ignore", category=DeprecationWarning)


class Introspection:
    """The SDK's ``TokenVerifier``, answered by the authorization server (RFC 7662)."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    async def verify_token(self, token: str) -> AccessToken | None:
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.post(self.endpoint, data={"token": token})
        info = response.json() if response.status_code == 200 else {}
        if not info.get("active"):
            return None
        return AccessToken(token=token, client_id=info["client_id"], scopes=info.get("scope", "").split(),
                           expires_at=info.get("exp"), resource=info.get("aud"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issuer", required=True, help="the authorization server's URL")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = pick a free one)")
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    mcp = MCPServer(
        "sdk-oauth",
        token_verifier=Introspection(args.issuer.rstrip("/") + "/introspect"),
        auth=AuthSettings(issuer_url=args.issuer, resource_server_url=url, validate_token_resource=True),
    )

    @mcp.tool(structured_output=False)
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    anyio.run(serve, mcp, sock, url)


async def serve(mcp: MCPServer, sock: socket.socket, url: str) -> None:
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(mcp.streamable_http_app(), log_level="warning", lifespan="on"))

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.01)
        sys.stdout.write(f"LISTENING {url}\n")
        sys.stdout.flush()

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    main()
