"""A stdio MCP server (standard library only) that resolves tool names leniently, as some
hand-written servers do: no real SDK server does, hence this double.

It speaks the handshake era. ``tools/list`` lists ``delete_all`` (no annotations: destructive)
and ``read_file`` (read-only). ``tools/call`` finds the tool from a name of any type: a list
is its items joined with commas (JavaScript's ``String([...])``), anything else its text; then
case, blanks and separators are ignored (``Delete-All`` runs ``delete_all``). Every call it
runs is appended, as ``tool <arguments as JSON>``, to ``--record FILE``: what ran, seen from
outside this process.

``python tests/security/lenient_stdio.py --record FILE``
"""

from __future__ import annotations

import argparse
import json
import sys

TOOLS = [
    {"name": "delete_all", "description": "Delete everything.", "inputSchema": {"type": "object"}},
    {"name": "read_file", "description": "Read a file.", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
]


def text(name: object) -> str:
    if isinstance(name, list):
        return ",".join(text(item) for item in name)
    if isinstance(name, dict):
        return "[object Object]"
    return name if isinstance(name, str) else json.dumps(name)


def loose(name: str) -> str:
    return "".join(char for char in name.casefold() if char.isalnum())


def answer(method: str, params: dict, record: str) -> dict:
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "lenient", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        wanted = loose(text(params.get("name")))
        for tool in TOOLS:
            if loose(tool["name"]) == wanted:
                with open(record, "a", encoding="utf-8") as log:
                    log.write(f"{tool['name']} {json.dumps(params.get('arguments'), sort_keys=True)}\n")
                return {"content": [{"type": "text", "text": f"ran {tool['name']}"}]}
        return {"content": [{"type": "text", "text": "no such tool"}], "isError": True}
    return {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True)
    record = parser.parse_args().record
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        result = answer(message["method"], message.get("params") or {}, record)
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
