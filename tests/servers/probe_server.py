"""A stdio MCP server (standard library only) that answers ``server/discover`` late or never,
for the era probe's tests and timings.

Usage::

    python tests/servers/probe_server.py silent          # legacy; ignores unknown methods
    python tests/servers/probe_server.py late-discover   # legacy; answers discover only when a
                                                         # ping comes, just before the ping's
                                                         # answer (so after the opening)
    python tests/servers/probe_server.py slow-modern S   # modern; discover answered after S s,
                                                         # initialize refused like the SDK's
                                                         # dual-era stdio loop (-32022)
    python tests/servers/probe_server.py refuse-initialize # ignores discover, refuses initialize
                                                         # (-32602)
    python tests/servers/probe_server.py slow-start S    # both eras, each request answered in
                                                         # its own (as servers that route by
                                                         # request do), after a start of S s

Every request's method is reported on stderr as ``GOT <method>``.
"""

from __future__ import annotations

import json
import sys
import threading
import time

MODERN = "2026-07-28"


def main() -> int:
    mode = sys.argv[1]
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    lock = threading.Lock()
    held: list[dict] = []  # late-discover's answer, until a ping comes

    def send(message: dict) -> None:
        with lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def later(message: dict) -> None:
        time.sleep(delay)
        send(message)

    if mode == "slow-start":
        time.sleep(delay)  # what it is sent meanwhile waits in its stdin
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, msg_id = message.get("method"), message.get("id")
        sys.stderr.write(f"GOT {method}\n")
        sys.stderr.flush()
        if msg_id is None:
            continue
        if method == "server/discover" and mode == "slow-start":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {
                "supportedVersions": [MODERN], "capabilities": {"tools": {}},
                "serverInfo": {"name": f"probe-{mode}", "version": "1"}}})
        elif method == "server/discover" and mode in ("late-discover", "slow-modern"):
            result = {"supportedVersions": [MODERN], "capabilities": {"tools": {}},
                      "serverInfo": {"name": f"probe-{mode}", "version": "1"}}
            reply = {"jsonrpc": "2.0", "id": msg_id, "result": result}
            if mode == "late-discover":
                held.append(reply)
            else:
                threading.Thread(target=later, args=(reply,), daemon=True).start()
        elif method == "initialize" and mode == "refuse-initialize":
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32602, "message": "no such capability"}})
        elif method == "initialize" and mode == "slow-modern":
            send({"jsonrpc": "2.0", "id": msg_id, "error": {
                "code": -32022, "message": "Unsupported protocol version", "data": {"supported": [MODERN]}}})
        elif method == "initialize":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {
                "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": f"probe-{mode}", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": []}})
        elif method == "ping":
            while held:
                send(held.pop(0))
            send({"jsonrpc": "2.0", "id": msg_id, "result": {}})
        # anything else: no answer at all, like a server that ignores unknown methods
    return 0


if __name__ == "__main__":
    sys.exit(main())
