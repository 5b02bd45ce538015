"""Stdio's spinning reads: a call waiting alone looks for a fast reply without sleeping.

Over stdio, a caller that reads its own reply inline (see test_stdio_inline.py) passes
``spin`` to ``receive_within`` when it is the only call waiting and the server's replies have
come within ``SPIN_WORTH`` on average (one call in ``SPIN_PROBE`` otherwise): the transport
then polls without waiting for up to ``SPIN_READ`` before it sleeps in the kernel, which
saves the wake-up of a sleeping thread. These tests pin when the engine asks for it, that the
transport's spin never outlasts its timeout nor loses a message, and that a reply arriving
after the spin still arrives. Against real processes.
"""

from __future__ import annotations

import re
import select
import sys
import threading
import time

import pytest

from mcpclient import Client, StdioTransport
from mcpclient._rpc import engine as engine_module
from mcpclient.transports.base import NOTHING
from tests.faults.conftest import HOSTILE, echo_from_threads
from tests.helpers import RELEASED_WITHIN

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not hasattr(select, "poll"), reason="needs poll() (POSIX)"),
]


class SpinRecorder(StdioTransport):
    """Remembers the ``spin`` of every ``receive_within`` call (the callers' inline reads; the
    reader thread uses ``receive``) and how many calls were waiting then. ``crowd`` adds a
    second waiting call just before each request goes out, and takes it away at the call's
    first inline read, once the call has decided whether to spin: left in the table, it would
    hand the pipe to the reader thread for good (it reads while calls wait)."""

    def __init__(self, *args, **kwargs) -> None:
        self.reads: list[tuple[float, int]] = []
        self.engine = None
        self.crowd = False
        super().__init__(*args, **kwargs)

    def send(self, message, *, timeout=None):
        if self.crowd and "id" in message and "method" in message:
            self.engine._pending["someone else"] = engine_module._Slot("tools/call", threading.Event())
        return super().send(message, timeout=timeout)

    def receive_within(self, timeout, spin=0.0):
        self.reads.append((spin, len(self.engine._pending)))
        self.engine._pending.pop("someone else", None)
        return super().receive_within(timeout, spin)


@pytest.fixture
def two_cpus(monkeypatch):
    monkeypatch.setattr(engine_module, "_cpus", lambda: 2)


@pytest.fixture
def generous(two_cpus, monkeypatch):
    """Spins long enough for any echo on a loaded machine: 15 ms, on while replies average
    under 7.5 ms, a probe every fourth call otherwise."""
    monkeypatch.setattr(engine_module, "SPIN_READ", 0.015)
    monkeypatch.setattr(engine_module, "SPIN_WORTH", 0.0075)
    monkeypatch.setattr(engine_module, "SPIN_PROBE", 3)


def open_client(*args: str) -> tuple[Client, SpinRecorder]:
    transport = SpinRecorder(HOSTILE + list(args))
    client = Client(transport, timeout=15, protocol="legacy")
    transport.engine = client._engine
    client.initialize()
    return client, transport


@pytest.mark.above_pipes("the engine's choice to spin")
def test_sequential_calls_spin_while_replies_come_fast(generous, monkeypatch):
    # A miss counts as SPIN_READ in the mean, so with SPIN_WORTH above it the mean stays under
    # SPIN_WORTH however slow a loaded machine makes the replies: every call that reads inline
    # must spin (its first read). A call that found the reader thread reading reads nothing
    # inline and does not count. (It asked for 80% of all reads before, which load broke.)
    monkeypatch.setattr(engine_module, "SPIN_WORTH", 1.0)
    client, transport = open_client()
    firsts: list[float] = []
    with client:
        for i in range(300):
            del transport.reads[:]
            assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
            if transport.reads:
                firsts.append(transport.reads[0][0])
                if len(firsts) == 30:
                    break
    assert len(firsts) == 30, f"only {len(firsts)} of 300 calls read inline"
    assert set(firsts) == {0.015}, firsts


@pytest.mark.above_pipes("the engine's choice to spin")
def test_slow_replies_turn_spinning_off_but_for_a_probe_and_fast_ones_bring_it_back(generous):
    client, transport = open_client()
    with client:
        assert client.call_tool("echo", {"text": "fast"}).text == "fast"
        # Each half 0.03 s apart: longer than the inline budget (the reader thread delivers
        # it) and than SPIN_READ, so each spin misses and counts as SPIN_READ in the mean.
        # Three misses do it from a mean of 0, fewer from a higher one; a call that found the
        # reader thread reading (a loaded machine) read nothing inline and does not count.
        for _ in range(60):
            assert client.call_tool("trickle", {"text": "slow", "pause": 0.03}).text == "slow"
            if client._engine._spin_skip == engine_module.SPIN_PROBE:  # a spin just missed
                break
        assert client._engine._spin_wait >= engine_module.SPIN_WORTH
        # Whether the first read of each next call that read inline spun (only those count
        # down SPIN_PROBE), until two in a row did.
        firsts: list[float] = []
        for i in range(300):
            del transport.reads[:]
            assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
            if transport.reads:
                firsts.append(transport.reads[0][0])
                if firsts[-2:] == [0.015, 0.015]:
                    break
    # SPIN_PROBE (3) calls without, then a probe; its fast reply brings the mean under
    # SPIN_WORTH again (then every call spins), or else another three go by before the next
    # probe (a reply slowed by a loaded machine).
    assert set(firsts) <= {0.0, 0.015}, firsts
    assert re.fullmatch(r"(---s)+s", "".join("s" if spin else "-" for spin in firsts)), firsts


