"""Parser differential: an origin decision is made on what urllib3 actually connects to.

The ground truth for every URL is the connection pool requests' own adapter picks for the
prepared request (``get_connection_with_tls_context``: that pool's scheme, host and port are
what a socket would be opened to). The rule: mcpclient says "same origin" only when that is
the configured origin. Checked for the shared helper and for OAuth's per-request decision
(which once used ``urlsplit`` alone), on a table of tricky URLs and on generated ones.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urljoin

import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient._core import origin as _origin
from mcpclient.auth import OAuth

CONFIGURED = "http://127.0.0.1:8000/mcp"
GOOD = ("http", "127.0.0.1", 8000)

# (URL, same origin as CONFIGURED?) -- relative ones are joined onto CONFIGURED first.
TABLE = [
    ("http://127.0.0.1:8000/other", True),
    ("HTTP://127.0.0.1:8000/x", True),
    ("http://127.0.0.1:8000/x?@evil.example:1#@evil.example", True),
    ("http://127.0.0.1:8000/\\evil.example/", True),  # a backslash in the path stays in the path
    ("/\\evil.example/x", True),
    ("\\\\evil.example/x", True),
    ("messages?session=1", True),
    # the finding: urlsplit reads the host after "@", urllib3 ends the host at "\"
    ("http://127.0.0.1:9999\\@127.0.0.1:8000/mcp", False),
    ("http://127.0.0.1:8000\\@127.0.0.1:9999/mcp", False),  # goes to 8000, but ambiguous
    ("http://evil.example\\@127.0.0.1:8000/", False),
    ("http://127.0.0.1:9999\\\\@127.0.0.1:8000/", False),
    ("http://127.0.0.1:99\t99\\@127.0.0.1:8000/", False),  # urlsplit drops the tab
    ("http://127.0.0.1:9999\n\\@127.0.0.1:8000/", False),
    ("http://127.0.0.1:9999%5C@127.0.0.1:8000/", False),  # user info
    ("http://127.0.0.1%3A9999@127.0.0.1:8000/", False),  # user info
    ("http://user:pw@127.0.0.1:8000/", False),  # user info from a server: refused
    ("http://127.0.0.1:8000@127.0.0.1:9999/", False),
    ("http://evil.example;@127.0.0.1:8000/", False),
    ("//evil.example/x", False),
    # the same scheme without "//" is a relative reference: a path on the configured origin
    ("http:\\\\127.0.0.1:9999/mcp", True),
    ("http:/127.0.0.1:9999/mcp", True),
    ("http:127.0.0.1:9999/mcp", True),
    ("https:\\\\127.0.0.1:8000/mcp", False),
    ("https://127.0.0.1:8000/mcp", False),
    ("http://127.0.0.1/mcp", False),
    ("http://127.0.0.1:80/mcp", False),
    ("http://127.0.0.1.:8000/mcp", False),  # trailing dot: another name
    ("http://[::1]:8000/mcp", False),
    ("http://[::ffff:127.0.0.1]:8000/mcp", False),
    ("http://127.0.0.%31:8000/mcp", False),  # urllib3 decodes the host, urlsplit does not
    ("http://0x7f.0.0.1:8000/mcp", False),
    ("http://127.0.0.1:8000:9999/mcp", False),
    ("ftp://127.0.0.1:8000/mcp", False),
]

DEFAULT_PORTS = [
    ("http://example.com/", "http://example.com:80/x", True),
    ("https://example.com/", "https://EXAMPLE.com:443/x", True),
    ("https://example.com/", "https://example.com./x", False),
    ("https://example.com./", "https://example.com/x", False),
    ("https://bücher.example/", "https://xn--bcher-kva.example/x", True),
    ("https://[::1]/", "https://[0:0::1]:443/x", True),
]


def connected_to(url: str) -> tuple[str, str, int] | None:
    """Where requests would open a socket for ``url``: its adapter's pool for the prepared URL."""
    try:
        prepared = requests.Request("GET", url).prepare()
        pool = requests.adapters.HTTPAdapter().get_connection_with_tls_context(prepared, verify=True)
    except (requests.RequestException, ValueError, LookupError):
        return None
    host = pool.host.strip("[]").lower()
    if ":" in host:  # compare IPv6 in one spelling
        host = str(ipaddress.ip_address(host))
    return pool.scheme, host, pool.port


def oauth_decides(url: str) -> bool:
    auth = OAuth(CONFIGURED)
    return auth._same_origin(url)


@pytest.mark.parametrize(("url", "expected"), TABLE)
def test_origin_decisions_on_tricky_urls(url, expected):
    joined = urljoin(CONFIGURED, url)
    assert _origin.same_origin(joined, GOOD) is expected
    if expected:
        assert connected_to(joined) == GOOD


@pytest.mark.parametrize(("url", "_"), TABLE)
def test_oauth_attaches_a_token_only_where_the_connection_goes(url, _):
    joined = urljoin(CONFIGURED, url)
    if oauth_decides(joined):
        assert connected_to(joined) == GOOD


@pytest.mark.parametrize(("configured", "url", "expected"), DEFAULT_PORTS)
def test_default_ports_case_and_idna(configured, url, expected):
    assert _origin.same_origin(url, _origin.origin(configured)) is expected


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:9999\\@127.0.0.1:8000/mcp", "http://127.0.0.%31:8000/", "http:/x/", "http://[::1/", "mailto:x@y"],
)
def test_ambiguous_or_unusable_urls_have_no_origin(url):
    with pytest.raises(ValueError):
        _origin.origin(url)


PIECES = st.sampled_from(
    ["127.0.0.1", "evil.example", ":8000", ":9999", ":80", "@", "\\", "/", "//", "%5C", "%40", "?", "#", ";",
     "\t", "\n", "[::1]", ":", ".", "%31", "user:pw@", "HTTP://", "http://", "http:"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=8))
def test_generated_urls_same_origin_only_where_the_connection_goes(pieces):
    url = "http://" + "".join(pieces)
    joined = urljoin(CONFIGURED, url)
    if _origin.same_origin(joined, GOOD) or oauth_decides(joined):
        assert connected_to(joined) == GOOD
