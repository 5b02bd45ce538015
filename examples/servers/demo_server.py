"""A small MCP server over stdio, written with the Python standard library only.

It exists so the mcpclient quickstart has something real to talk to, and so
readers can see what the Model Context Protocol looks like on the wire.
Run it by hand and type JSON-RPC messages, one per line::

    $ python examples/servers/demo_server.py
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "me", "version": "0"}}}
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}

How the stdio transport works: the client starts this program, writes one
JSON-RPC message per line to its stdin, and reads one message per line from
its stdout.  Anything meant for humans goes to stderr, never stdout.

The server speaks the initialize-handshake protocol (versions 2024-11-05,
2025-03-26, 2025-06-18 and 2025-11-25): it answers ``initialize`` with the
version the client asked for when it knows it, otherwise with 2025-11-25, and
the client decides whether it can live with that.  Newer clients may first
probe with ``server/discover`` (protocol 2026-07-28); like any server that
does not know a method, this one answers -32601 "Method not found", and the
client falls back to ``initialize``.

What it offers:

* tools ``add`` (numbers ``a`` and ``b`` -> their sum as text) and ``shout``
  (``text`` -> the text in upper case);
* a resource ``demo://readme`` (Markdown) and a resource template
  ``demo://notes/{name}``;
* a prompt ``review`` with one required argument ``code``;
* completions for the ``review`` prompt's ``code`` argument.

Errors follow JSON-RPC: -32700 for a line that is not JSON, -32600 for a
message that is not a valid request, -32601 for an unknown method, -32602 for
bad parameters (unknown tool or prompt, missing or mistyped arguments), and
MCP's -32002 for a resource URI that does not exist.  (A tool that ran but
failed would report ``isError: true`` in its result instead; these two tools
cannot fail once their arguments are valid.)
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

SERVER_INFO = {"name": "demo-server", "version": "1.0.0"}
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"

# JSON-RPC error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002  # MCP's own code for an unknown resource URI


class RpcError(Exception):
    """Raised by a handler to answer the request with a JSON-RPC error."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


# --------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------

TOOLS = [
    {
        "name": "add",
        "description": "Add two numbers and return the sum.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "The first number"},
                "b": {"type": "number", "description": "The second number"},
            },
            "required": ["a", "b"],
        },
    },
    {
        "name": "shout",
        "description": "Return the text in upper case.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to shout"}},
            "required": ["text"],
        },
    },
]


def _is_number(value: Any) -> bool:
    # bool is a subclass of int in Python, but true/false are not numbers in JSON.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def tool_add(args: dict[str, Any]) -> str:
    a, b = args.get("a"), args.get("b")
    if not (_is_number(a) and _is_number(b)):
        raise RpcError(INVALID_PARAMS, "add needs numbers 'a' and 'b'")
    total = a + b
    # Show 5 rather than 5.0 when the sum is a whole number.
    if isinstance(total, float) and total.is_integer():
        total = int(total)
    return str(total)


def tool_shout(args: dict[str, Any]) -> str:
    text = args.get("text")
    if not isinstance(text, str):
        raise RpcError(INVALID_PARAMS, "shout needs a string 'text'")
    return text.upper()


TOOL_FUNCTIONS: dict[str, Callable[[dict[str, Any]], str]] = {"add": tool_add, "shout": tool_shout}


# --------------------------------------------------------------------------
# Resources
# --------------------------------------------------------------------------

README = """# Demo server

This text is the resource `demo://readme`.

* Tools: `add`, `shout`
* Resource template: `demo://notes/{name}`
* Prompt: `review`
"""

RESOURCES = [
    {
        "uri": "demo://readme",
        "name": "readme",
        "title": "Demo server README",
        "description": "What this server offers.",
        "mimeType": "text/markdown",
    }
]

RESOURCE_TEMPLATES = [
    {
        "uriTemplate": "demo://notes/{name}",
        "name": "note",
        "description": "A short note about any name.",
        "mimeType": "text/plain",
    }
]

NOTES_PREFIX = "demo://notes/"


def read_resource(uri: str) -> dict[str, Any]:
    """Return the contents entry for `uri`, or raise -32002 when there is none."""
    if uri == "demo://readme":
        return {"uri": uri, "mimeType": "text/markdown", "text": README}
    if uri.startswith(NOTES_PREFIX) and len(uri) > len(NOTES_PREFIX):
        name = uri[len(NOTES_PREFIX) :]
        return {"uri": uri, "mimeType": "text/plain", "text": f"A note about {name}."}
    raise RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")


# --------------------------------------------------------------------------
# Prompts and completions
# --------------------------------------------------------------------------

PROMPTS = [
    {
        "name": "review",
        "description": "Ask the model to review a piece of code.",
        "arguments": [{"name": "code", "description": "The code to review", "required": True}],
    }
]

# Suggestions offered when a user starts typing the `code` argument.
CODE_SUGGESTIONS = ["def add(a, b):\n    return a + b", "def shout(text):\n    return text.upper()", "print('hello')"]


