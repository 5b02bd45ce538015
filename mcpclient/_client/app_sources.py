"""Which domains an MCP Apps view may declare: one public web origin each, judged as a browser would.

A view's ``_meta.ui.csp`` lists the origins it may reach (``mcpclient.apps``); each entry goes
into the view's Content Security Policy as one source expression. ``source`` keeps an entry
only when it is a scheme, a host and maybe a port, and the host is one site on the public
web:

* a wildcard (``https://*.example.com``) only over a registrable domain: never over a public
  suffix such as ``com``, ``co.uk`` or ``github.io`` (the Public Suffix List, from the
  ``publicsuffixlist`` package of the ``apps`` extra; without it no wildcard is kept);
* no host that a browser reads as an IPv4 address (``127.0.0.1``, but also ``127.1``,
  ``0x7f000001`` or ``2130706433``, as the WHATWG URL parser reads them) unless it is a
  global address, and no wildcard over one; no ``localhost`` nor ``*.localhost`` (browsers
  resolve those to the loopback address themselves). IPv6 literals never match the pattern.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ipaddress

__all__ = ["source"]

_SOURCE = re.compile(r"(https?|wss?)://(\*\.)?([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)(?::(\d{1,5}|\*))?/?")
_HEX = re.compile(r"0[xX][0-9A-Fa-f]*")


def _number(part: str) -> int | None:
    """One part of a WHATWG IPv4 address (decimal, ``0x`` hex or ``0`` octal), else None."""
    radix = 10
    if part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        part, radix = part[1:], 8
    if not part:
        return 0
    try:
        return int(part, radix) if part.isalnum() and part.isascii() else None
    except ValueError:
        return None


def _ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address a browser reads ``host`` as, or None when it reads it as no address."""
    parts = host.split(".")
    if len(parts) > 4 or not all(parts):
        return None
    numbers = [_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    value = values[-1] + sum(n << (8 * (3 - i)) for i, n in enumerate(values[:-1]))
    import ipaddress  # here: only a view's source list needs it, and it costs import time

    return ipaddress.IPv4Address(value)


def _ends_in_a_number(host: str) -> bool:
    """WHATWG's test: a host whose last label is a number is an IPv4 address or no host."""
    last = host.rsplit(".", 1)[-1]
    return last.isdigit() or _HEX.fullmatch(last) is not None


@functools.lru_cache(maxsize=1)
def _suffixes() -> Any:
    try:
        from publicsuffixlist import PublicSuffixList
    except ImportError:
        return None
    return PublicSuffixList()


def _registrable(host: str) -> bool:
    """Whether ``host`` is a domain below a public suffix (so ``*.host`` is one site's names)."""
    suffixes = _suffixes()
    return suffixes is not None and not suffixes.is_public(host)


def source(entry: object) -> str | None:
    """``entry`` as a CSP source expression when it is one public web origin, else None."""
    if not isinstance(entry, str):
        return None
    found = _SOURCE.fullmatch(entry)
    if found is None:
        return None
    wildcard, host, port = found.group(2), found.group(3).lower(), found.group(4)
    if port not in (None, "*") and int(port) > 65535:
        return None
    if host == "localhost" or host.endswith(".localhost"):
        return None
    if _ends_in_a_number(host):
        address = _ipv4(host)
        if wildcard or address is None or not address.is_global:
            return None
    elif wildcard and not _registrable(host):
        return None
    return entry.rstrip("/")
