"""Which thread wakes the caller of an HTTP reply (``Transport.deliver_replies_to``).

A POST's reply that is the first message of its response wakes its caller from the thread
that read it (the caller's own: it reads its POST's stream up to the reply), not through the
reader thread; a reply behind notifications still goes through the reader, so those
notifications reach their handlers first. Against the official SDK's server; which thread
took each reply is recorded by wrapping ``Engine._take_reply`` (it changes nothing). What a
stream holds after its reply is in ``tests/faults/test_sse_after_reply.py``.
"""

from __future__ import annotations

import threading
import time

import pytest

from mcpclient import Client
from mcpclient._rpc.engine import Engine
from mcpclient.transports import StreamableHTTPTransport

from .conftest import result


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


def test_a_json_reply_wakes_its_caller_from_the_sending_thread(shared_sdk_server, taken_on):
    server = shared_sdk_server("--transport", "streamable-http", "--json-response")
    with Client(StreamableHTTPTransport(server.url), protocol="legacy") as client:
        assert client.call_tool("echo", {"text": "ok"}).text == "ok"
    assert taken_on == [threading.current_thread().name]


def test_an_sse_reply_first_on_its_stream_is_taken_on_the_callers_thread(shared_sdk_server, taken_on):
    server = shared_sdk_server("--transport", "streamable-http")
    with Client(StreamableHTTPTransport(server.url), protocol="legacy") as client:
        assert client.call_tool("echo", {"text": "s"}).text == "s"
    assert taken_on == [threading.current_thread().name]


def test_a_reply_behind_progress_still_comes_after_every_progress_callback(shared_sdk_server, taken_on):
    """The official SDK's slow tool sends its progress, then its reply, on the call's stream:
    the reply goes through the reader thread, behind the notifications, and the call returns
    once every callback ran (each takes 0.1 s here: a reply that overtook them would return
    before)."""
    server = shared_sdk_server("--transport", "streamable-http")
    seen: list[float] = []

    def slow_callback(progress, total, message):
        time.sleep(0.1)
        seen.append(progress)

    with Client(StreamableHTTPTransport(server.url), protocol="legacy") as client:
        out = client.call_tool("slow", {"seconds": 0.3, "steps": 3}, on_progress=slow_callback)
        assert out.text == "done after 3 steps"
        assert seen == [1, 2, 3]
    assert taken_on == ["mcpclient-reader"]
