"""A stdio MCP server (standard library only) that breaks many rules at once, for the doctor.

Usage::

    python tests/servers/broken_server.py

What it does wrong:

* prints a banner on stdout before anything (stdout is for protocol messages only), and
  300 lines on stderr;
* never answers ``server/discover`` (an unknown method must get -32601), so the era probe
  waits for its grace before ``initialize``; answers ``initialize`` (2025-11-25);
* answers any other unknown method with an empty result instead of -32601;
* lists its tools in the reverse order every other time, and offers:
  ``bad name!`` followed by an escape sequence that clears a terminal and a bidi override
  (outside the SEP-986 format, and text a report must clean), ``dup`` twice, ``stringly`` (an inputSchema of
  type "string"), ``invalid`` (a property whose ``type`` is 5: not JSON Schema), ``headless``
  (no inputSchema), ``listy`` (an outputSchema of type "array") and ``header`` (an
  ``x-mcp-header`` on an object parameter), and ``liar`` (see below);
* ``tools/call`` answers every tool with a text "ok"; ``liar`` adds structured content that
  breaks its ``outputSchema`` (``n`` is a string, not an integer).
"""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "bad name!\x1b[2J\u202e", "inputSchema": {"type": "object"}},
    {"name": "dup", "inputSchema": {"type": "object"}},
    {"name": "dup", "inputSchema": {"type": "object"}},
    {"name": "stringly", "inputSchema": {"type": "string"}},
    {"name": "invalid", "inputSchema": {"type": "object", "properties": {"x": {"type": 5}}}},
    {"name": "headless"},
    {"name": "listy", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}},
    {"name": "header", "inputSchema": {"type": "object", "properties": {
        "where": {"type": "object", "x-mcp-header": "Where"}}}},
    {"name": "liar", "inputSchema": {"type": "object"},
     "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
]


def main() -> int:
    print("broken-server 0.1 starting up, hello!", flush=True)  # on stdout: the first rule broken
    for number in range(300):
        print(f"debug line {number}: nothing to see", file=sys.stderr)
    sys.stderr.flush()
    listings = 0
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue  # notifications
        method = message.get("method")
        if method == "server/discover":
            continue  # silence
        if method == "initialize":
            result: dict = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "broken-server", "version": "0.1"}}
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            listings += 1
            result = {"tools": TOOLS if listings % 2 else TOOLS[::-1]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "ok"}]}
            if message.get("params", {}).get("name") == "liar":
                result["structuredContent"] = {"n": "five"}  # not the integer its outputSchema promises
        else:
            result = {}  # an unknown method "succeeds"
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
