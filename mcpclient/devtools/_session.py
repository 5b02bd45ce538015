"""The doctor's ``session`` check: how a legacy Streamable HTTP server answers a lost session.

The specification: a server answers a request carrying a session id it does not know (one it
ended, or never issued) with HTTP 404, and a client that gets 404 starts a new session with a
new ``initialize``. The check sends one ``ping`` with a made-up ``Mcp-Session-Id`` (with the
headers the doctor was given, so credentials still pass) and reads the status; then it makes
the doctor's own client hold that made-up id, pings through it, and looks whether the client
started a new session and was answered. The session the client left is then ended (DELETE).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, Mapping

import requests

from .._core.exceptions import MCPError
from ..transports.http import StreamableHTTPTransport, _session_lost
from ._checks import Finding

__all__ = ["UNKNOWN_SESSION", "session_check"]

#: The start of the made-up session id (a random tail follows).
UNKNOWN_SESSION = "mcpclient-doctor-unknown-"
_ACCEPT = "application/json, text/event-stream"


def session_check(client: Any, url: str, headers: Mapping[str, str] | None, timeout: float) -> Finding | None:
    """The ``session`` finding for ``client`` (open on ``url``); None when not over Streamable HTTP."""
    transport = client.transport
    if not isinstance(transport, StreamableHTTPTransport):
        return None
    if client.protocol_version == "2026-07-28":
        return Finding(check="session", level="info", message="the 2026-07-28 protocol has no sessions: nothing to lose")
    if transport.session_id is None:
        return Finding(check="session", level="info",
                       message="the server keeps no session (no Mcp-Session-Id): nothing to lose")
    made_up = UNKNOWN_SESSION + secrets.token_hex(8)
    answer = _probe(url, headers, made_up, client.protocol_version, timeout)
    if isinstance(answer, str):
        return Finding(check="session", level="error", message=f"a request on an unknown session failed: {answer}")
    status, body, ms = answer
    original = transport.session_id
    recovery = _recover(client, transport, made_up, timeout)
    if transport.session_id != original:
        _end(url, headers, original, client.protocol_version, timeout)
    shown = f"HTTP {status} in {ms:.0f} ms"
    if status == 404:
        level, message = "ok", f"a request on an unknown Mcp-Session-Id got {shown}"
    elif status == 400 and _session_lost(status, body):
        level, message = "warning", (f"a request on an unknown Mcp-Session-Id got {shown} with a session error, not 404 "
                                     "as the specification says: mcpclient starts a new session on it, clients that "
                                     "follow the specification to the letter do not")
    elif 200 <= status < 300:
        level, message = "error", (f"a request on a session id the server never issued was served ({shown}): it does "
                                   "not check sessions, so a client never learns its session is gone (the "
                                   "specification: 404)")
    else:
        level, message = "error", (f"a request on an unknown Mcp-Session-Id got {shown}, not 404: a client cannot tell "
                                   "that its session is gone and start a new one")
    if recovery is not None and level != "error":
        level = "error"
    details = (f"the client then: {recovery or 'started a new session (initialize again) and was answered'}",)
    return Finding(check="session", level=level, message=message, details=details)


def _probe(url: str, headers: Mapping[str, str] | None, session: str, version: str,
           timeout: float) -> tuple[int, bytes, float] | str:
    """POST one ``ping`` on ``session``: the status, the start of the body and the time; or
    what failed."""
    sent = {**(headers or {}), "Accept": _ACCEPT, "Content-Type": "application/json",
            "Mcp-Session-Id": session, "MCP-Protocol-Version": version}
    body = json.dumps({"jsonrpc": "2.0", "id": "mcpclient-doctor-session", "method": "ping"}).encode()
    start = time.perf_counter()
    try:
        with requests.post(url, data=body, headers=sent, timeout=timeout, allow_redirects=False, stream=True) as reply:
            ms = (time.perf_counter() - start) * 1000
            return reply.status_code, reply.raw.read(4096, decode_content=True) if reply.status_code == 400 else b"", ms
    except requests.RequestException as exc:
        return f"{type(exc).__name__}: {exc}"


def _end(url: str, headers: Mapping[str, str] | None, session: str, version: str, timeout: float) -> None:
    """End the session the client left behind (DELETE, as a client's close does); best effort."""
    try:
        requests.delete(url, headers={**(headers or {}), "Mcp-Session-Id": session, "MCP-Protocol-Version": version},
                        timeout=timeout, allow_redirects=False).close()
    except requests.RequestException:
        pass  # the server ends it on its own in time


def _recover(client: Any, transport: StreamableHTTPTransport, made_up: str, timeout: float) -> str | None:
    """Make the client hold ``made_up`` as its session, then ping: None when it started a new
    session and was answered, else what went wrong."""
    transport.session_id = made_up
    try:
        client.ping(timeout=timeout)
    except MCPError as exc:
        return f"failed: {exc}"
    if transport.session_id == made_up:
        return "was answered on the made-up session (no new session was started)"
    return None
