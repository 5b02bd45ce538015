"""A small OAuth authorization server on 127.0.0.1 for the travel tests: client credentials only.

It serves its metadata (RFC 8414), a token endpoint for the ``client_credentials`` grant of
one pre-registered client (``client_secret_basic`` or ``client_secret_post``), and RFC 7662
introspection, which the SDK resource server (tests/servers/sdk_oauth_server.py) asks. It
records every token it issued, so a test can tell which process fetched a token and check
that none travelled.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote

CLIENT_ID = "worker-client"


class AuthorizationServer:
    """Start with ``start()``, end with ``stop()``; ``issued`` is every token handed out."""

    def __init__(self) -> None:
        self.secret = "secret-" + uuid.uuid4().hex
        self.issued: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> AuthorizationServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "token_endpoint": f"{self.url}/token",
            "introspection_endpoint": f"{self.url}/introspect",
            "response_types_supported": ["code"],
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        }

    def token(self, form: dict[str, str], authorization: str | None) -> tuple[int, dict[str, Any]]:
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization.startswith("Basic "):
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
            client_id, secret = unquote(client_id), unquote(secret)
        if (client_id, secret) != (CLIENT_ID, self.secret):
            return 401, {"error": "invalid_client"}
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        token = "token-" + uuid.uuid4().hex
        with self._lock:
            self.issued.append({"token": token, "resource": form.get("resource"), "exp": int(time.time()) + 3600})
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600}

    def introspect(self, form: dict[str, str]) -> dict[str, Any]:
        with self._lock:
            found = next((entry for entry in self.issued if entry["token"] == form.get("token")), None)
        if found is None:
            return {"active": False}
        return {"active": True, "client_id": CLIENT_ID, "scope": "", "exp": found["exp"], "aud": found["resource"]}


def _handler(server: AuthorizationServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.startswith("/.well-known/oauth-authorization-server"):
                self._answer(200, server.metadata())
            else:
                self._answer(404, {"error": "not_found"})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            form = {key: values[0] for key, values in parse_qs(body).items()}
            if self.path == "/token":
                self._answer(*server.token(form, self.headers.get("Authorization")))
            elif self.path == "/introspect":
                self._answer(200, server.introspect(form))
            else:
                self._answer(404, {"error": "not_found"})

        def _answer(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
