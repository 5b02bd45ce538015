"""A scripted MCP server and authorization server on ``responses``, and a redirect handler
that "approves" in place of a browser."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlencode, urlsplit

import responses

from mcpclient.auth import RedirectHandler

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
ISSUER = "https://auth.example.com"
REDIRECT = "http://127.0.0.1:9999/callback"


#: code -> the scope its authorization request asked for (what the fake token endpoint grants).
SCOPES_BY_CODE: dict[str, str] = {}


class Approve(RedirectHandler):
    """Answers the authorization request as an approving authorization server would."""

    redirect_uri = REDIRECT  # type: ignore[assignment]

    def __init__(self, iss: str | None = ISSUER, extra: dict | None = None) -> None:
        self.iss = iss
        self.extra = extra or {}
        self.requests: list[dict[str, str]] = []
        self.id = len(SCOPES_BY_CODE)

    def authorize(self, authorization_url: str, *, timeout: float | None = None) -> str:
        query = {k: v[0] for k, v in parse_qs(urlsplit(authorization_url).query).items()}
        self.requests.append(query)
        code = f"code-{len(self.requests)}-{id(self)}"
        SCOPES_BY_CODE[code] = query.get("scope", "")
        answer = {"code": code, "state": query["state"], **self.extra}
        if self.iss is not None:
            answer["iss"] = self.iss
        return REDIRECT + "?" + urlencode(answer)


class FakeServers:
    """The MCP server at ``MCP`` (wants scopes ``required``) and its authorization server."""

    def __init__(self, rsps: responses.RequestsMock, *, required: tuple[str, ...] = (), metadata: dict | None = None,
                 prm: dict | None = None, expires_in: int = 3600, refresh: bool = True,
                 grantable: set[str] | None = None) -> None:
        self.grantable = grantable
        self.rsps = rsps
        self.required = set(required)
        self.expires_in = expires_in
        self.refresh = refresh
        self.issued: dict[str, set[str]] = {}
        self.token_requests: list[dict[str, str]] = []
        self.token_headers: list[dict[str, str]] = []
        self.registrations: list[dict] = []
        self.mcp_auth: list[str | None] = []
        self.metadata = {
            "issuer": ISSUER,
            "authorization_endpoint": ISSUER + "/authorize",
            "token_endpoint": ISSUER + "/token",
            "registration_endpoint": ISSUER + "/register",
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            **(metadata or {}),
        }
        self.prm = {"resource": MCP, "authorization_servers": [ISSUER], **(prm or {})}
        rsps.add_callback(responses.POST, MCP, callback=self._mcp)
        rsps.add_callback(responses.GET, PRM, callback=lambda r: (200, {}, json.dumps(self.prm)))
        rsps.add_callback(
            responses.GET, ISSUER + "/.well-known/oauth-authorization-server",
            callback=lambda r: (200, {}, json.dumps(self.metadata)),
        )
        rsps.add_callback(responses.POST, ISSUER + "/register", callback=self._register)
        rsps.add_callback(responses.POST, ISSUER + "/token", callback=self._token)

    def _mcp(self, request):
        header = request.headers.get("Authorization")
        self.mcp_auth.append(header)
        challenge = f'Bearer resource_metadata="{PRM}"'
        if not header or header.split(" ", 1)[1] not in self.issued:
            return 401, {"WWW-Authenticate": challenge}, "{}"
        granted = self.issued[header.split(" ", 1)[1]]
        if not self.required <= granted:
            need = " ".join(sorted(self.required))
            return 403, {"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{need}", resource_metadata="{PRM}"'}, "{}"
        return 200, {"Content-Type": "application/json"}, json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}})

    def _register(self, request):
        body = json.loads(request.body)
        self.registrations.append(body)
        return 201, {}, json.dumps({"client_id": f"client-{len(self.registrations)}", **body})

    def _token(self, request):
        form = {k: v[0] for k, v in parse_qs(request.body).items()}
        self.token_requests.append(form)
        self.token_headers.append(dict(request.headers))
        if form["grant_type"] == "refresh_token" and not form.get("refresh_token", "").startswith("refresh-"):
            return 400, {}, json.dumps({"error": "invalid_grant"})
        token = f"access-{len(self.token_requests)}"
        if form["grant_type"] == "authorization_code":
            scopes = set(SCOPES_BY_CODE.get(form["code"], "").split())
        else:
            scopes = set(form.get("scope", "").split())
        if self.grantable is not None:
            scopes &= self.grantable
        self.issued[token] = scopes
        body = {"access_token": token, "token_type": "Bearer", "expires_in": self.expires_in}
        if self.refresh:
            body["refresh_token"] = f"refresh-{len(self.token_requests)}"
        if scopes:
            body["scope"] = " ".join(sorted(scopes))
        return 200, {}, json.dumps(body)


def post(auth, url: str = MCP):
    """One MCP request through ``auth``."""
    import requests

    return requests.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, auth=auth)
