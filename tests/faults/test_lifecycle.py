"""Life cycle: a Client dropped without close() is collected, warned about and cleaned up."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
import warnings

import pytest

from mcpclient import Client, StdioTransport
from mcpclient.testing import FakeServer
from tests.faults.conftest import HOSTILE, Lines, pid_alive
from tests.faults.forking import in_child
from tests.helpers import RELEASED_WITHIN, wait_for

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]


def stdio_client(lines: Lines | None = None) -> Client:
    client = Client(StdioTransport(list(HOSTILE), stderr=lines or Lines()), timeout=10)
    client.initialize()
    return client


def test_a_stdio_client_dropped_without_close_warns_and_stops_its_server_and_reader():
    client = stdio_client()
    assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    pid = client.transport.pid
    reader = client._engine._reader
    with pytest.warns(ResourceWarning, match="unclosed Client"):
        del client
        gc.collect()
    wait_for(lambda: not pid_alive(pid), timeout=2)
    reader.join(2)
    assert not reader.is_alive()


@pytest.mark.above_pipes("an in-memory server")
def test_a_fake_server_client_dropped_without_close_warns_and_closes_the_fake():
    fake = FakeServer()
    fake.add_tool("echo", lambda text: text)
    client = Client(fake, timeout=10)
    client.initialize()
    assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    reader = client._engine._reader
    with pytest.warns(ResourceWarning, match="unclosed Client"):
        del client
        gc.collect()
    assert fake.closed
    reader.join(2)
    assert not reader.is_alive()


def test_a_closed_client_is_not_closed_again_nor_warned_about_when_collected():
    client = stdio_client()
    client.close()
    assert not client._finalizer.alive
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del client
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_client_collected_in_a_forked_child_leaves_the_parents_server_alone():
    client = stdio_client()
    pid = client.transport.pid
    holder = [client]
    del client

    def drop_in_child() -> str:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            holder.clear()
            gc.collect()
        return "warned" if caught else "quiet"

    try:
        assert in_child(drop_in_child) == "quiet"
        assert pid_alive(pid)
        assert holder[0].call_tool("echo", {"text": "parent"}).text == "parent"
    finally:
        holder[0].close()


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill()")
def test_ctrl_c_during_a_call_tells_the_server_to_cancel_it_and_propagates_at_once():
    lines = Lines()
    client = stdio_client(lines)
    main = threading.main_thread().ident
    assert main == threading.get_ident()
    sent: list[float] = []

    def interrupt_when_the_call_arrived() -> None:
        wait_for(lambda: lines.starting("GOT tools/call"))
        sent.append(time.monotonic())
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt_when_the_call_arrived, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            client.call_tool("hang", timeout=60)  # an interrupt held back until the timeout: 60 s
        assert time.monotonic() - sent[0] < RELEASED_WITHIN
        assert client._engine._pending == {}
        (call,) = lines.starting("GOT tools/call")
        call_id = call.split()[2]
        cancel = wait_for(lambda: lines.starting("GOT notifications/cancelled"), timeout=RELEASED_WITHIN)[0]
        assert f'"requestId": {call_id}' in cancel
        assert client.call_tool("echo", {"text": "still usable"}).text == "still usable"
    finally:
        client.close()


@pytest.mark.above_pipes("an in-memory server")
def test_a_client_with_extensions_dropped_without_close_is_collected_and_closes_them():
    """The Session an extension keeps must not keep its Client alive (nor must the middleware)."""
    from mcpclient.extensions import Extension, Session

    class Keeper(Extension):
        closed = False
        session: Session | None = None

        def bind(self, session: Session) -> None:
            self.session = session

        def close(self) -> None:
            self.closed = True

    fake = FakeServer()
    fake.add_tool("echo", lambda text: text)
    keeper = Keeper()
    client = Client(fake, timeout=10, extensions=[keeper], middleware=[lambda message, next_: next_(message)])
    client.initialize()
    assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    with pytest.warns(ResourceWarning, match="unclosed Client"):
        del client
        gc.collect()
    assert fake.closed and keeper.closed
    assert keeper.session is not None and not keeper.session.is_open
