"""Guarded metadata fetches: HTTPS except loopback, every redirect checked, no metadata IPs."""

from __future__ import annotations

import socket

import pytest
import requests
import responses

from mcpclient.auth import DiscoveryError
from mcpclient.auth import _netguard
from mcpclient.auth._fetch import Fetcher, check_url


@pytest.mark.parametrize(
    "url",
    [
        "https://auth.example.com/.well-known/x",
        "http://localhost:3000/x",
        "http://127.0.0.1/x",
        "http://[::1]:8080/x",
        "https://10.0.0.5/x",
    ],
)
def test_allowed_urls(url):
    assert check_url(url, "u") == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://auth.example.com/x", "https"),
        ("ftp://auth.example.com/x", "https"),
        ("https://user:pw@auth.example.com/x", "user info"),
        ("https://auth.example.com/x#f", "fragment"),
        ("https://169.254.169.254/latest/meta-data", "link-local"),
        ("http://169.254.169.254/latest", "https"),
        ("https://[fe80::1]/x", "link-local"),
        ("https://[::ffff:169.254.169.254]/x", "link-local"),
        ("https://metadata.google.internal/x", "metadata"),
        ("https://100.100.100.200/x", "metadata"),
    ],
)
def test_refused_urls(url, reason):
    with pytest.raises(DiscoveryError, match=reason):
        check_url(url, "u")


def test_a_name_resolving_to_a_metadata_address_is_refused(monkeypatch):
    monkeypatch.setattr(
        _netguard, "_resolve", lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", 0))]
    )
    with pytest.raises(DiscoveryError, match="resolves to"):
        check_url("https://innocent.example.com/x", "u")


@responses.activate
def test_each_redirect_hop_is_checked():
    responses.add(responses.GET, "https://a.example/m", status=302, headers={"Location": "https://a.example/n"})
    responses.add(responses.GET, "https://a.example/n", status=302, headers={"Location": "https://169.254.169.254/"})
    with pytest.raises(DiscoveryError, match="redirect"):
        Fetcher().get_json("https://a.example/m", "the metadata")


@responses.activate
def test_a_cross_origin_redirect_to_a_safe_url_is_followed():
    responses.add(responses.GET, "https://a.example/m", status=301, headers={"Location": "https://b.example/m"})
    responses.add(responses.GET, "https://b.example/m", json={"ok": True})
    assert Fetcher().get_json("https://a.example/m", "the metadata") == (200, {"ok": True})


@responses.activate
def test_oversized_documents_are_refused():
    responses.add(responses.GET, "https://a.example/m", body=b"{" + b" " * (2 * 1024 * 1024) + b"}")
    with pytest.raises(DiscoveryError, match="larger"):
        Fetcher().get_json("https://a.example/m", "the metadata")


@responses.activate
def test_network_errors_become_authorization_errors():
    responses.add(responses.GET, "https://a.example/m", body=requests.ConnectionError("boom"))
    with pytest.raises(DiscoveryError, match="could not reach"):
        Fetcher().get_json("https://a.example/m", "the metadata")
