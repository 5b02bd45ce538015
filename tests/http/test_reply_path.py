"""Which thread wakes the caller of an HTTP reply (``Transport.deliver_replies_to``).

A POST's reply that is the first message of its response wakes its caller from the thread
that read it (the caller's own: it reads its POST's stream up to the reply), not through the
reader thread; a reply behind notifications still goes through the reader, so those
notifications reach their handlers first. What a stream holds after its reply is in
``tests/faults/test_sse_after_reply.py``.
"""

from __future__ import annotations

import threading
import time

import pytest

from mcpclient import Client
from mcpclient._rpc.engine import Engine
from mcpclient.transports import StreamableHTTPTransport

from .conftest import URL, result, sse


@pytest.fixture
def taken_on(monkeypatch):
    """The names of the threads ``Engine._take_reply`` took each tools/call reply on."""
    names: list[str] = []
    original = Engine._take_reply

    def recording(self, message):
        taken = original(self, message)
        if taken and isinstance(message.get("result"), dict) and "content" in message["result"]:
            names.append(threading.current_thread().name)
        return taken

    monkeypatch.setattr(Engine, "_take_reply", recording)
    return names


def _text(call_id: int, text: str) -> dict:
    return result(call_id, {"content": [{"type": "text", "text": text}]})


def test_a_json_reply_wakes_its_caller_from_the_sending_thread(fake, taken_on):
    with Client(StreamableHTTPTransport(URL)) as client:
        assert client.call_tool("t").text == "ok"
    assert taken_on == [threading.current_thread().name]


def test_an_sse_reply_first_on_its_stream_is_taken_on_the_callers_thread(fake, taken_on):
    fake.handlers["tools/call"] = lambda m, r: (200, {"Content-Type": "text/event-stream"}, sse(_text(m["id"], "s")))
    with Client(StreamableHTTPTransport(URL)) as client:
        assert client.call_tool("t").text == "s"
    assert taken_on == [threading.current_thread().name]


def test_a_reply_behind_progress_still_comes_after_every_progress_callback(fake, taken_on, monkeypatch):
    """The reader thread is slowed on notifications: a reply that overtook them would return
    before their callbacks ran."""
    def stream(m, r):
        token = m["params"]["_meta"]["progressToken"]
        notes = [{"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": n, "total": 3}} for n in (1, 2, 3)]
        return 200, {"Content-Type": "text/event-stream"}, sse(*notes, _text(m["id"], "done"))

    fake.handlers["tools/call"] = stream
    original = Engine._route

    def slow_route(self, message):
        if isinstance(message, dict) and message.get("method") == "notifications/progress":
            time.sleep(0.1)
        return original(self, message)

    monkeypatch.setattr(Engine, "_route", slow_route)
    seen: list[float] = []
    with Client(StreamableHTTPTransport(URL)) as client:
        out = client.call_tool("t", on_progress=lambda progress, total, message: seen.append(progress))
        assert out.text == "done"
        assert seen == [1, 2, 3]
    assert taken_on == ["mcpclient-reader"]
