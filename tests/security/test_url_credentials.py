"""Credentials in the URL are credentials: a server echoing them shows them nowhere.

``http://user:password@host/mcp`` sends HTTP Basic credentials and ``?api_key=`` is how many
servers take a key. A hostile loopback server (``url_echo_server``) echoes both back, raw,
base64 and percent-encoded, in an HTTP error body, a JSON-RPC error and a tool's result. None
of it may reach ``str(exc)``, ``HTTPStatusError.body``, the CLI's error line,
``SharedClient.health()``'s ``last_error`` (which the Flask helper serves to anyone), a
recording made with ``mcpclient record`` or the test generated from it. The same for a stdio
server (the official SDK's) echoing what its config entry's ``env`` gave it.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import sys
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

from mcpclient import Client, HTTPStatusError, MCPError, SharedClient, StreamableHTTPTransport
from mcpclient.cli import main
from mcpclient.testing import recorded
from tests.helpers import require_mcp_sdk
from tests.security.test_secrets import exception_texts, forms, leaks
from tests.security.url_echo_server import URLEchoServer

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]


def _secret(kind: str) -> str:
    # "/", "+" and "=" make the percent-encoded and URL-safe base64 forms differ from the raw one.
    hexed = uuid.uuid4().hex
    return f"{kind}-{hexed[:16]}/{hexed[16:]}+x="


USER = "alice"
PASSWORD = _secret("password")
API_KEY = _secret("key")
USERINFO = f"{USER}:{quote(PASSWORD, safe='')}"
QUERY = f"api_key={quote(API_KEY, safe='')}&region=eu-west"
#: Every form a leak of the URL's credentials would take.
SECRETS = forms(PASSWORD, API_KEY, f"{USER}:{PASSWORD}", quote(PASSWORD, safe=""), quote(API_KEY, safe=""))


@pytest.fixture
def server():
    with URLEchoServer() as echo:
        yield echo


def credentials_reached(server: URLEchoServer) -> None:
    """The credentials did reach the server, so its echo holds them (else the test proves nothing)."""
    basic = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert any(header == basic and quote(API_KEY, safe="") in target for target, header in server.seen), server.seen


def ours(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The log lines of mcpclient and requests (``log_texts``): not urllib3's DEBUG request
    lines, which show the request target, query and all, as it is sent (docs/security.md)."""
    texts: list[str] = []
    for record in caplog.records:
        if not record.name.startswith("urllib3"):
            texts += [record.getMessage(), repr(record.args), repr(record.msg)]
            if record.exc_info and record.exc_info[1] is not None:
                texts += exception_texts(record.exc_info[1])
    return texts


def assert_clean(texts: list[str]) -> None:
    found = leaks(texts, SECRETS)
    assert found == [], found[:3]


@pytest.mark.parametrize("mode", ["fail", "deny", "rpc"])
def test_an_error_echoing_the_urls_credentials_shows_none_of_them(server, caplog, mode):
    caplog.set_level(logging.DEBUG)  # the root logger: mcpclient, requests and urllib3 alike
    url = server.url_for(mode, USERINFO, QUERY)
    transport = StreamableHTTPTransport(url)
    client = Client(transport, timeout=10, protocol="legacy")
    with pytest.raises(MCPError) as caught:
        with client:
            client.call_tool("whoami", {})
    credentials_reached(server)
    texts = exception_texts(caught.value) + ours(caplog) + [repr(client), repr(transport)]
    if isinstance(caught.value, HTTPStatusError):
        assert caught.value.body, "the error should carry the body's excerpt"
        texts.append(caught.value.body)
    assert "you sent" in str(caught.value)  # the echo is there, with its credentials redacted
    assert_clean(texts)


@pytest.mark.parametrize("mode", ["fail", "deny"])
def test_the_cli_error_line_shows_none_of_the_urls_credentials(server, mode):
    out, err = io.StringIO(), io.StringIO()
    code = main(["call", server.url_for(mode, USERINFO, QUERY), "whoami", "-t", "10", "--no-input"], stdout=out,
                stderr=err)
    credentials_reached(server)
    assert code != 0 and "you sent" in err.getvalue(), err.getvalue()
    assert_clean([out.getvalue(), err.getvalue()])


