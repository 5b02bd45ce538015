"""A plain WSGI app for the shared-cache test under gunicorn ``--preload``: the ``FileStore``
is made at import (in the master), so every forked worker uses the same one.

``GET /ask?user=NAME`` opens a client for NAME (``X-User`` header, ``cache_partition=NAME``)
to ``$MCP_URL`` and answers ``{"worker", "tools", "profile"}``. ``/ask?user=NAME&hold=1``
first writes ``$MCP_MARKERS/held-<pid>`` and waits (30 s at most) for
``$MCP_MARKERS/release``, so the test knows which worker is busy without timing anything.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs

from mcpclient import Client, Plugins
from mcpclient.cache import FileStore
from mcpclient.transports import StreamableHTTPTransport

STORE = FileStore(os.environ["MCP_CACHE_DIR"])  # in the master, with --preload
URL = os.environ["MCP_URL"]
MARKERS = Path(os.environ["MCP_MARKERS"])


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    query = parse_qs(environ.get("QUERY_STRING", ""))
    user = query.get("user", ["nobody"])[0]
    if query.get("hold"):
        (MARKERS / f"held-{os.getpid()}").write_text("")
        end = time.monotonic() + 30
        while not (MARKERS / "release").exists() and time.monotonic() < end:
            time.sleep(0.02)
    with Client(StreamableHTTPTransport(URL, headers={"X-User": user}),
                plugins=Plugins(cache=STORE, cache_partition=user),
                timeout=10) as client:
        body = {"worker": os.getpid(), "tools": [tool.name for tool in client.list_tools()],
                "profile": client.read_resource("user://me")[0].text}
    data = json.dumps(body).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]
