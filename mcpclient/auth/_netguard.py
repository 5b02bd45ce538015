"""Which addresses the OAuth layer may connect to, checked where the connection is made.

Why at connect time: a URL check that resolves a name and a connection that resolves it
again can get two different answers (DNS rebinding: a public address for the check, then
169.254.169.254 for the connection). Here the connection resolves the name once, checks
every address it got, and connects only to those very addresses; TLS still uses the name
(SNI and certificate verification are urllib3's, on ``conn.host``, untouched).

The policy: never a link-local, cloud-metadata, unspecified or multicast address, however it
is written (IPv4-mapped, IPv4-compatible, NAT64, 6to4 or Teredo embeddings of a blocked IPv4
address included); plain http only to actual loopback addresses, whatever the name says.

Through a proxy the proxy resolves and connects, so only the URL checks of ``_fetch`` apply.
"""

from __future__ import annotations

import http.cookiejar
import ipaddress
import socket
from typing import Any, Iterator, List, Union

import requests
import requests.cookies
import urllib3.connection
import urllib3.connectionpool
import urllib3.exceptions
from urllib3.util import connection as _connection

__all__ = ["RefusedAddress", "checked_addresses", "forbidden_address", "guarded_session", "is_loopback_address"]

Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # 0.0.0.0 reaches the local host on Linux
_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated IPv4-compatible addresses
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215 local-use prefix
#: Where an RFC 6052 IPv4-embedded address keeps its IPv4 bits, per prefix length (bits 64-71 skipped).
_RFC6052_PREFIXES = (32, 40, 48, 56, 64, 96)


class RefusedAddress(Exception):
    """A connection the policy forbids; ``_fetch`` turns it into the caller's error."""


def _resolve(host: str, port: Any, family: int = 0, type: int = 0) -> List[Any]:  # noqa: A002
    """``socket.getaddrinfo``, looked up at each call (tests replace either)."""
    return socket.getaddrinfo(host, port, family, type)


