from __future__ import annotations

import socket

import pytest

from mcpclient.auth import _netguard


@pytest.fixture(autouse=True)
def _public_dns(monkeypatch):
    """Every host resolves to a public documentation address (localhost names to loopback);
    no real DNS in unit tests."""

    def resolve(host, port, family=0, type=0, *args):
        name = host.lower().rstrip(".")
        address = "127.0.0.1" if name == "localhost" or name.endswith(".localhost") else "203.0.113.10"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, 0))]

    monkeypatch.setattr(_netguard, "_resolve", resolve)