@pytest.mark.parametrize("mode", ["fail", "deny"])
def test_shared_client_health_shows_none_of_the_urls_credentials(server, mode):
    shared = SharedClient(server.url_for(mode, USERINFO, QUERY), timeout=10)
    try:
        health = shared.health(timeout=5)
        credentials_reached(server)
        assert health["ok"] is False and "you sent" in health["last_error"], health
        assert_clean([json.dumps(health), repr(shared), str(shared.last_error)])
    finally:
        shared.close()


def test_the_flask_health_page_shows_none_of_the_urls_credentials(server):
    flask = pytest.importorskip("flask")
    from mcpclient.contrib.flask import MCP

    app = flask.Flask(__name__)
    app.config["MCPCLIENT_TARGET"] = server.url_for("deny", USERINFO, QUERY)
    app.config["MCPCLIENT_OPTIONS"] = {"timeout": 10}
    app.config["MCPCLIENT_HEALTH_URL"] = "/healthz/mcp"
    mcp = MCP()
    mcp.init_app(app)
    try:
        page = app.test_client().get("/healthz/mcp")
        credentials_reached(server)
        assert page.status_code == 503 and "you sent" in page.get_json()["last_error"]
        assert_clean([page.get_data(as_text=True)])
    finally:
        MCP.for_app(app).close()


def test_record_writes_no_url_credential_into_the_recording_nor_the_generated_test(server, tmp_path):
    recording = tmp_path / "session.jsonl"
    out, err = io.StringIO(), io.StringIO()
    code = main(["record", server.url_for("ok", USERINFO, QUERY), "--file", str(recording), "--call", "whoami",
                 "-t", "10", "--no-input"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    credentials_reached(server)
    text = recording.read_text()
    assert "you sent" in text and "[redacted]" in text  # the echo was recorded, its credentials not
    header = json.loads(text.splitlines()[0])
    assert header["kind"] == "http" and server.origin in header["target"]
    source = io.StringIO()
    assert main(["record", "--pytest", str(recording)], stdout=source, stderr=err) == 0, err.getvalue()
    assert_clean([text, source.getvalue(), out.getvalue(), err.getvalue()])


def test_recorded_replays_a_url_credential_recording_it_scrubbed_the_same_way(server, tmp_path):
    recording = tmp_path / "session.jsonl"
    url = server.url_for("ok", USERINFO, QUERY)
    with Client(recorded(recording, url, mode="all"), timeout=10) as client:
        assert "you sent" in client.call_tool("whoami", {}).text
    assert_clean([recording.read_text()])
    replay = recorded(recording, url, mode="none")
    with Client(replay, timeout=10) as client:
        assert "[redacted]" in client.call_tool("whoami", {}).text
    replay.verify()


@pytest.fixture
def env_entry(tmp_path):
    require_mcp_sdk()
    token = _secret("service-token")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"envecho": {
        "command": sys.executable, "args": [str(ROOT / "tests" / "security" / "sdk_env_server.py")],
        "env": {"SERVICE_TOKEN": token, "PYTHONPATH": str(ROOT)},
    }}}))
    return config, token


def test_a_stdio_entrys_environment_echoed_by_the_server_is_not_recorded(env_entry, tmp_path):
    config, token = env_entry
    recording = tmp_path / "session.jsonl"
    out, err = io.StringIO(), io.StringIO()
    code = main(["record", "envecho", "--config", str(config), "--file", str(recording), "--call", "whoami",
                 "-t", "30", "--no-input"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    text = recording.read_text()
    assert "my token is [redacted]" in text, text  # the server did echo it; the recording hides it
    source = io.StringIO()
    assert main(["record", "--pytest", str(recording)], stdout=source, stderr=err) == 0, err.getvalue()
    found = leaks([text, source.getvalue(), out.getvalue(), err.getvalue()], forms(token))
    assert found == [], found[:3]


def test_recorded_with_env_hides_the_environment_from_a_stdio_recording(env_entry, tmp_path):
    config, token = env_entry
    entry = json.loads(config.read_text())["mcpServers"]["envecho"]
    recording = tmp_path / "session.jsonl"
    with Client(recorded(recording, [entry["command"], *entry["args"]], mode="all", env=entry["env"]),
                timeout=30) as client:
        assert client.call_tool("whoami", {}).text == f"my token is {token}"  # the client sees it
    text = recording.read_text()
    assert "my token is [redacted]" in text
    assert leaks([text], forms(token)) == []
