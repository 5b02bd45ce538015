"""An MCP server with vendor methods, built with the official MCP Python SDK (stdio only).

What a server extension looks like to mcpclient's open seam (issue #29): custom requests and
notifications both ways, and tools that report what the request carried. Dual era, as the
SDK's stdio loop is: the first request decides (``initialize``: the handshake era;
``server/discover``: 2026-07-28).

Requests (low-level ``Server.add_request_handler``):
  ``acme/echo`` -> ``{"params": <params without _meta>, "meta": <the request's _meta>}``.
  ``acme/hellos`` -> ``{"hellos": [<params of each notifications/acme/hello so far>]}``.
  ``resources/list`` -> five resources ``acme://r/0``..``acme://r/4``, two a page (cursors
      ``"2"``, ``"4"``), so a listing takes three pages.
Notifications taken: ``notifications/acme/hello`` (recorded for ``acme/hellos``).

Tools:
  ``meta()`` -> the tool call's ``_meta`` as JSON text (keys sorted).
  ``tick(n=3)`` -> sends ``notifications/acme/tick`` ``{"i": i}`` for i in 1..n on the call's
      stream, then returns ``"ticked"``.
  ``confirm(question)`` -> asks the client the vendor request ``acme/confirm``
      ``{"question": ...}`` (handshake era only: the 2026 era has no server requests) and
      returns the result as JSON text.
  ``client_caps()`` -> the client capabilities the server saw (handshake: those of
      ``initialize``; 2026: those of this request's ``_meta``), as JSON text.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import mcp.types as types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import ConfigDict

warnings.filterwarnings("ignore", category=DeprecationWarning)

class OpenParams(types.RequestParams):
    model_config = ConfigDict(extra="allow")


class OpenNotificationParams(types.NotificationParams):
    model_config = ConfigDict(extra="allow")


HELLOS: list[dict[str, Any]] = []


def _dump(model: Any) -> Any:
    if model is None:
        return None
    if isinstance(model, dict):
        return model
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def build_server() -> MCPServer:
    mcp = MCPServer("sdk-vendor-server")
    lowlevel = mcp._lowlevel_server  # no public accessor; needed for custom methods

    async def on_echo(ctx: Any, params: OpenParams) -> dict[str, Any]:
        dumped = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        meta = dumped.pop("_meta", None)
        return {"params": dumped, "meta": meta}

    async def on_hellos(ctx: Any, params: OpenParams) -> dict[str, Any]:
        return {"hellos": list(HELLOS)}

    async def on_hello(ctx: Any, params: OpenNotificationParams) -> None:
        dumped = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        dumped.pop("_meta", None)
        HELLOS.append(dumped)

    async def on_list_resources(ctx: Any, params: types.PaginatedRequestParams) -> types.ListResourcesResult:
        start = int(params.cursor or 0)
        resources = [types.Resource(uri=f"acme://r/{i}", name=f"r{i}") for i in range(start, min(start + 2, 5))]
        following = start + 2
        return types.ListResourcesResult(resources=resources, next_cursor=str(following) if following < 5 else None)

    lowlevel.add_request_handler("resources/list", types.PaginatedRequestParams, on_list_resources)
    lowlevel.add_request_handler("acme/echo", OpenParams, on_echo)
    lowlevel.add_request_handler("acme/hellos", OpenParams, on_hellos)
    lowlevel.add_notification_handler("notifications/acme/hello", OpenNotificationParams, on_hello)

    # The request-scoped channel (the SDK has no public door for off-spec messages from a
    # tool): notifications and requests ride the calling request's stream.

    @mcp.tool(name="meta", description="The call's _meta, as JSON")
    def meta_tool(ctx: Context) -> str:
        return json.dumps(_dump(ctx.request_context.meta) or {}, sort_keys=True)

    @mcp.tool(description="Send n vendor notifications on the call's stream")
    async def tick(ctx: Context, n: int = 3) -> str:
        for i in range(1, n + 1):
            await ctx.session._request_outbound.notify("notifications/acme/tick", {"i": i})
        return "ticked"

    @mcp.tool(description="Ask the client the vendor request acme/confirm")
    async def confirm(ctx: Context, question: str) -> str:
        result = await ctx.session._request_outbound.send_raw_request("acme/confirm", {"question": question})
        return json.dumps(result, sort_keys=True)

    @mcp.tool(description="The client capabilities this server saw")
    def client_caps(ctx: Context) -> str:
        return json.dumps(_dump(ctx.client_capabilities) or {}, sort_keys=True)

    return mcp


def main() -> int:
    build_server().run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
