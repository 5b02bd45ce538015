"""The stdio transport's platform seam: which pipes a transport gets, and that the portable
ones (Windows' way) need neither ``poll``/``select`` nor non-blocking descriptors nor a pidfd.

The stdio suite and the stdio fault matrix run over both kinds (``stdio_pipes`` in
tests/conftest.py); this module checks the choice itself and what the portable kind must not use.
"""

from __future__ import annotations

import os
import select
import threading

import pytest

from mcpclient import Client, StdioTransport
from mcpclient.transports import _stdio_pipes
from tests.conftest import FAST_SERVER
from tests.helpers import wait_for


def test_the_pipes_keyword_chooses_the_kind_and_reopen_keeps_it(monkeypatch):
    monkeypatch.delenv(_stdio_pipes.ENV_VAR, raising=False)
    transport = StdioTransport(FAST_SERVER, stderr=None, pipes="portable")
    try:
        assert transport.pipes == "portable"
        again = transport.reopen()
        assert again.pipes == "portable"
        again.close()
    finally:
        transport.close()
    default = StdioTransport(FAST_SERVER, stderr=None)
    try:
        assert default.pipes == "posix"  # (on Linux, where the tests run)
    finally:
        default.close()


def test_the_environment_variable_forces_the_kind_and_the_keyword_wins_over_it(monkeypatch):
    monkeypatch.setenv(_stdio_pipes.ENV_VAR, "portable")
    assert _stdio_pipes.choose(None) == "portable"
    assert _stdio_pipes.choose("posix") == "posix"
    monkeypatch.setenv(_stdio_pipes.ENV_VAR, " POSIX ")
    assert _stdio_pipes.choose(None) == "posix"


def test_an_unknown_kind_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setenv(_stdio_pipes.ENV_VAR, "windows")
    with pytest.raises(ValueError, match="MCPCLIENT_STDIO='windows'.*posix, portable"):
        StdioTransport(FAST_SERVER, stderr=None)
    with pytest.raises(ValueError, match="pipes='nt'"):
        StdioTransport(FAST_SERVER, stderr=None, pipes="nt")


def test_the_portable_pipes_use_no_poll_no_select_no_pidfd_and_no_non_blocking_descriptor(monkeypatch):
    StdioTransport(FAST_SERVER, stderr=None).close()  # (the watchdog, POSIX's, started before)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the portable pipes used a POSIX-only call")

    monkeypatch.setattr(select, "poll", refused, raising=False)
    monkeypatch.setattr(select, "select", refused)
    monkeypatch.setattr(os, "set_blocking", refused)
    monkeypatch.setattr(os, "pidfd_open", refused, raising=False)
    monkeypatch.setattr(os, "eventfd", refused, raising=False)
    lines: list[str] = []
    # 10 MB on stderr before it reads stdin: the stderr thread must drain it.
    transport = StdioTransport(FAST_SERVER + ["--stderr-flood"], stderr=lines.append, pipes="portable")
    assert {"mcpclient-stdout", "mcpclient-stdin"} <= {thread.name for thread in threading.enumerate()}
    with Client(transport, timeout=10) as client:
        assert client.call_tool("echo", {"text": "x" * 200_000}).text == "x" * 200_000
        assert transport.frame({"jsonrpc": "2.0", "method": "n"}) is None  # no atomic writes: none
    assert sum(len(line) for line in lines) > 1_000_000
    assert wait_for(lambda: not [t for t in threading.enumerate() if t.name.startswith("mcpclient-") and t.is_alive()])
