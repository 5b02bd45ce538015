"""A stdio server that closes its stdin but runs on (issue #45, case 7).

Nothing can be written to it again, and closing its stdin tells it nothing: every later call
fails at once with ``ConnectionClosed`` (as with the official SDK), not after waiting for an
exit that does not come, and ``close()`` goes straight to ending it, also when it ignores
SIGTERM.
"""

from __future__ import annotations

import time

import pytest

from mcpclient import ConnectionClosed
from tests.faults.conftest import pid_alive
from tests.faults.test_stdio_pipes import ERAS, closed_within, open_client
from tests.helpers import RELEASED_WITHIN

pytestmark = pytest.mark.timeout(60)

#: How many calls are made after the server closed its stdin: before the fix each took 1 s,
#: so 30 s in all, far from the 10 s allowed.
LATER_CALLS = 30


@pytest.mark.parametrize("sigterm", ["obeyed", "ignored"])
@pytest.mark.parametrize("era", ERAS)
def test_calls_after_the_server_closed_its_stdin_fail_at_once_and_close_is_prompt(era, sigterm, usage):
    client, _ = open_client(era, *(["--ignore-sigterm"] if sigterm == "ignored" else []))
    try:
        pid = client.transport.pid
        assert client.call_tool("close_stdin").text == "stdin closed"
        start = time.monotonic()
        for _ in range(LATER_CALLS):
            with pytest.raises(ConnectionClosed, match="stdin"):
                client.call_tool("echo", {"text": "later"})
        took = time.monotonic() - start
        assert took < RELEASED_WITHIN, f"{LATER_CALLS} calls took {took:.1f}s to fail"
        closed_within(client)
        assert not pid_alive(pid)
        usage.assert_released()
    finally:
        client.close()


@pytest.mark.parametrize("era", ERAS)
def test_close_after_the_server_closed_its_stdin_is_prompt_though_it_ignores_sigterm(era, usage):
    client, _ = open_client(era, "--ignore-sigterm")
    if client.transport.pipes != "posix":
        client.close()
        pytest.skip("the portable pipes cannot see a closed stdin without writing to it (no poll())")
    try:
        pid = client.transport.pid
        assert client.call_tool("close_stdin").text == "stdin closed"
        closed_within(client)  # it cannot see its stdin end, and ignores SIGTERM: 4 s before the fix
        assert not pid_alive(pid)
        usage.assert_released()
    finally:
        client.close()
