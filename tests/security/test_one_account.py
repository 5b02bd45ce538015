"""The client's one account of the credentials it sends (``Credentials``), channel by channel.

Every channel enters its secrets (redacted in every form) and names whom the client is (a
digest, the same for the same credentials); what a transport sends is made by one function
per kind, which the transports, ``SharedClient`` and a replay all call. No other list of
secrets is kept anywhere in mcpclient: the last test reads the package's source for one.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from urllib.parse import quote

import requests

from mcpclient import HTTP, SharedClient, Stdio, StdioTransport
from mcpclient._build.open import credentials_of, describe_target
from mcpclient._core.credentials import ANONYMOUS, Credentials
from mcpclient._core.redact import REDACTED
from mcpclient.transports._requester import credentials_for

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "pa:ss/word+1="
KEY = "key-0123456789/+="


def hidden(credentials: Credentials, *texts: str) -> bool:
    return all(REDACTED in credentials.redactor.redact(text) and text not in credentials.redactor.redact(text)
               for text in texts)


def test_the_urls_user_info_and_each_query_value_are_credentials():
    url = f"https://alice:{quote(PASSWORD, safe='')}@mcp.example.com/mcp?api_key={quote(KEY, safe='')}&TOKENONLY123"
    credentials = credentials_for(url)
    basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert credentials.sends
    assert hidden(credentials, PASSWORD, quote(PASSWORD, safe=""), f"alice:{PASSWORD}", basic, f"Basic {basic}",
                  KEY, quote(KEY, safe=""), quote(KEY, safe="").lower(), "TOKENONLY123")
    assert "mcp.example.com/mcp" in credentials.redactor.redact(url)  # the address stays
    assert PASSWORD not in describe_target(url) and KEY not in describe_target(url)


def test_headers_basic_pairs_cookies_and_an_environment_are_credentials():
    session = requests.Session()
    session.headers["X-Api-Key"] = "session-header-key"
    session.cookies.set("sid", "cookie-value-123")
    credentials = credentials_for("https://h/mcp", {"Authorization": "Bearer tok-123456"}, auth=("bob", "basic-pw-1"),
                                  session=session)
    assert hidden(credentials, "tok-123456", "Bearer tok-123456", "session-header-key", "cookie-value-123",
                  "basic-pw-1", "bob:basic-pw-1", base64.b64encode(b"bob:basic-pw-1").decode())
    assert "python-requests" in credentials.redactor.redact("python-requests/2")  # requests' defaults are none
    stdio = Credentials.for_stdio({"SERVICE_TOKEN": "env-secret-1"})
    listed = Credentials.for_stdio(["SERVICE_TOKEN=env-secret-1"])
    assert hidden(stdio, "env-secret-1") and stdio.identity == listed.identity is not None


def test_the_identity_names_the_credentials_and_nobody_when_they_are_known_only_as_sent():
    alice = credentials_for("https://h/mcp", {"Authorization": "Bearer alice-token"})
    assert alice.identity == credentials_for("https://h/mcp", {"authorization": "Bearer alice-token"}).identity
    assert alice.identity != credentials_for("https://h/mcp", {"Authorization": "Bearer bob-token1"}).identity
    assert alice.identity != credentials_for("https://h/mcp?authorization=Bearer+alice-token").identity
    assert "alice-token" not in repr(alice) and alice.identity is not None and "alice" not in alice.identity
    assert credentials_for("https://h/mcp").identity is None and not credentials_for("https://h/mcp").sends
    provider = credentials_for("https://h/mcp", {"Authorization": "x"}, token_provider=lambda: "t")
    assert provider.sends and provider.identity is None
    assert credentials_for("https://h/mcp", auth=requests.auth.HTTPDigestAuth("u", "p")).identity is None


def test_the_owner_of_a_private_result_is_the_partition_and_every_credential_of_the_request():
    nobody, alice = Credentials(), credentials_for("https://h/mcp", {"Authorization": "Bearer alice-token"})
    assert nobody.owner() == ANONYMOUS and nobody.owner(headers={"Mcp-Method": "tools/list"}) == ANONYMOUS
    assert nobody.owner(headers={"X-User": "alice"}) not in (ANONYMOUS, None, nobody.owner(headers={"X-User": "bob"}))
    assert nobody.owner("scope-a") not in (ANONYMOUS, nobody.owner("scope-b"))
    assert alice.owner() not in (ANONYMOUS, None, alice.owner("scope-a"))
    changing = Credentials.unknown()
    assert changing.owner() is None and changing.owner("scope-a") not in (None, nobody.owner("scope-a"))


def test_tokens_enter_the_account_as_they_are_sent():
    credentials = credentials_for("https://h/mcp", token_provider=lambda: "t")
    credentials.sent_header("Bearer fresh-token-1")
    assert hidden(credentials, "fresh-token-1", "Bearer fresh-token-1")
    assert credentials.identity is None  # a token sent names nobody in advance


def test_shared_client_and_a_transport_make_the_same_account(tmp_path):
    url = f"http://alice:{quote(PASSWORD, safe='')}@127.0.0.1:9/mcp?api_key=k-123456"
    shared = SharedClient(url, http=HTTP(headers={"X-Tenant": "tenant-0001"}))
    assert shared._credentials.identity == credentials_for(url, {"X-Tenant": "tenant-0001"}).identity
    transport = StdioTransport(["python", "-c", "pass"], {"SERVICE_TOKEN": "env-secret-1"})
    try:
        assert credentials_of(["python", "-c", "pass"], {"stdio": Stdio(env={"SERVICE_TOKEN": "env-secret-1"})}).identity == \
            transport.about.credentials.identity is not None
    finally:
        transport.close()


def test_no_module_keeps_a_second_list_of_secrets():
    """Secrets are entered only through ``Credentials``: no other module makes a ``Redactor``,
    splits credential headers itself, or names the headers that carry credentials."""
    package = ROOT / "mcpclient"
    allowed = {package / "_core" / "credentials.py", package / "_core" / "redact.py"}
    found = []
    for path in package.rglob("*.py"):
        if path in allowed:
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in (r"\bRedactor\(", r"\bcredential_secrets\b", r"\badd_header\(", r"[\"']Proxy-Authorization[\"']",
                        r"headers\.values\(\)"):
            found += [f"{path.relative_to(ROOT)}: {pattern}" for _ in re.finditer(pattern, text)]
    assert found == []
