"""A stdio MCP server (standard library only) whose texts hold lone surrogates.

A JSON ``\\ud800`` escape is valid JSON but no valid Unicode text: Python decodes it to a
lone surrogate, which UTF-8 cannot encode, so printing it raises. No real server can send
one (the SDK refuses to encode it), hence this double. It speaks the handshake era:

* ``initialize``: server name ``sur\\ud800rogate``;
* ``tools/list``: one tool named ``bad\\ud800name``, described ``half \\udc00 a pair``, with
  a parameter ``p\\udfff``;
* ``tools/call``: a text result ``text \\ud83d alone`` and a structured result holding one.

``python tests/security/surrogate_stdio.py``
"""

from __future__ import annotations

import json
import sys

# Written as raw JSON so the \u escapes reach the client as the server sent them.
INIT = ('{"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, '
        '"serverInfo": {"name": "sur\\ud800rogate", "version": "1"}}')
TOOLS = ('{"tools": [{"name": "bad\\ud800name", "description": "half \\udc00 a pair", '
         '"inputSchema": {"type": "object", "properties": {"p\\udfff": {"type": "string"}}}}]}')
RESULT = ('{"content": [{"type": "text", "text": "text \\ud83d alone"}], '
          '"structuredContent": {"value": "\\udbff"}}')


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        result = {"initialize": INIT, "tools/list": TOOLS, "tools/call": RESULT}.get(method, "{}")
        sys.stdout.write(f'{{"jsonrpc": "2.0", "id": {json.dumps(request_id)}, "result": {result}}}\n')
        sys.stdout.flush()


if __name__ == "__main__":
    main()