@pytest.mark.above_pipes("the engine's choice to spin")
def test_a_call_that_is_not_alone_never_spins(generous):
    # Only calls that read inline count: on a loaded machine the reader thread may be reading
    # when a call starts (then that call reads nothing itself), so calls go on until ten
    # crowded inline reads were seen, and then until an alone one spun.
    client, transport = open_client()
    crowded: list[float] = []
    alone: list[float] = []
    with client:
        for i in range(300):
            del transport.reads[:]
            transport.crowd = True
            assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
            transport.crowd = False
            crowded += [spin for spin, waiting in transport.reads if waiting > 1]
            if len(crowded) >= 10:
                break
            if client._engine._pending.pop("someone else", None) is not None:
                # The reader thread read this reply: it keeps the pipe while calls wait, and
                # lends it again after a reply that leaves none waiting, as this call's will.
                assert client.call_tool("echo", {"text": "alone"}).text == "alone"
        for i in range(300):  # the calls made alone afterwards still spin
            del transport.reads[:]
            assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
            alone += [spin for spin, waiting in transport.reads if waiting == 1]
            if any(alone):
                break
    assert len(crowded) >= 10, f"only {len(crowded)} crowded inline reads in 300 calls"
    assert all(spin == 0.0 for spin in crowded), crowded
    assert any(spin > 0 for spin in alone), alone


@pytest.mark.above_pipes("the engine's choice to spin")
def test_on_one_cpu_nothing_spins(monkeypatch):
    monkeypatch.setattr(engine_module, "_cpus", lambda: 1)
    client, transport = open_client()
    with client:
        for i in range(20):
            assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
    assert transport.reads and all(spin == 0.0 for spin, _ in transport.reads)


@pytest.mark.above_pipes("the engine's choice to spin")
def test_concurrent_callers_with_spinning_each_get_their_own_reply(generous):
    client, transport = open_client()
    with client:
        assert echo_from_threads(client, threads=8, calls=150, timeout=30) == []
        for i in range(20):  # and alone again afterwards
            assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
    assert any(spin for spin, _ in transport.reads)


# -- the transport's side ---------------------------------------------------------------------

LATE_LINE = (
    "import sys, time\n"
    "time.sleep(float(sys.argv[1]))\n"
    "sys.stdout.write('{\"jsonrpc\": \"2.0\", \"method\": \"notifications/late\"}\\n')\n"
    "sys.stdout.flush()\n"
    "time.sleep(30)\n"
)


def late_line(delay: float) -> StdioTransport:
    """A child that writes one notification ``delay`` seconds after it starts."""
    return StdioTransport([sys.executable, "-c", LATE_LINE, str(delay)])


def test_a_message_that_comes_during_the_spin_is_returned_at_once():
    transport = late_line(0.2)
    try:
        start = time.monotonic()
        message = transport.receive_within(60.0, 30.0)  # spins for all of it: a missed line, 30 s
        took = time.monotonic() - start
    finally:
        transport.close()
    assert message == {"jsonrpc": "2.0", "method": "notifications/late"}
    assert took < RELEASED_WITHIN, took


def test_a_message_that_comes_after_the_spin_is_still_returned_within_the_timeout():
    transport = late_line(0.3)
    try:
        message = transport.receive_within(10.0, 0.001)
    finally:
        transport.close()
    assert message == {"jsonrpc": "2.0", "method": "notifications/late"}


def test_a_spin_longer_than_the_timeout_ends_with_the_timeout():
    transport = late_line(20)
    try:
        start = time.monotonic()
        message = transport.receive_within(0.2, 30.0)
        took = time.monotonic() - start
    finally:
        transport.close()
    assert message is NOTHING
    assert 0.15 <= took < RELEASED_WITHIN, took  # a spin past the timeout: 30 s



@pytest.mark.above_pipes("the engine's choice to spin")
def test_a_call_does_not_spin_while_another_thread_spins(generous):
    # One spinner per process (engine._spin_turn): two threads spinning for two clients
    # would take the GIL from each other while their replies wait.
    client, transport = open_client()
    with client:
        assert engine_module._spin_turn.acquire(timeout=5)  # as another thread's spin would
        try:
            del transport.reads[:]
            for i in range(10):
                assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
            while_taken = list(transport.reads)
        finally:
            engine_module._spin_turn.release()
        del transport.reads[:]
        for i in range(10):
            assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
        after = list(transport.reads)
    assert while_taken and all(spin == 0.0 for spin, _ in while_taken), while_taken
    assert any(spin for spin, _ in after), after


@pytest.mark.above_pipes("the engine's choice to spin")
def test_spin_reads_set_false_on_a_transport_turns_spinning_off(generous):
    transport = SpinRecorder(HOSTILE)
    transport.spin_reads = False
    client = Client(transport, timeout=15, protocol="legacy")
    transport.engine = client._engine
    with client:
        for i in range(20):
            assert client.call_tool("echo", {"text": f"n{i}"}).text == f"n{i}"
    assert transport.reads and all(spin == 0.0 for spin, _ in transport.reads)
