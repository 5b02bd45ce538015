"""A view's declared domains reach its policy only as one public web origin each (docs/apps.md).

Read the way a server sends them (``UIResource.from_contents``) and judged in the policy
``content_security_policy`` builds: a wildcard over a public suffix, a host a browser reads as
a loopback, private, link-local or other non-global IPv4 address (in any of the forms the
WHATWG URL parser accepts), and ``localhost`` are dropped; one site's origins are kept.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient import types as t
from mcpclient._client.app_sources import _ends_in_a_number, _ipv4
from mcpclient._client.app_views import content_security_policy
from mcpclient.apps import MIME_TYPE, UIResource
from tests.node_tools import node22

IPV4 = re.compile(r"\d+\.\d+\.\d+\.\d+")

pytest.importorskip("publicsuffixlist")

DROPPED = [
    "https://*.com", "https://*.co.uk", "https://*.github.io", "https://*.example", "wss://*.com:443",
    "http://127.0.0.1:8888", "http://10.0.0.5", "https://192.168.1.1", "http://172.16.0.1",
    "http://169.254.169.254", "http://100.64.0.1", "http://0.0.0.0", "http://255.255.255.255",
    "http://127.1", "http://0x7f000001", "http://0x7F.1", "http://2130706433", "http://0177.0.0.1",
    "http://017700000001", "http://1.2.3.4.5", "http://1.2.3.256", "http://08.1.1.1", "https://*.8.8.8.8",
    "http://localhost:8888", "http://LOCALHOST", "http://a.localhost", "https://*.localhost",
    "https://example.com:99999",
]
KEPT = ["https://api.example.com", "https://*.cdn.example.com", "https://*.cdn.example", "https://8.8.8.8",
        "wss://live.example.com:443", "https://a.github.io", "https://*.a.github.io", "http://host-1.example:8080",
        "https://1a.example"]


def policy(domains: list[str]) -> dict[str, str]:
    contents = t.ResourceContents(uri="ui://v", mime_type=MIME_TYPE, text="<p>v</p>",
                                  meta={"ui": {"csp": {"connectDomains": domains}}})
    built = content_security_policy(UIResource.from_contents(contents))
    return dict(d.strip().split(" ", 1) for d in built.split(";"))


@pytest.mark.parametrize("entry", DROPPED)
def test_an_entry_that_is_not_one_public_origin_is_dropped(entry, caplog):
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        assert policy([entry, "https://ok.example.com"])["connect-src"] == "https://ok.example.com"
    assert "not one public web origin" in caplog.text


@pytest.mark.parametrize("entry", KEPT)
def test_one_sites_origin_is_kept(entry):
    assert policy([entry])["connect-src"] == entry


# -- hosts read as a browser reads them ------------------------------------------------------

WHATWG = """
const hosts = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(hosts.map((h) => { try { return new URL("http://" + h + "/").hostname; }
                                                catch (e) { return null; } })));
"""
part = st.one_of(
    st.integers(0, 2**32 + 5).map(str),
    st.integers(0, 2**32 + 5).map(lambda n: f"0x{n:x}"),
    st.integers(0, 2**32 + 5).map(lambda n: f"0X{n:X}"),
    st.integers(0, 2**32 + 5).map(lambda n: f"0{n:o}"),
    st.sampled_from(["0", "00", "0x", "08", "09", "1a", "a", "x", "example", "0x1g"]),
)
hosts = st.lists(part, min_size=1, max_size=5).map(".".join)


@pytest.mark.node
def test_hosts_are_read_as_ipv4_exactly_as_a_whatwg_parser_reads_them():
    node = node22()
    if node is None:
        pytest.skip("needs Node 22 (npm ci in tests/node)")
    examples: list[str] = ["127.1", "0x7f000001", "2130706433", "0177.0.0.1", "1.2.3.256", "08.1.1.1", "1a.example"]

    @settings(max_examples=400, database=None)
    @given(hosts)
    def collect(host: str) -> None:
        examples.append(host)

    collect()
    read = json.loads(subprocess.run([node, "-e", WHATWG], input=json.dumps(examples), capture_output=True,
                                     text=True, timeout=60, check=True).stdout)
    for host, browser in zip(examples, read):
        ours = _ipv4(host) if _ends_in_a_number(host) else None
        if not _ends_in_a_number(host):
            assert browser is not None and not IPV4.fullmatch(browser), (host, browser)
        else:
            assert (str(ours) if ours else None) == browser, (host, browser)
