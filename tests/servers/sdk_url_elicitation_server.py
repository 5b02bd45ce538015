"""A stdio MCP server built with the official MCP Python SDK (``mcp`` 2.3.0) for URL-mode
elicitation: the -32042 error and ``notifications/elicitation/complete``.

Tools:

* ``connect_bank``: fails with -32042 (``UrlElicitationRequiredError``) naming one URL
  elicitation, ``el-bank``.
* ``open_link``: asks the client ``elicitation/create`` in URL mode (``el-link``); if the
  user accepted, sends ``notifications/elicitation/complete`` for it and reports the action.

Run with ``python tests/servers/sdk_url_elicitation_server.py`` (stdio; the client must use the
handshake era, in which servers may send requests).
"""

from __future__ import annotations

import logging
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp.types import ElicitRequestURLParams

BANK_URL = "https://bank.example.com/connect?state=abc"
LINK_URL = "https://docs.example.com/consent"


def build_server() -> MCPServer:
    mcp = MCPServer("sdk-url-elicitation", version="1.0.0")

    @mcp.tool(structured_output=False)
    def connect_bank() -> str:
        """Needs the user to connect their bank first (-32042)."""
        raise UrlElicitationRequiredError(
            [ElicitRequestURLParams(message="Connect your bank account", url=BANK_URL, elicitation_id="el-bank")]
        )

    @mcp.tool(structured_output=False)
    async def open_link(ctx: Context) -> str:
        """Ask the user to open a URL; tell the client when the out-of-band step is done."""
        result = await ctx.elicit_url("Please review the consent page", LINK_URL, "el-link")
        if result.action == "accept":
            await ctx.session.send_elicit_complete("el-link")
        return result.action

    return mcp


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    build_server().run("stdio")
