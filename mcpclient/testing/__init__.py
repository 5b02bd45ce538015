"""Test doubles for code that uses mcpclient, in the spirit of ``responses``.

``FakeServer`` is an MCP server living in the test process, built on the real ``Transport``
interface, so ``Client(FakeServer())`` runs the whole client with no subprocess::

    from mcpclient import Client
    from mcpclient.testing import FakeServer

    def test_weather_report():
        fake = FakeServer()
        fake.add_tool("forecast", result="sunny")
        fake.expect_call("forecast", {"city": "Oslo"})
        with fake, Client(fake) as client:
            assert my_code(client, "Oslo") == "Oslo: sunny"

Strict by default: leaving the ``with fake`` block (or the ``fake_mcp`` pytest fixture)
fails the test with a list of what was expected and what was called.

``recorded(path, target)`` records a session with a real server to a JSON Lines file and
replays it offline afterwards (the ``mcp_recording`` fixture does it per test), with
``faults=[Fault.drop(after=3), ...]`` injected where asked.
"""

from ._connection import Context
from ._expect import Call, Expectation
from ._fake import FakeServer
from ._in_process import InProcessTransport, connect_in_process
from ._faults import Fault
from ._recording import Matcher, RecordingTransport
from ._replay import ReplayTransport, recorded

__all__ = [
    "Call",
    "Context",
    "Expectation",
    "FakeServer",
    "Fault",
    "InProcessTransport",
    "Matcher",
    "RecordingTransport",
    "ReplayTransport",
    "connect_in_process",
    "recorded",
]
