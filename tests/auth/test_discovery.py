"""Discovery: the challenge, the metadata URLs and their order, and metadata validation."""

from __future__ import annotations

import pytest
import responses

from mcpclient.auth import DiscoveryError
from mcpclient.auth._discovery import (
    fetch_resource_metadata,
    fetch_server_metadata,
    metadata_urls,
    parse_www_authenticate,
    resource_matches,
    resource_metadata_urls,
)
from mcpclient.auth._fetch import Fetcher


def test_challenge_parameters_are_parsed_with_quoting_and_several_challenges():
    [basic, bearer] = parse_www_authenticate(
        'Basic realm="a, b", Bearer error="insufficient_scope", scope="r w", resource_metadata="https://x/y"'
    )
    assert basic.params == {"realm": "a, b"}
    assert bearer.scheme == "Bearer" and bearer.error == "insufficient_scope"
    assert bearer.scopes == ["r", "w"] and bearer.resource_metadata == "https://x/y"


def test_resource_metadata_urls_are_path_suffixed_then_root():
    assert resource_metadata_urls("https://h.example/public/mcp") == [
        "https://h.example/.well-known/oauth-protected-resource/public/mcp",
        "https://h.example/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://h.example/") == ["https://h.example/.well-known/oauth-protected-resource"]


def test_server_metadata_urls_follow_the_specification_order():
    assert metadata_urls("https://a.example/tenant1") == [
        "https://a.example/.well-known/oauth-authorization-server/tenant1",
        "https://a.example/.well-known/openid-configuration/tenant1",
        "https://a.example/tenant1/.well-known/openid-configuration",
    ]
    assert metadata_urls("https://a.example") == [
        "https://a.example/.well-known/oauth-authorization-server",
        "https://a.example/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    ("resource", "server", "ok"),
    [
        ("https://h.example/mcp", "https://h.example/mcp", True),
        ("https://H.example:443/mcp/", "https://h.example/mcp", True),
        ("https://h.example", "https://h.example/mcp", True),
        ("https://h.example/mc", "https://h.example/mcp", False),
        ("https://evil.example/mcp", "https://h.example/mcp", False),
        ("http://h.example/mcp", "https://h.example/mcp", False),
    ],
)
def test_resource_must_identify_the_server(resource, server, ok):
    assert resource_matches(resource, server) is ok


@responses.activate
def test_discovery_tries_the_challenge_url_then_the_well_known_ones_in_order():
    responses.add(responses.GET, "https://h.example/hint", status=404)
    responses.add(responses.GET, "https://h.example/.well-known/oauth-protected-resource/mcp", status=404)
    responses.add(
        responses.GET, "https://h.example/.well-known/oauth-protected-resource",
        json={"resource": "https://h.example", "authorization_servers": ["https://a.example"]},
    )
    found = fetch_resource_metadata(Fetcher(), "https://h.example/mcp", "https://h.example/hint")
    assert found.authorization_servers == ["https://a.example"]
    assert [c.request.url for c in responses.calls] == [
        "https://h.example/hint",
        "https://h.example/.well-known/oauth-protected-resource/mcp",
        "https://h.example/.well-known/oauth-protected-resource",
    ]


@responses.activate
def test_oidc_metadata_is_found_after_oauth_metadata_is_missing():
    responses.add(responses.GET, "https://a.example/.well-known/oauth-authorization-server/t", status=404)
    responses.add(
        responses.GET, "https://a.example/.well-known/openid-configuration/t",
        json={"issuer": "https://a.example/t", "token_endpoint": "https://a.example/t/token"},
    )
    assert fetch_server_metadata(Fetcher(), "https://a.example/t").token_endpoint == "https://a.example/t/token"


@responses.activate
def test_metadata_with_another_issuer_is_refused():
    responses.add(
        responses.GET, "https://a.example/.well-known/oauth-authorization-server",
        json={"issuer": "https://attacker.example", "token_endpoint": "https://attacker.example/token"},
    )
    with pytest.raises(DiscoveryError, match="names issuer"):
        fetch_server_metadata(Fetcher(), "https://a.example", allow_fallback=True)


@responses.activate
def test_default_endpoints_only_for_servers_without_resource_metadata():
    for url in metadata_urls("https://a.example"):
        responses.add(responses.GET, url, status=404)
    with pytest.raises(DiscoveryError, match="publishes no metadata"):
        fetch_server_metadata(Fetcher(), "https://a.example")
    fallback = fetch_server_metadata(Fetcher(), "https://a.example", allow_fallback=True)
    assert fallback.fallback
    assert (fallback.authorization_endpoint, fallback.token_endpoint, fallback.registration_endpoint) == (
        "https://a.example/authorize", "https://a.example/token", "https://a.example/register",
    )
