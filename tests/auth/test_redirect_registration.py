"""Redirect handlers (browser + loopback listener, paste) and the client registration order."""

from __future__ import annotations

import io
import threading

import pytest
import requests
import responses

from mcpclient.auth import AuthorizationError, LoopbackRedirectHandler, OAuth, PasteRedirectHandler

from .fakes import Approve, FakeServers, post


def test_loopback_handler_opens_the_browser_and_receives_the_redirect():
    opened = []

    def browser(url):
        opened.append(url)
        # The "browser" follows the authorization server's redirect to our listener.
        threading.Thread(target=requests.get, args=(handler.redirect_uri + "?code=c&state=s",), daemon=True).start()
        return True

    handler = LoopbackRedirectHandler(open_browser=browser)
    try:
        assert handler.redirect_uri.startswith("http://127.0.0.1:")
        callback = handler.authorize("https://auth.example.com/authorize?x=1&state=s", timeout=10)
        assert callback == handler.redirect_uri + "?code=c&state=s"
        assert opened == ["https://auth.example.com/authorize?x=1&state=s"]
    finally:
        handler.close()


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,x"])
def test_only_http_authorization_urls_are_opened(url):
    opened = []
    handler = LoopbackRedirectHandler(open_browser=opened.append)
    with pytest.raises(AuthorizationError, match="non-http"):
        handler.authorize(url)
    assert opened == []
    handler.close()


def test_paste_handler_shows_the_url_and_reads_the_redirect():
    out = io.StringIO()
    handler = PasteRedirectHandler("http://127.0.0.1:8765/callback", output=out,
                                   read_line=lambda prompt: "http://127.0.0.1:8765/callback?code=c&state=s\n")
    assert handler.authorize("https://auth.example.com/authorize?a=b").endswith("code=c&state=s")
    assert "https://auth.example.com/authorize?a=b" in out.getvalue()
    with pytest.raises(AuthorizationError, match="not the redirect URL"):
        PasteRedirectHandler(output=out, read_line=lambda p: "https://evil.example/?code=c").authorize("https://a.example/")


@pytest.fixture
def rsps():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


def test_pre_registered_credentials_come_first(rsps):
    servers = FakeServers(rsps, metadata={"client_id_metadata_document_supported": True,
                                          "token_endpoint_auth_methods_supported": ["client_secret_post"]})
    handler = Approve()
    post(OAuth(redirect_handler=handler, client_id="pre", client_secret="sec",
               client_metadata_url="https://app.example.com/client.json"))
    assert handler.requests[0]["client_id"] == "pre"
    assert servers.registrations == []
    assert servers.token_requests[0]["client_secret"] == "sec"  # client_secret_post, as the server lists


def test_a_client_id_metadata_document_is_used_when_supported(rsps):
    servers = FakeServers(rsps, metadata={"client_id_metadata_document_supported": True})
    handler = Approve()
    post(OAuth(redirect_handler=handler, client_metadata_url="https://app.example.com/client.json"))
    assert handler.requests[0]["client_id"] == "https://app.example.com/client.json"
    assert servers.registrations == []


def test_dynamic_registration_is_the_fallback_and_is_reused(rsps):
    servers = FakeServers(rsps)
    auth = OAuth(redirect_handler=Approve(), client_metadata_url="https://app.example.com/client.json")
    post(auth)
    servers.issued.clear()
    servers.refresh = False
    auth._save(clear_tokens=True)
    post(auth)
    assert len(servers.registrations) == 1
    assert servers.registrations[0]["grant_types"] == ["authorization_code", "refresh_token"]


def test_no_registration_possible_says_what_to_do(rsps):
    FakeServers(rsps, metadata={"registration_endpoint": None})
    with pytest.raises(AuthorizationError, match="pass the client_id"):
        post(OAuth(redirect_handler=Approve()))


def test_a_metadata_url_must_be_https_with_a_path():
    with pytest.raises(ValueError):
        OAuth(client_metadata_url="http://app.example.com/client.json")
    with pytest.raises(ValueError):
        OAuth(client_metadata_url="https://app.example.com/")