def is_loopback_address(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def forbidden_address(address: Address) -> bool:
    """Whether the policy refuses ``address``, or an IPv4 address it embeds or translates to.

    IPv4-mapped and IPv4-compatible addresses are the IPv4 address itself to the socket
    layer: the whole policy applies to them. NAT64, 6to4 and Teredo addresses reach their
    IPv4 address through a translator or relay: those are refused when it is link-local or
    a metadata address (their zero bits would otherwise read as 0.0.0.0).
    """
    if _forbidden_plain(address):
        return True
    if not isinstance(address, ipaddress.IPv6Address):
        return False
    value = int(address)
    if address.ipv4_mapped is not None and _forbidden_plain(address.ipv4_mapped):
        return True
    if address in _COMPATIBLE and value > 1 and _forbidden_plain(ipaddress.IPv4Address(value & 0xFFFFFFFF)):
        return True  # :: and ::1 are not IPv4-compatible addresses
    return any(_link_local_or_metadata(inner) for inner in _translated(address, value))


def _forbidden_plain(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv4Address) and address in _THIS_NETWORK:
        return True
    return _link_local_or_metadata(address) or address.is_unspecified or address.is_multicast


def _link_local_or_metadata(address: Address) -> bool:
    return address in METADATA_ADDRESSES or address.is_link_local


def _translated(address: ipaddress.IPv6Address, value: int) -> Iterator[ipaddress.IPv4Address]:
    if address in _NAT64:
        yield ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if address in _NAT64_LOCAL:  # the operator picks the prefix length: try each
        yield from (_rfc6052_ipv4(value, length) for length in _RFC6052_PREFIXES)
    if address.sixtofour is not None:
        yield address.sixtofour
    if address.teredo is not None:
        yield from address.teredo


def _rfc6052_ipv4(value: int, prefix: int) -> ipaddress.IPv4Address:
    """The IPv4 address RFC 6052 embeds after a ``prefix``-bit prefix (bits 64-71 are skipped)."""
    if prefix == 96:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    # Bits 0-63, then bits 72-127: 120 bits in which the IPv4 address is contiguous.
    combined = ((value >> 64) << 56) | (value & ((1 << 56) - 1))
    return ipaddress.IPv4Address((combined >> (120 - prefix - 32)) & 0xFFFFFFFF)


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


def checked_addresses(host: str, port: Any, *, loopback_only: bool) -> list[str]:
    """Every address of ``host``, checked; raises ``RefusedAddress`` if any is refused.

    All of them, not just the first: a name that also resolves to a metadata address is
    refused outright rather than racing which one the connection tries. Raises
    ``socket.gaierror`` when the name does not resolve.
    """
    literal = _literal(host)
    if literal is not None:
        found = [literal]
    else:
        found = []
        for info in _resolve(host, port, 0, socket.SOCK_STREAM):
            address = _literal(str(info[4][0]))
            if address is not None and address not in found:
                found.append(address)
        if not found:
            raise socket.gaierror(socket.EAI_NONAME, f"{host} has no usable address")
    for address in found:
        if forbidden_address(address):
            raise RefusedAddress(f"{host} is or resolves to a link-local or metadata address ({address}); refused")
        if loopback_only and not is_loopback_address(address):
            raise RefusedAddress(
                f"plain http is allowed only to loopback addresses, and {host} is or resolves to {address}; refused"
            )
    return [str(address) for address in found]


def _connect_checked(conn: urllib3.connection.HTTPConnection, loopback_only: bool) -> socket.socket:
    """``HTTPConnection._new_conn``, connecting only to the addresses that were checked."""
    try:
        addresses = checked_addresses(conn.host, conn.port, loopback_only=loopback_only)
    except socket.gaierror as exc:
        raise urllib3.exceptions.NameResolutionError(conn.host, conn, exc) from exc
    last: OSError | None = None
    for address in addresses:
        try:
            return _connection.create_connection(
                (address, conn.port), conn.timeout, source_address=conn.source_address,
                socket_options=conn.socket_options,
            )
        except TimeoutError as exc:
            raise urllib3.exceptions.ConnectTimeoutError(
                conn, f"Connection to {conn.host} timed out. (connect timeout={conn.timeout})"
            ) from exc
        except OSError as exc:
            last = exc
    raise urllib3.exceptions.NewConnectionError(conn, f"Failed to establish a new connection: {last}") from last


class _HTTPConnection(urllib3.connection.HTTPConnection):
    def _new_conn(self) -> socket.socket:
        return _connect_checked(self, loopback_only=True)


class _HTTPSConnection(urllib3.connection.HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return _connect_checked(self, loopback_only=False)


class _HTTPPool(urllib3.connectionpool.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


class _GuardedAdapter(requests.adapters.HTTPAdapter):
    """An adapter whose direct connections go through ``_connect_checked``."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


def guarded_session(settings: requests.Session | None = None) -> requests.Session:
    """A session for the OAuth layer whose connections are checked, configured like ``settings``.

    A session of its own rather than the caller's: mounting the guard on the caller's session
    would change what their other requests may reach. It takes from ``settings`` what carries
    no credential: proxies, TLS settings (``verify``, ``cert``), ``trust_env``, hooks and the
    ``User-Agent``. Never its other headers, its ``auth`` or its cookies: those go only where
    ``_fetch.Fetcher`` decides (the MCP server's origin). It keeps no cookies of its own
    either. Adapters mounted on ``settings`` are not used.
    """
    session = requests.Session()
    session.cookies = requests.cookies.RequestsCookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    if settings is not None:
        agent = settings.headers.get("User-Agent")
        if agent:
            session.headers["User-Agent"] = agent
        session.proxies = settings.proxies
        session.verify = settings.verify
        session.cert = settings.cert
        session.trust_env = settings.trust_env
        session.hooks = settings.hooks
    adapter = _GuardedAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
