"""A minimal, fast stdio MCP server (standard library only) for benchmarks and fault tests.

Usage::

    python tests/servers/fast_server.py [--die-after N] [--no-reply] [--garbage]
                                        [--stderr-flood]

Protocol: newline-delimited JSON-RPC 2.0 on stdin/stdout, handshake era only.

* ``initialize``: answers with the client's ``protocolVersion`` when it is one
  of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, else 2025-11-25.
  Capabilities: tools, resources, prompts, completions (all empty objects).
  serverInfo ``{"name": "fast-server", "version": "1.0.0"}``.
* ``ping`` -> ``{}``.
* ``tools/list`` -> tools ``echo`` (``text``: string) and ``big`` (``size``:
  integer); no ``nextCursor``.
* ``tools/call``:
    - ``echo`` -> one text block equal to ``arguments["text"]`` (so each reply
      is distinguishable);
    - ``big`` -> one text block of ``arguments["size"]`` ``"x"`` characters;
    - any other name -> JSON-RPC error -32602.
* ``resources/list``, ``resources/templates/list``, ``prompts/list`` -> empty
  lists; ``completion/complete`` -> no values.
* ``server/discover`` and every other unknown method -> error -32601, so a
  client probing for the 2026-07-28 protocol falls back to ``initialize``.
* Notifications (no ``id``) are ignored.  Lines that are not valid JSON get a
  -32700 parse error with ``id: null``.  The server does not check that
  ``initialize`` came first.
* Exits with code 0 on EOF of stdin.

Fault knobs (command line):

``--die-after N``
    When the N-th ``tools/call`` request is received, exit immediately with
    code 3 without replying to it (replies to the first N-1 normally).
``--no-reply``
    Never reply to ``tools/call`` (everything else is answered).
``--garbage``
    Before every reply, write a line that is not JSON (``this is not json``)
    and a JSON line that is not JSON-RPC (``{"hello": "world"}``).
``--stderr-flood``
    Write 10 MB to stderr at start-up (before reading stdin).  A client that
    does not drain stderr will see this server block.

Per-message work is kept minimal: one ``json.loads``, one ``json.dumps`` and
one write + flush per reply.
"""

from __future__ import annotations

import json
import sys

LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
DEFAULT_VERSION = "2025-11-25"

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text argument back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo"}},
            "required": ["text"],
        },
    },
    {
        "name": "big",
        "description": "Return one text block of `size` 'x' characters.",
        "inputSchema": {
            "type": "object",
            "properties": {"size": {"type": "integer", "minimum": 0, "description": "Number of bytes"}},
            "required": ["size"],
        },
    },
]

CAPABILITIES = {"tools": {}, "resources": {}, "prompts": {}, "completions": {}}
SERVER_INFO = {"name": "fast-server", "version": "1.0.0"}
GARBAGE = b'this is not json\n{"hello": "world"}\n'


def parse_args(argv: list[str]) -> dict:
    opts = {"die_after": None, "no_reply": False, "garbage": False, "stderr_flood": False}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--die-after":
            opts["die_after"] = int(argv[i + 1])
            i += 1
        elif arg.startswith("--die-after="):
            opts["die_after"] = int(arg.split("=", 1)[1])
        elif arg == "--no-reply":
            opts["no_reply"] = True
        elif arg == "--garbage":
            opts["garbage"] = True
        elif arg == "--stderr-flood":
            opts["stderr_flood"] = True
        else:
            sys.stderr.write(f"fast_server: unknown argument {arg!r}\n")
            sys.exit(2)
        i += 1
    return opts


def main() -> int:
    opts = parse_args(sys.argv[1:])
    die_after = opts["die_after"]
    no_reply = opts["no_reply"]
    garbage = opts["garbage"]

    stdin = sys.stdin.buffer
    out = sys.stdout.buffer
    dumps = json.dumps
    loads = json.loads

    if opts["stderr_flood"]:
        chunk = b"e" * 1023 + b"\n"
        err = sys.stderr.buffer
        for _ in range(10 * 1024):
            err.write(chunk)
        err.flush()

    def send(msg: dict) -> None:
        data = dumps(msg, separators=(",", ":")).encode() + b"\n"
        if garbage:
            data = GARBAGE + data
        out.write(data)
        out.flush()

    def result(msg_id, value: dict) -> None:
        send({"jsonrpc": "2.0", "id": msg_id, "result": value})

    def error(msg_id, code: int, message: str) -> None:
        send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    calls = 0
    readline = stdin.readline
    while True:
        line = readline()
        if not line:
            return 0
        if line.isspace():
            continue
        try:
            msg = loads(line)
        except ValueError:
            error(None, -32700, "Parse error")
            continue
        if not isinstance(msg, dict):
            error(None, -32600, "Invalid Request")
            continue
        if "id" not in msg:
            continue  # notification (or a response to nothing we sent): ignore
        if "method" not in msg:
            continue  # a response from the client; this server never sends requests
        msg_id = msg["id"]
        method = msg["method"]
        params = msg.get("params") or {}

        if method == "tools/call":
            calls += 1
            if die_after is not None and calls >= die_after:
                out.flush()
                sys.exit(3)
            if no_reply:
                continue
            name = params.get("name")
            args = params.get("arguments") or {}
            if name == "echo":
                text = args.get("text")
                if not isinstance(text, str):
                    error(msg_id, -32602, "echo: 'text' must be a string")
                else:
                    result(msg_id, {"content": [{"type": "text", "text": text}], "isError": False})
            elif name == "big":
                size = args.get("size")
                if not isinstance(size, int) or size < 0:
                    error(msg_id, -32602, "big: 'size' must be a non-negative integer")
                else:
                    result(msg_id, {"content": [{"type": "text", "text": "x" * size}], "isError": False})
            else:
                error(msg_id, -32602, f"Unknown tool: {name}")
        elif method == "ping":
            result(msg_id, {})
        elif method == "initialize":
            requested = params.get("protocolVersion")
            version = requested if requested in LEGACY_VERSIONS else DEFAULT_VERSION
            result(msg_id, {"protocolVersion": version, "capabilities": CAPABILITIES, "serverInfo": SERVER_INFO})
        elif method == "tools/list":
            result(msg_id, {"tools": TOOLS})
        elif method == "resources/list":
            result(msg_id, {"resources": []})
        elif method == "resources/templates/list":
            result(msg_id, {"resourceTemplates": []})
        elif method == "prompts/list":
            result(msg_id, {"prompts": []})
        elif method == "completion/complete":
            result(msg_id, {"completion": {"values": [], "total": 0, "hasMore": False}})
        else:  # includes server/discover: legacy-only
            error(msg_id, -32601, f"Method not found: {method}")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
