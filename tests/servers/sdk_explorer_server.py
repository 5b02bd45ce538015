"""A stdio MCP server (official MCP Python SDK, ``MCPServer``) for the notebook explorer's tests.

Tools:
  ``cities(region, limit=3, capitals_only=False)`` -> structured list of flat records
      (``{"result": [{"name", "country", "population", "capital"}, ...]}``) with a text block;
      ``region`` is an enum (``europe``, ``asia``).
  ``wait(seconds=30.0, steps=30)`` -> sleeps in steps, reporting progress after each one;
      cancellation interrupts it; returns ``"waited N steps"``.
  ``picture()`` -> one 1x1 PNG image block.
  ``hostile(note)`` -> a tool whose description, argument title and result (text and a record)
      carry markup that would run script if a page used it as HTML; each payload sets
      ``window.__mcpx_pwned``.
  ``ODD_NAME`` (a bidi override, an OSC 52 clipboard write, a newline and quotes in the name)
      -> ``"odd"``.

``python tests/servers/sdk_explorer_server.py``.
"""

from __future__ import annotations

import logging
import struct
import warnings
import zlib
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from pydantic import BaseModel, Field

warnings.filterwarnings("ignore", category=DeprecationWarning)

ODD_NAME = "odd\u202eexe.txt\x1b]52;c;aGk=\x07\n')#"
PAYLOAD = '<img src=x onerror="window.__mcpx_pwned=1"><script>window.__mcpx_pwned=2</script>'

CITIES = [
    ("Oslo", "Norway", 709_000, True, "europe"),
    ("Bergen", "Norway", 291_000, False, "europe"),
    ("Lyon", "France", 522_000, False, "europe"),
    ("Paris", "France", 2_102_000, True, "europe"),
    ("Osaka", "Japan", 2_750_000, False, "asia"),
    ("Tokyo", "Japan", 14_090_000, True, "asia"),
]


class City(BaseModel):
    name: str
    country: str
    population: int
    capital: bool


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\x20\x80\xc0")) + chunk(b"IEND", b"")


def build_server() -> MCPServer:
    mcp = MCPServer("sdk-explorer-server", version="1.0.0")

    @mcp.tool()
    def cities(
        region: Annotated[Literal["europe", "asia"], Field(description="Where the cities are")],
        limit: Annotated[int, Field(description="How many cities at most", ge=1, le=10)] = 3,
        capitals_only: bool = False,
    ) -> list[City]:
        """Cities of a region, largest first."""
        found = [City(name=n, country=c, population=p, capital=k) for n, c, p, k, r in CITIES
                 if r == region and (k or not capitals_only)]
        return sorted(found, key=lambda city: -city.population)[:limit]

    @mcp.tool(structured_output=False)
    async def wait(ctx: Context, seconds: float = 30.0, steps: int = 30) -> str:
        """Wait `seconds` in `steps` steps, reporting progress after each step."""
        steps = max(1, steps)
        for i in range(steps):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
        return f"waited {steps} steps"

    @mcp.tool()
    def picture() -> Image:
        """A tiny 1x1 PNG image."""
        return Image(data=_png(), format="png")

    @mcp.tool(description="Says hello " + PAYLOAD)
    def hostile(note: Annotated[str, Field(title="Note " + PAYLOAD, description="text " + PAYLOAD)] = "") -> list[dict[str, str]]:
        return [{"cell": PAYLOAD, "note": note}]

    def odd() -> str:
        return "odd"

    mcp.add_tool(odd, name=ODD_NAME, structured_output=False)
    return mcp


if __name__ == "__main__":
    logging.disable(logging.WARNING)  # the SDK warns of the odd name on stderr, which a notebook shows
    build_server().run()
