"""Credentials never show: not in logs at any level, reprs, exception messages or tracebacks.

Every scenario runs with the root logger at DEBUG (so urllib3 and requests log too) against a
real server on 127.0.0.1 that echoes the headers it got into its error bodies.
"""

from __future__ import annotations

import logging
import traceback
import uuid

import pytest

from mcpclient import Client, MCPError, StreamableHTTPTransport
from tests.faults.hostile_http import HostileHTTP
from tests.helpers import free_port

pytestmark = pytest.mark.timeout(60)

STATIC = "static-" + uuid.uuid4().hex
TOKEN = "token-" + uuid.uuid4().hex
SECRETS = (STATIC, TOKEN)

# How each configuration is set, and the credential it sends.
AUTH = {
    "static-header": (dict(headers={"Authorization": f"Bearer {STATIC}"}), STATIC),
    "token-provider": (dict(token_provider=lambda: TOKEN), TOKEN),
    "custom-header": (dict(token_provider=lambda: TOKEN, auth_header="X-Api-Key"), TOKEN),
    "both": (dict(headers={"Authorization": f"Bearer {STATIC}"}, token_provider=lambda: TOKEN), TOKEN),
}


def leaks(texts: list[str]) -> list[str]:
    """Texts holding a credential, or the first 12 characters of one (a truncated copy)."""
    return [text for text in texts for secret in SECRETS if secret[:12] in text]


class Everything(logging.Handler):
    """Keeps every record, formatted with its traceback, from every logger."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.texts.append(self.format(record))
        self.texts.append(repr(record.args))


@pytest.fixture
def captured():
    handler = Everything()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    root.setLevel(old_level)


@pytest.fixture
def server():
    hostile = HostileHTTP().start()
    yield hostile
    hostile.stop()


def exception_texts(exc: BaseException) -> list[str]:
    return [str(exc), repr(exc), "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))]


FAULTS = {
    "401-echoing-headers": {"fault": "echo_auth", "status": 401},
    "403-echoing-headers": {"fault": "echo_auth", "status": 403},
    "500-echoing-headers": {"fault": "echo_auth", "status": 500},
    "500": {"fault": "status", "status": 500},
    "503-retried": {"fault": "status", "status": 503, "retry_after": "0", "times": 5},
    "reset": {"fault": "reset"},
    "wrong-content-type": {"fault": "content_type"},
    "expired-session": {"fault": "expire"},
    "cross-origin-redirect": {"fault": "redirect", "to": "http://127.0.0.1:{port}/elsewhere"},
    "stall": {"fault": "stall"},
}


@pytest.mark.parametrize(
    "auth", list(AUTH)
)
def test_no_credential_leaks_through_any_failure(server, captured, auth):
    texts: list[str] = []
    options, credential = AUTH[auth]
    transport = StreamableHTTPTransport(server.url, max_retries=1, **options)
    client = Client(transport, timeout=5, protocol="legacy")
    try:
        client.initialize()
        client.ping()
        texts += [repr(client), repr(transport), str(client), str(transport)]
        for name, fault in FAULTS.items():
            args = {k: (v.format(port=free_port()) if isinstance(v, str) else v) for k, v in fault.items()}
            try:
                client.call_tool("echo", {"key": name, **args}, timeout=1)
            except MCPError as exc:
                texts += exception_texts(exc)
        texts += [repr(client), repr(transport)]
    finally:
        client.close()
    # The credentials did reach the server (the test would prove nothing otherwise)...
    assert server.headers_with(credential)
    # ...but never anything a user or a log collector could see.
    texts += captured.texts
    assert leaks(texts) == [], leaks(texts)[:3]


def test_a_token_cut_by_the_error_excerpt_is_still_redacted(server, captured):
    texts: list[str] = []
    with Client(StreamableHTTPTransport(server.url, token_provider=lambda: TOKEN), timeout=5,
                protocol="legacy") as client:
        for pad in range(270, 300, 3):  # the token straddles the 300-character cut
            with pytest.raises(MCPError) as info:
                client.call_tool("echo", {"key": f"pad-{pad}", "fault": "echo_auth", "status": 401, "pad": pad})
            texts += exception_texts(info.value)
    assert leaks(texts + captured.texts) == [], leaks(texts)[:3]


def test_no_credential_leaks_when_the_server_cannot_be_reached(captured):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    transport = StreamableHTTPTransport(url, max_retries=1, headers={"Authorization": f"Bearer {STATIC}"},
                                        token_provider=lambda: TOKEN)
    client = Client(transport, timeout=5, protocol="legacy")
    texts: list[str] = []
    try:
        with pytest.raises(MCPError) as info:
            client.initialize()
        texts += exception_texts(info.value)
    finally:
        client.close()
    texts += captured.texts + [repr(client), repr(transport)]
    assert leaks(texts) == []


def test_a_token_provider_failure_names_the_error_not_the_token(captured):
    def provider() -> str:
        raise RuntimeError("the vault is sealed")

    transport = StreamableHTTPTransport("http://127.0.0.1:9/mcp", token_provider=provider,
                                        headers={"Authorization": f"Bearer {STATIC}"})
    client = Client(transport, timeout=2, protocol="legacy")
    try:
        with pytest.raises(MCPError, match="vault is sealed") as info:
            client.initialize()
        texts = exception_texts(info.value) + captured.texts
    finally:
        client.close()
    assert leaks(texts) == []
