"""Batched writes: a request sent while another thread writes goes out with that writer.

``Engine._send`` hands a small request to the thread holding the write turn when the
transport is a ``PipeTransport`` (stdio is; so is the double here); that writer sends what was handed over in one
``write_frames`` call after its own message, and gives back what the transport did not take
to its caller, who sends it itself. These tests drive each step with a double whose ``send``
can be held (so the turn stays taken) and whose ``write_frames`` takes as many frames as told.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from typing import Any

import pytest

from mcpclient import CancelToken, Client, RequestCancelled, RequestTimeout, TransportError
from mcpclient._core.options import CallOptions
from mcpclient.transports.base import PipeTransport, encode_message
from tests.doubles import QueueTransport, Reply, ScriptedServer
from tests.helpers import RELEASED_WITHIN, wait_for

pytestmark = pytest.mark.timeout(30)


class _NotReadInline(PipeTransport):
    """The pipe interface, with reads the engine never makes inline: its ``receive_within``
    is not as deep as ``QueueTransport.receive`` (``reads_inline``), so ``receive`` sees all."""

    def receive_within(self, timeout: float, spin: float = 0.0) -> Any:
        raise AssertionError("never read inline")


class BatchingTransport(QueueTransport, _NotReadInline):
    """A QueueTransport that batches: ``hold()`` keeps the next ``send`` (and so the write
    turn) until ``release()``; ``write_frames`` takes ``take`` frames (all when None)."""

    def __init__(self) -> None:
        super().__init__()
        self.take: int | None = None
        self.carried: list[dict[str, Any]] = []  # what went out through write_frames
        self.by_send: list[tuple[str, dict[str, Any]]] = []  # (thread name, message) through send
        self.batches: list[int] = []  # how many frames each write_frames call was given
        self.fail_with: BaseException | None = None
        self.max_frame = 4096  # bigger messages are not framed: they wait for their turn
        self.framed: list[str] = []  # the thread of every frame() call
        self._hold = False
        self.holding = threading.Event()
        self._release = threading.Event()
        self.pause_in_batch = False  # write_frames waits for go_on (after setting in_batch)
        self.in_batch, self.go_on = threading.Event(), threading.Event()

    def hold(self) -> None:
        self._hold, self._release = True, threading.Event()
        self.holding.clear()

    def release(self) -> None:
        self._release.set()

    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        if self._hold:
            self._hold = False
            self.holding.set()
            assert self._release.wait(10)
        encode_message(message)  # as a real transport does: what JSON cannot hold raises here
        self.by_send.append((threading.current_thread().name, message))
        super().send(message, timeout=timeout)

    def frame(self, message: dict[str, Any]) -> bytes | None:
        self.framed.append(threading.current_thread().name)
        data = encode_message(message) + b"\n"
        return data if len(data) <= self.max_frame else None

    def write_frames(self, frames: list[bytes]) -> int:
        self.batches.append(len(frames))
        if self.pause_in_batch:
            self.in_batch.set()
            assert self.go_on.wait(10)
        if self.fail_with is not None:
            raise self.fail_with
        taken = len(frames) if self.take is None else min(self.take, len(frames))
        for frame in frames[:taken]:
            message = json.loads(frame)
            self.carried.append(message)
            super().send(message)
        return taken


def echo(params: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    text = params["arguments"]["text"]
    return {"content": [{"type": "text", "text": text}]}


@pytest.fixture
def setup():
    transport = BatchingTransport()
    server = ScriptedServer(transport, {"tools/call": echo})
    client = Client(transport, timeout=10, protocol="legacy")
    client.initialize()
    yield client, transport, server
    transport.release()
    client.close()
    server.stop()


_numbers = itertools.count(1)


def in_thread(fn, *args, **kwargs) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            out["error"] = exc

    thread = threading.Thread(target=run, name=f"caller-{next(_numbers)}")  # told apart in by_send
    thread.start()
    return thread, out


def calls_named(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("method") == "tools/call" and m["params"]["arguments"]["text"] == text]


def hold_the_turn(client: Client, transport: BatchingTransport) -> tuple[threading.Thread, dict[str, Any]]:
    """A call whose write is held: its thread keeps the write turn until ``release()``."""
    transport.hold()
    writer = in_thread(client.call_tool, "echo", {"text": "writer"})
    assert transport.holding.wait(5)
    return writer


def test_a_request_sent_during_another_write_goes_out_with_that_writer_once(setup):
    client, transport, server = setup
    writer, writer_out = hold_the_turn(client, transport)
    others = [in_thread(client.call_tool, "echo", {"text": f"other-{i}"}) for i in range(3)]
    assert wait_for(lambda: len(client._engine._outbox.queue) == 3)
    assert not any(calls_named(transport.sent, f"other-{i}") for i in range(3))  # waiting for the writer
    transport.release()
    for thread, _ in [(writer, writer_out), *others]:
        thread.join(RELEASED_WITHIN)
        assert not thread.is_alive()
    assert writer_out["value"].text == "writer"
    assert [out["value"].text for _, out in others] == ["other-0", "other-1", "other-2"]
    assert transport.batches == [3]  # one write carried all three, after the writer's own
    for i in range(3):
        assert len(calls_named(transport.carried, f"other-{i}")) == 1
        assert len(calls_named(server.received, f"other-{i}")) == 1
    assert not calls_named([m for _, m in transport.by_send], "other-0")
    assert client._engine._outbox.writing is False
    assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_what_the_transport_does_not_take_goes_back_to_its_caller_who_sends_it(setup):
    client, transport, server = setup
    transport.take = 1  # the pipe has room for one frame
    writer, writer_out = hold_the_turn(client, transport)
    first = in_thread(client.call_tool, "echo", {"text": "first"})
    assert wait_for(lambda: len(client._engine._outbox.queue) == 1)
    second = in_thread(client.call_tool, "echo", {"text": "second"})
    assert wait_for(lambda: len(client._engine._outbox.queue) == 2)
    transport.release()
    for thread, _ in ((writer, writer_out), first, second):
        thread.join(RELEASED_WITHIN)
        assert not thread.is_alive()
    assert first[1]["value"].text == "first" and second[1]["value"].text == "second"
    assert len(calls_named(transport.carried, "first")) == 1
    assert not calls_named(transport.carried, "second")
    # The second went back to its own thread, which sent it through send(), once.
    resent = [(name, m) for name, m in transport.by_send if calls_named([m], "second")]
    assert [name for name, _ in resent] == [second[0].name]
    assert len(calls_named(server.received, "second")) == 1


def silent_unless(text: str):
    def handler(params: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        if params["arguments"]["text"] != text:
            raise Reply()  # no answer
        return echo(params, message)

    return handler


def test_a_cancel_never_overtakes_the_request_it_cancels(setup):
    client, transport, server = setup
    server.handlers["tools/call"] = silent_unless("writer")
    transport.pause_in_batch = True
    writer, _ = hold_the_turn(client, transport)
    token = CancelToken()
    cancelled = in_thread(client.call_tool, "echo", {"text": "cancelled"}, cancel=token)
    assert wait_for(lambda: len(client._engine._outbox.queue) == 1)
    transport.release()
    assert transport.in_batch.wait(5)  # the writer is sending it now
    token.cancel()  # too late to take it back: the notice waits for the write turn, the caller does not
    cancelled[0].join(RELEASED_WITHIN)
    assert not cancelled[0].is_alive(), "the caller waited for the cancel notice to be written"
    assert isinstance(cancelled[1].get("error"), RequestCancelled)
    time.sleep(0.2)
    assert not any(m.get("method") == "notifications/cancelled" for m in server.received)
    transport.go_on.set()
    assert wait_for(lambda: any(m.get("method") == "notifications/cancelled" for m in server.received))
    order = [m.get("method") if "id" not in m else m["params"].get("arguments", {}).get("text")
             for m in server.received if m.get("method") in ("tools/call", "notifications/cancelled")]
    assert order.index("cancelled") < order.index("notifications/cancelled")
    writer.join(RELEASED_WITHIN)


@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_a_request_still_in_a_stuck_writers_hands_is_taken_back_and_never_sent(setup, how):
    client, transport, server = setup
    writer, writer_out = hold_the_turn(client, transport)  # stuck, like a write to a full pipe
    token = CancelToken()
    kwargs = {"timeout": 0.3} if how == "timeout" else {"cancel": token}
    start = time.monotonic()
    handed = in_thread(client.call_tool, "echo", {"text": "handed"}, **kwargs)
    assert wait_for(lambda: len(client._engine._outbox.queue) == 1)
    if how == "cancel":
        token.cancel()
    handed[0].join(RELEASED_WITHIN)
    assert time.monotonic() - start < 0.3 + RELEASED_WITHIN
    error = handed[1].get("error")
    if how == "timeout":
        assert isinstance(error, RequestTimeout) and not error.delivered
        assert "could not be sent" in str(error)
    else:
        assert isinstance(error, RequestCancelled) and "before it was sent" in str(error)
    assert not client._engine._outbox.queue
    transport.release()
    writer.join(RELEASED_WITHIN)
    assert writer_out["value"].text == "writer"
    client.ping()  # a later message: anything left behind would have gone out before it
    assert not calls_named(server.received, "handed") and not calls_named(transport.sent, "handed")
    assert not server.notifications("notifications/cancelled")


def test_a_writer_interrupted_in_its_batch_sends_nothing_twice_and_strands_nothing(setup):
    client, transport, server = setup
    transport.fail_with, transport.pause_in_batch = KeyboardInterrupt(), True
    writer, writer_out = hold_the_turn(client, transport)
    in_batch = in_thread(client.call_tool, "echo", {"text": "in-batch"}, timeout=0.5)
    assert wait_for(lambda: len(client._engine._outbox.queue) == 1)
    transport.release()
    assert transport.in_batch.wait(5)  # the writer is inside write_frames with that request
    behind = in_thread(client.call_tool, "echo", {"text": "behind"})
    assert wait_for(lambda: len(client._engine._outbox.queue) == 1)
    transport.go_on.set()  # now the interrupt strikes
    writer.join(RELEASED_WITHIN)
    assert isinstance(writer_out.get("error"), KeyboardInterrupt)
    # The batch being written may have gone out: it is never sent again, its call times out.
    in_batch[0].join(RELEASED_WITHIN)
    assert isinstance(in_batch[1].get("error"), RequestTimeout)
    assert not calls_named(server.received, "in-batch")
    # What was handed over behind it went back to its caller at once, who sent it.
    behind[0].join(RELEASED_WITHIN)
    assert behind[1]["value"].text == "behind"
    assert [name for name, m in transport.by_send if calls_named([m], "behind")] == [behind[0].name]
    transport.fail_with, transport.pause_in_batch = None, False
    assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_a_request_too_big_for_one_atomic_write_waits_its_turn(setup):
    client, transport, server = setup
    transport.max_frame = 50  # smaller than the request
    writer, writer_out = hold_the_turn(client, transport)
    big = in_thread(client.call_tool, "echo", {"text": "big"})
    assert wait_for(lambda: big[0].name in transport.framed)
    assert not client._engine._outbox.queue  # not handed over: waiting for the write turn
    assert big[0].is_alive() and not calls_named(transport.sent, "big")
    transport.release()
    big[0].join(RELEASED_WITHIN)
    assert big[1]["value"].text == "big"
    assert [name for name, m in transport.by_send if calls_named([m], "big")] == [big[0].name]
    assert transport.batches == []
    writer.join(RELEASED_WITHIN)


@pytest.mark.parametrize("bad, error", [({"x": object()}, TypeError), ({"x": float("nan")}, TransportError)])
def test_a_request_json_cannot_hold_fails_the_same_way_whether_or_not_another_thread_writes(setup, bad, error):
    client, transport, server = setup
    with pytest.raises(error):
        client._engine.request("tools/call", bad, CallOptions(5))  # the write turn is free
    writer, writer_out = hold_the_turn(client, transport)
    with pytest.raises(error):
        client._engine.request("tools/call", bad, CallOptions(5))  # the turn is taken: it is framed
    assert not client._engine._outbox.queue
    transport.release()
    writer.join(RELEASED_WITHIN)
    assert writer_out["value"].text == "writer"
