"""A stdio MCP server (official MCP Python SDK) that asks the client's user, for the CLI prompts.

Tools (each returns what the client answered, as text):

* ``form(kind)``: ``elicitation/create`` in form mode with the schema ``SCHEMAS[kind]``;
  returns ``{"action": ..., "content": ...}`` as JSON (sorted keys).
* ``link(url=LINK_URL)``: ``elicitation/create`` in URL mode for ``url``; returns the action.
* ``sample(prompt)``: ``sampling/createMessage``; returns ``reply <text> (<model>)``, or
  ``error <code> <message>`` when the client refused.

Handshake era only (the server sends requests to the client): run the client with the legacy
protocol. ``python tests/servers/sdk_elicit_server.py [--name NAME]``: ``NAME`` (default
``sdk-elicit``) is the ``serverInfo`` name, which the prompts show.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import warnings

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*deprecated as of 2026-07-28.*")

LINK_URL = "https://consent.example.com/approve?session=42"

SCHEMAS: dict[str, dict] = {
    "text": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Your name", "description": "as on your badge", "minLength": 2},
            "email": {"type": "string", "format": "email", "title": "Email"},
            "homepage": {"type": "string", "format": "uri", "title": "Homepage"},
            "birthday": {"type": "string", "format": "date", "title": "Birthday"},
            "meeting": {"type": "string", "format": "date-time", "title": "Meeting"},
        },
        "required": ["name", "email"],
    },
    "numbers": {
        "type": "object",
        "properties": {
            "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
            "ratio": {"type": "number", "title": "Ratio", "minimum": 0, "maximum": 1, "default": 0.5},
        },
        "required": ["age"],
    },
    "flags": {
        "type": "object",
        "properties": {
            "agree": {"type": "boolean", "title": "Agree to the terms"},
            "newsletter": {"type": "boolean", "title": "Newsletter", "default": False},
        },
        "required": ["agree"],
    },
    "choices": {
        "type": "object",
        "properties": {
            "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"]},
            "size": {"type": "string", "title": "Size", "default": "m",
                     "oneOf": [{"const": "s", "title": "Small"}, {"const": "m", "title": "Medium"},
                               {"const": "l", "title": "Large"}]},
            "plan": {"type": "string", "title": "Plan", "enum": ["free", "pro"], "enumNames": ["Free tier", "Pro tier"]},
        },
        "required": ["color"],
    },
    "multi": {
        "type": "object",
        "properties": {
            "toppings": {"type": "array", "title": "Toppings", "minItems": 1,
                         "items": {"type": "string", "enum": ["cheese", "ham", "olives"]}},
            "extras": {"type": "array", "title": "Extras",
                       "items": {"anyOf": [{"const": "napkins", "title": "Napkins"},
                                           {"const": "cutlery", "title": "Cutlery"}]}},
        },
        "required": ["toppings"],
    },
}


def build_server(name: str = "sdk-elicit") -> MCPServer:
    mcp = MCPServer(name, version="1.0.0")

    @mcp.tool(structured_output=False)
    async def form(ctx: Context, kind: str) -> str:
        """Ask the user to fill the form SCHEMAS[kind]; report the answer as JSON."""
        result = await ctx.session.elicit_form(
            f"Please fill in the {kind} form", SCHEMAS[kind], related_request_id=ctx.request_context.request_id
        )
        return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)

    @mcp.tool(structured_output=False)
    async def link(ctx: Context, url: str = LINK_URL) -> str:
        """Ask the user to open ``url``; report the action."""
        result = await ctx.elicit_url("Approve the data export", url, "el-consent")
        return result.action

    @mcp.tool(structured_output=False)
    async def sample(ctx: Context, prompt: str) -> str:
        """Ask the client's LLM; report its reply or the error."""
        try:
            result = await ctx.session.create_message(
                [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
                max_tokens=50, system_prompt="Answer briefly.",
                related_request_id=ctx.request_context.request_id,
            )
        except MCPError as exc:
            return f"error {exc.error.code} {exc.error.message}"
        content = result.content
        blocks = content if isinstance(content, list) else [content]
        return f"reply {''.join(getattr(b, 'text', '') for b in blocks)} ({result.model})"

    return mcp


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="sdk-elicit")
    build_server(parser.parse_args().name).run("stdio")
