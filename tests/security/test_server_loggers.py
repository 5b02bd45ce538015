"""Server logger names map onto a bounded set of Python loggers.

Python keeps every logger it creates for the life of the process: a server naming a new
``logger`` in each ``notifications/message`` must not make the client create one each time.
A real SDK server (``sdk_hostile_text_server.py``, tool ``shout``) sends thousands of
messages under distinct names; Python's logger registry may grow by a bounded amount only.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

import mcpclient
from mcpclient._client import server_logging as _logging
from tests.helpers import wait_for

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(ROOT / "tests" / "security" / "sdk_hostile_text_server.py")]
NAMES = 3000


@pytest.fixture
def client():
    with mcpclient.connect(SERVER, protocol="legacy", timeout=60) as c:
        yield c


def test_thousands_of_server_logger_names_do_not_grow_pythons_logger_registry(client, caplog):
    before = set(logging.Logger.manager.loggerDict)
    dropped_before = client._engine._dispatch.dropped

    def messages() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.getMessage().split("] ", 1)[-1].startswith("message ")]

    def accounted() -> int:
        # On a loaded machine the dispatch pool's flood bound may drop some: counted, never lost silently.
        return len(messages()) + client._engine._dispatch.dropped - dropped_before

    with caplog.at_level(logging.INFO, logger="mcpclient.server"):
        client.call_tool("shout", {"count": NAMES}, timeout=60)
        assert wait_for(lambda: accounted() >= NAMES, timeout=30), accounted()
    new = set(logging.Logger.manager.loggerDict) - before
    servers = [name for name in new if name.startswith("mcpclient.server.")]
    assert len(servers) <= _logging.MAX_SERVER_LOGGERS, len(servers)
    assert len(new) <= _logging.MAX_SERVER_LOGGERS + 10, len(new)  # the rest: modules' own loggers
    logged = messages()
    assert NAMES // 2 <= len(logged) <= NAMES  # the messages are logged, each with its logger name
    number = max(int(r.getMessage().rsplit(" ", 1)[-1]) for r in logged)
    last = next(r for r in logged if r.getMessage().endswith(f"message {number}"))
    assert last.name == "mcpclient.server" and last.mcp_logger == f"name-{number}"
    assert last.getMessage().startswith("[hostile") and f"/name-{number}] " in last.getMessage()


def test_a_plain_name_keeps_its_child_logger_while_there_is_room(client, caplog, monkeypatch):
    monkeypatch.setattr(_logging, "_children", set())  # room, whatever other tests named before
    with caplog.at_level(logging.INFO, logger="mcpclient.server"):
        client.call_tool("shout", {"count": 1})
        assert wait_for(lambda: any("message 0" in r.getMessage() for r in caplog.records), timeout=30)
    record = next(r for r in caplog.records if "message 0" in r.getMessage())
    assert record.name == "mcpclient.server.name-0" and record.mcp_logger == "name-0"


def test_a_hostile_name_gets_no_logger_of_its_own(client, caplog):
    with caplog.at_level(logging.INFO, logger="mcpclient.server"):
        client.call_tool("shout")
        assert wait_for(lambda: any("logged" in r.getMessage() for r in caplog.records), timeout=30)
    record = next(r for r in caplog.records if "logged" in r.getMessage())
    assert record.name == "mcpclient.server"
    assert not any("FORGED" in name for name in logging.Logger.manager.loggerDict)
