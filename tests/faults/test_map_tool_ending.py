"""``map_tool`` over an endless input ends with its client (issue #45, case 5).

With ``errors="return"`` a failed call is handed out as that item's error; but a closed client
or a dead connection is not one item's failure: every later call would fail the same way, and
the workers would read the endless input for ever (208,000 ``ClientClosedError`` in 5.5 s,
before). The batch ends with that error, within about a second, against an official SDK server.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time

import pytest

from mcpclient import Client, ClientClosedError, ConnectionClosed, MCPError, StdioTransport
from tests.conftest import SDK_SERVER
from tests.helpers import RELEASED_WITHIN

pytestmark = pytest.mark.timeout(120)

CONCURRENCY = 4
#: How many results are taken before the end is brought about.
BEFORE_THE_END = 20
#: How long the test lets a batch run on after the end before it stops it itself (the bug):
#: 30 s, far from the 10 s a batch is allowed to end in.
GUARD = 30.0


class Consumer:
    """Iterates ``client.map_tool("echo", <endless input>, errors="return")`` on a thread; after
    ``BEFORE_THE_END`` results it calls ``end()`` once, from another thread."""

    def __init__(self, client: Client, end) -> None:
        self.read = itertools.count()
        self.outcomes: list[object] = []
        self.raised: BaseException | None = None
        self.ended_at: float | None = None
        self.read_at_end: int | None = None
        self.end_at: float | None = None
        self._end = end
        self._thread = threading.Thread(target=self._run, args=(client,), daemon=True)
        self._thread.start()

    def _items(self):
        for i in self.read:
            yield {"text": str(i)}

    def _run(self, client: Client) -> None:
        try:
            for outcome in client.map_tool("echo", self._items(), concurrency=CONCURRENCY, errors="return"):
                self.outcomes.append(outcome)
                if len(self.outcomes) == BEFORE_THE_END:
                    threading.Thread(target=self._ending).start()
                if self.end_at is not None and time.monotonic() - self.end_at > GUARD:
                    break  # the test's own guard: the batch did not end by itself
        except BaseException as exc:  # recorded for the test
            self.raised = exc
        self.ended_at = time.monotonic()

    def _ending(self) -> None:
        self.end_at = time.monotonic()
        self._end()

    def join(self) -> None:
        self._thread.join(GUARD + 30)
        assert not self._thread.is_alive(), "map_tool is still running"


def check_ended(consumer: Consumer, error: type[BaseException]) -> None:
    assert consumer.end_at is not None and consumer.ended_at is not None
    assert isinstance(consumer.raised, error), f"the batch ended with {consumer.raised!r}"
    took = consumer.ended_at - consumer.end_at
    assert took < RELEASED_WITHIN, f"the batch ended {took:.1f}s after the end"
    handed = [o for o in consumer.outcomes[BEFORE_THE_END:] if isinstance(o, MCPError)]
    assert not handed, f"{len(handed)} errors handed out as items after the end, e.g. {handed[0]!r}"


def test_a_batch_over_an_endless_input_ends_when_the_client_closes():
    client = Client(StdioTransport(SDK_SERVER), timeout=10)
    client.initialize()
    consumer = Consumer(client, client.close)
    consumer.join()
    check_ended(consumer, ClientClosedError)


def test_a_batch_over_an_endless_input_ends_when_the_server_dies():
    client = Client(StdioTransport(SDK_SERVER), timeout=10)
    client.initialize()
    try:
        consumer = Consumer(client, lambda: os.kill(client.transport.pid, signal.SIGKILL))
        consumer.join()
        check_ended(consumer, ConnectionClosed)
    finally:
        client.close()
