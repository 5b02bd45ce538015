"""A hostile MCP server (standard library only, 127.0.0.1) that echoes the credentials of its URL.

A client given ``http://user:password@host/.../mcp?api_key=KEY`` sends the user info as an HTTP
Basic ``Authorization`` header and the key in the request target. This server speaks the
legacy era and echoes both back (the header in every form ``echo_server.echoes`` knows, the
request target as it came, and each query value raw, base64 and percent-encoded), where the
path's first segment says:

* ``/ok/mcp``: in the result of every ``tools/call`` (its text);
* ``/fail/mcp``: in the body of an HTTP 500 answering every request after ``initialize`` (a
  ``ping`` too);
* ``/deny/mcp``: in the body of an HTTP 401 answering every request, ``initialize`` included;
* ``/rpc/mcp``: in the ``message`` and ``data`` of a JSON-RPC error answering ``tools/call``.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit

from tests.security.echo_server import EchoServer, Handler, echoes, encodings, reply


class URLEchoServer(EchoServer):
    """``seen`` holds each POST's request target and ``Authorization`` header."""

    def __init__(self) -> None:
        super().__init__()
        self.origin = f"127.0.0.1:{self.httpd.server_address[1]}"

    def url_for(self, mode: str, userinfo: str = "", query: str = "") -> str:
        """The URL of ``mode`` (``ok``, ``fail``, ``deny``, ``rpc``) with ``userinfo`` (already
        percent-encoded) and ``query`` (likewise)."""
        at = f"{userinfo}@" if userinfo else ""
        return f"http://{at}{self.origin}/{mode}/mcp" + (f"?{query}" if query else "")


def echo_of(target: str, header: str) -> str:
    """What the server echoes of a request: its Authorization header, target and query values."""
    forms = echoes(header) if header else []
    forms.append(target)
    for _, value in parse_qsl(urlsplit(target).query, keep_blank_values=True):
        forms += encodings(value)
    return " ".join(forms)


class _Handler(Handler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        header = self.headers.get("Authorization") or ""
        self.server.state.seen.append((self.path, header))  # type: ignore[attr-defined]
        mode = self.path.lstrip("/").split("/", 1)[0]
        message = json.loads(body)
        method, request_id = message.get("method"), message.get("id")
        echo = echo_of(self.path, header)
        if mode == "deny":
            self._send(401, f"who are you? you sent {echo}".encode(), "text/plain")
            return
        if request_id is None:
            self._send(202, b"")
            return
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "url-echo", "version": "1"}}
            self._send(200, reply(request_id, result=result), **{"Mcp-Session-Id": "s1"})
        elif mode == "fail":
            self._send(500, f"internal error: you sent {echo}".encode(), "text/plain")
        elif method == "tools/list":
            tool = {"name": "whoami", "description": "Says what the caller sent.", "inputSchema": {"type": "object"}}
            self._send(200, reply(request_id, result={"tools": [tool]}))
        elif method == "tools/call" and mode == "rpc":
            error = {"code": -32000, "message": f"denied: you sent {echo}", "data": {"you sent": echo}}
            self._send(200, reply(request_id, error=error))
        elif method == "tools/call":
            self._send(200, reply(request_id, result={"content": [{"type": "text", "text": f"you sent {echo}"}]}))
        else:
            self._send(200, reply(request_id, result={}))


URLEchoServer.handler = _Handler
