from __future__ import annotations

import socket

import pytest

from mcpclient.auth import _fetch


@pytest.fixture(autouse=True)
def _public_dns(monkeypatch):
    """Every host resolves to a public documentation address; no real DNS in unit tests."""

    def resolve(host, port, family=0, type=0, *args):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("203.0.113.10", 0))]

    monkeypatch.setattr(_fetch, "_resolve", resolve)