def get_prompt(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if name != "review":
        raise RpcError(INVALID_PARAMS, f"Unknown prompt: {name}")
    code = arguments.get("code")
    if not isinstance(code, str):
        raise RpcError(INVALID_PARAMS, "The review prompt needs a string argument 'code'")
    return {
        "description": "Code review request",
        "messages": [
            {
                "role": "user",
                "content": {"type": "text", "text": f"Please review this code:\n\n{code}"},
            }
        ],
    }


def complete(ref: dict[str, Any], argument: dict[str, Any]) -> list[str]:
    """Values that start with what the user typed so far (empty when nothing fits)."""
    if ref.get("type") == "ref/prompt" and ref.get("name") == "review" and argument.get("name") == "code":
        typed = argument.get("value", "")
        return [s for s in CODE_SUGGESTIONS if s.startswith(typed)]
    return []


# --------------------------------------------------------------------------
# Request handlers: each takes the request's params and returns its result.
# --------------------------------------------------------------------------


def handle_initialize(params: dict[str, Any]) -> dict[str, Any]:
    requested = params.get("protocolVersion")
    version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "completions": {}},
        "serverInfo": SERVER_INFO,
        "instructions": "A demo server: try the add tool or the review prompt.",
    }


def handle_ping(params: dict[str, Any]) -> dict[str, Any]:
    return {}


# The lists are short, so every list fits on one page: no `nextCursor` is
# returned and any `cursor` the client sends is simply ignored.


def handle_tools_list(params: dict[str, Any]) -> dict[str, Any]:
    return {"tools": TOOLS}


def handle_tools_call(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    function = TOOL_FUNCTIONS.get(name)  # type: ignore[arg-type]
    if function is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "'arguments' must be an object")
    text = function(arguments)
    return {"content": [{"type": "text", "text": text}], "isError": False}


def handle_resources_list(params: dict[str, Any]) -> dict[str, Any]:
    return {"resources": RESOURCES}


def handle_resource_templates_list(params: dict[str, Any]) -> dict[str, Any]:
    return {"resourceTemplates": RESOURCE_TEMPLATES}


def handle_resources_read(params: dict[str, Any]) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise RpcError(INVALID_PARAMS, "'uri' must be a string")
    return {"contents": [read_resource(uri)]}


def handle_prompts_list(params: dict[str, Any]) -> dict[str, Any]:
    return {"prompts": PROMPTS}


def handle_prompts_get(params: dict[str, Any]) -> dict[str, Any]:
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "'arguments' must be an object")
    return get_prompt(params.get("name"), arguments)  # type: ignore[arg-type]


def handle_complete(params: dict[str, Any]) -> dict[str, Any]:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise RpcError(INVALID_PARAMS, "'ref' and 'argument' must be objects")
    values = complete(ref, argument)
    return {"completion": {"values": values, "total": len(values), "hasMore": False}}


HANDLERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "initialize": handle_initialize,
    "ping": handle_ping,
    "tools/list": handle_tools_list,
    "tools/call": handle_tools_call,
    "resources/list": handle_resources_list,
    "resources/templates/list": handle_resource_templates_list,
    "resources/read": handle_resources_read,
    "prompts/list": handle_prompts_list,
    "prompts/get": handle_prompts_get,
    "completion/complete": handle_complete,
}


# --------------------------------------------------------------------------
# The JSON-RPC loop
# --------------------------------------------------------------------------


def handle_message(message: Any) -> dict[str, Any] | None:
    """Turn one incoming message into the reply to send, or None for no reply."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return error_reply(None, INVALID_REQUEST, "Invalid Request")
    if "method" not in message:
        return None  # a response to a request we never send: nothing to do
    if "id" not in message:
        return None  # a notification (e.g. notifications/initialized): never answered

    request_id = message["id"]
    handler = HANDLERS.get(message["method"])
    if handler is None:
        return error_reply(request_id, METHOD_NOT_FOUND, f"Method not found: {message['method']}")
    params = message.get("params") or {}
    if not isinstance(params, dict):
        return error_reply(request_id, INVALID_PARAMS, "'params' must be an object")
    try:
        result = handler(params)
    except RpcError as exc:
        return error_reply(request_id, exc.code, exc.message)
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def serve(stdin: Any = None, stdout: Any = None) -> None:
    """Read messages line by line until stdin closes, writing one reply line per request."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            reply: dict[str, Any] | None = error_reply(None, PARSE_ERROR, "Parse error")
        else:
            reply = handle_message(message)
        if reply is not None:
            stdout.write(json.dumps(reply).encode("utf-8") + b"\n")
            stdout.flush()


if __name__ == "__main__":
    if sys.stdin.isatty():  # run by hand (see above); a client starting it gets a quiet stderr
        print("demo-server: ready on stdio; type JSON-RPC messages, one per line", file=sys.stderr)
    try:
        serve()
    except KeyboardInterrupt:
        pass
