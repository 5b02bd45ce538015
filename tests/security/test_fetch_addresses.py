"""Finding 5: the OAuth layer's fetches never reach link-local or metadata addresses.

``*.localhost`` names are resolved and must really be loopback; a name that answers a public
address to the check and a link-local one to the connection (DNS rebinding) never gets a
connection to the link-local one; IPv6 spellings of a blocked IPv4 address are blocked too.
Remote names are ``responses`` mocks or a recording socket; ``socket.getaddrinfo`` is patched,
which the URL check (``_netguard``) and the connection both look up at each call.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import responses

from mcpclient.auth import DiscoveryError
from mcpclient.auth._fetch import Fetcher, check_url

_real_getaddrinfo = socket.getaddrinfo


class Resolver:
    """A fake ``getaddrinfo`` for names (answers in turn, the last one repeated); literals pass."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.names: list[str] = []

    def __call__(self, host, port, family=0, type=0, proto=0, flags=0):
        try:
            ipaddress.ip_address(str(host).split("%")[0])
        except ValueError:
            pass
        else:
            return _real_getaddrinfo(host, port, family, type, proto, flags)
        self.names.append(host)
        address = self.answers[min(len(self.names), len(self.answers)) - 1]
        family_ = socket.AF_INET6 if ":" in address else socket.AF_INET
        sockaddr = (address, port or 0, 0, 0) if family_ == socket.AF_INET6 else (address, port or 0)
        return [(family_, socket.SOCK_STREAM, 6, "", sockaddr)]


@pytest.fixture
def resolver(monkeypatch):
    """Install a ``Resolver`` as ``socket.getaddrinfo``: the URL check and the connection
    both resolve through it."""

    def install(*answers: str) -> Resolver:
        fake = Resolver(*answers)
        monkeypatch.setattr(socket, "getaddrinfo", fake)
        return fake

    return install


@pytest.fixture
def connections(monkeypatch):
    """Every address a socket connects to; only loopback connections really happen."""
    seen: list[str] = []

    class Recording(socket.socket):
        def connect(self, address):
            seen.append(address[0])
            if not ipaddress.ip_address(address[0].split("%")[0]).is_loopback:
                raise ConnectionRefusedError(f"test: no connections to {address[0]}")
            return super().connect(address)

    monkeypatch.setattr(socket, "socket", Recording)
    return seen


@pytest.mark.parametrize("address", ["169.254.169.254", "::ffff:169.254.169.254", "10.0.0.5"])
def test_a_localhost_name_that_is_not_loopback_is_refused(resolver, address):
    names = resolver(address)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        rsps.add(responses.GET, "http://evil.localhost/.well-known/x", json={"issuer": "x"})
        with pytest.raises(DiscoveryError, match=r"loopback|link-local"):
            Fetcher().get_json("http://evil.localhost/.well-known/x", "the metadata")
        assert len(rsps.calls) == 0
    assert names.names == ["evil.localhost"]  # the check resolved the name itself


def test_rebinding_never_connects_to_the_link_local_address(resolver, connections):
    names = resolver("203.0.113.7", "169.254.169.254")
    with pytest.raises(DiscoveryError, match="link-local"):
        Fetcher(timeout=2).get_json("https://rebind.example/.well-known/x", "the metadata")
    assert len(names.names) >= 2  # the name was looked up again at connect time...
    assert "169.254.169.254" not in connections  # ...and that answer was never connected to


@pytest.mark.parametrize(
    "address",
    [
        "::a9fe:a9fe",  # IPv4-compatible
        "64:ff9b::a9fe:a9fe",  # NAT64 well-known prefix
        "64:ff9b:1::a9fe:a9fe",  # NAT64 local-use prefix, /96
        "64:ff9b:1:a9fe:a9:fe00::",  # NAT64 local-use prefix, /48 layout
        "2002:a9fe:a9fe::1",  # 6to4
        "2001:0:4136:e378:8000:63bf:5601:5601",  # Teredo, client 169.254.169.254
        "::a9fe:1",  # IPv4-compatible 169.254.0.1 (link-local, not just the metadata address)
    ],
)
def test_ipv6_embeddings_of_a_blocked_ipv4_address_are_refused(resolver, address):
    with pytest.raises(DiscoveryError, match="link-local"):
        check_url(f"https://[{address}]/x", "u")
    resolver(address)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        rsps.add(responses.GET, "https://embedded.example/x", json={})
        with pytest.raises(DiscoveryError, match="link-local"):
            Fetcher().get_json("https://embedded.example/x", "the metadata")
        assert len(rsps.calls) == 0


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "2606:4700::1111"])
def test_ipv6_addresses_embedding_public_ipv4_are_allowed(resolver, address):
    assert check_url(f"https://[{address}]/x", "u")


class _Document(BaseHTTPRequestHandler):
    hosts: list[str] = []

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        self.hosts.append(self.headers.get("Host", ""))
        body = json.dumps({"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_localhost_name_connects_to_the_address_it_was_checked_with(resolver, connections):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Document)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        names = resolver("127.0.0.1")
        assert Fetcher(timeout=2).get_json(f"http://app.localhost:{port}/doc", "the metadata") == (200, {"ok": True})
    finally:
        server.shutdown()
        server.server_close()
    assert "app.localhost" in names.names  # resolved, not waved through
    assert connections == ["127.0.0.1"]
    assert _Document.hosts == [f"app.localhost:{port}"]  # the name is kept for the Host header
