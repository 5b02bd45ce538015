"""``mcpclient.Retry`` against the official SDK's server (``tests/servers/sdk_retry_server.py``,
whose tools count their own runs) behind ``tests/http/faulty_front.py``, which answers 429/503
or drops the connection after the server answered, on the requests it is told.

Both eras: a 2026-07-28 server with no sessions, and a legacy-only one with sessions.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import attrs
import pytest

from mcpclient import (
    HTTP,
    CancelToken,
    ClientClosedError,
    HTTPStatusError,
    RequestCancelled,
    Retry,
    RPCError,
    TransportError,
    connect,
)
from tests.http.conftest import start_sdk_server, wait_for
from tests.http.faulty_front import Drop, FaultyFront, Refuse
from tests.test_retry import pausing

RETRY_SERVER = Path(__file__).resolve().parents[1] / "servers" / "sdk_retry_server.py"
#: The server's "busy, try again" JSON-RPC error code.
BUSY = -32050
#: Quick pauses: what is tested is which calls are sent again, not how long they wait.
QUICK = Retry(backoff=0.01, backoff_max=0.01)


@pytest.fixture(scope="module", params=["--stateless", "--legacy-only"], ids=["modern", "legacy"])
def server(request):
    started = start_sdk_server(request.param, script=RETRY_SERVER)
    yield started
    started.stop()


@pytest.fixture
def front(server):
    with FaultyFront(server.url) as made:
        yield made


def ran(client) -> dict[str, int]:
    """How many times each tool ran, as the server counts."""
    return json.loads(client.call_tool("ran").content[0].text)


def runs_of(client, tool: str, before: dict[str, int]) -> int:
    return ran(client).get(tool, 0) - before.get(tool, 0)


def attempts_seen(seen: list[tuple[str, int]], method: str = "tools/call") -> list[int]:
    return [attempt for name, attempt in seen if name == method]


def recording(seen: list[tuple[str, int]]):
    """A middleware that records each request it sees with its attempt number."""

    def middleware(message, next_):
        if message.direction == "send" and message.kind == "request":
            seen.append((message.method, message.options.attempt))
        return next_(message)

    return middleware


def test_a_read_only_tool_is_sent_again_after_a_503_and_a_reset(front):
    seen: list[tuple[str, int]] = []
    with connect(front.url(), timeout=20, retry=QUICK, middleware=[recording(seen)]) as client:
        client.list_tools()  # the annotations: lookup is readOnlyHint
        before = ran(client)
        front.fault("tools/call", Refuse(503), tool="lookup")
        front.fault("tools/call", Drop(), tool="lookup")
        seen.clear()

        result = client.call_tool("lookup", {"key": "k"})

        assert result.content[0].text == "value of k"
        assert front.seen("tools/call", "lookup") == ["refused 503", "dropped", "passed"]
        assert runs_of(client, "lookup", before) == 2  # the dropped attempt ran too: harmless, it reads
        assert attempts_seen(seen)[:3] == [1, 2, 3], "each attempt went through the middleware"


def test_a_tool_without_annotations_is_not_sent_again_after_a_reset_unless_the_call_opts_in(front):
    with connect(front.url(), timeout=20, retry=QUICK) as client:
        client.list_tools()  # busy_append has no annotations: it may change something
        before = ran(client)
        front.fault("tools/call", Drop(), tool="busy_append")

        with pytest.raises(TransportError) as caught:
            client.call_tool("busy_append", {"item": "a", "times": 0})

        assert caught.value.delivered is True
        assert front.seen("tools/call", "busy_append") == ["dropped"], "sent once: it may have run"
        assert runs_of(client, "busy_append", before) == 1

        front.fault("tools/call", Drop(), tool="busy_append")
        result = client.call_tool("busy_append", {"item": "b", "times": 0}, retry=QUICK.new(idempotent=True))

        assert result.content[0].text == "appended b"
        assert front.seen("tools/call", "busy_append") == ["dropped", "dropped", "passed"]
        assert runs_of(client, "busy_append", before) == 3


def test_a_refusal_that_proves_nothing_ran_is_sent_again_whatever_the_tool(front):
    with connect(front.url(), timeout=20, retry=QUICK) as client:
        client.list_tools()
        before = ran(client)
        front.fault("tools/call", Refuse(429, "0"), tool="append")  # destructiveHint

        assert client.call_tool("append", {"item": "x"}).content[0].text == "appended x"

        assert front.seen("tools/call", "append") == ["refused 429", "passed"]
        assert runs_of(client, "append", before) == 1


def test_a_refused_connection_is_sent_again_whatever_the_tool(front):
    def up_again(message, next_):  # the server is back for the second attempt
        if message.method == "tools/call" and message.options.attempt == 2:
            front.up()
        return next_(message)

    with connect(front.url(), timeout=20, retry=QUICK, middleware=[up_again]) as client:
        client.list_tools()
        before = ran(client)
        front.down()  # nothing listens: the connection is refused, the request never left

        assert client.call_tool("append", {"item": "r"}).content[0].text == "appended r"

        assert front.seen("tools/call", "append") == ["passed"]
        assert runs_of(client, "append", before) == 1


def test_a_json_rpc_error_code_chosen_as_transient_is_sent_again(front):
    with connect(front.url(), timeout=20, retry=QUICK.new(codes={BUSY})) as client:
        client.list_tools()
        before = ran(client)

        assert client.call_tool("busy", {"key": "two", "times": 2}).content[0].text == "ready two"
        assert runs_of(client, "busy", before) == 3

        with pytest.raises(RPCError) as caught:  # busy_append may change something: never again
            client.call_tool("busy_append", {"item": "c", "times": 1})
        assert caught.value.code == BUSY
        assert runs_of(client, "busy_append", before) == 1

    with connect(front.url(), timeout=20, retry=QUICK) as client:  # a code not chosen
        client.list_tools()
        with pytest.raises(RPCError):
            client.call_tool("busy", {"key": "other", "times": 1})


def test_a_calls_own_retry_replaces_the_clients(front):
    with connect(front.url(), timeout=20, retry=QUICK.new(codes={BUSY})) as client:
        client.list_tools()
        before = ran(client)
        with pytest.raises(RPCError):  # one attempt: the client's policy does not apply
            client.call_tool("busy", {"key": "once", "times": 1}, retry=Retry(attempts=1))
        assert runs_of(client, "busy", before) == 1


def test_the_opening_is_sent_again_too(front, server):
    modern = "--stateless" in server.proc.args
    opening = "server/discover" if modern else "initialize"
    front.fault(opening, Refuse(503, "0"))
    # The era named: one opening request, no probe racing the other era against it.
    with connect(front.url(), timeout=20, http=HTTP(max_retries=1), protocol="2026-07-28" if modern else "legacy") as client:
        assert client.call_tool("lookup", {"key": "k"}).content[0].text == "value of k"
    assert front.seen(opening)[:2] == ["refused 503", "passed"]


def test_each_attempt_is_a_request_of_its_own_through_the_middleware(front):
    seen: list[tuple[str, int]] = []
    ids: list[object] = []

    def ids_of_tool_calls(message, next_):
        if message.method == "tools/call":
            message = message.replace(options=attrs.evolve(message.options, on_sent=_also(ids.append, message.options.on_sent)))
        return next_(message)

    with connect(front.url(), timeout=20, retry=QUICK.new(codes={BUSY}),
                 middleware=[recording(seen), ids_of_tool_calls]) as client:
        client.list_tools()
        seen.clear()
        client.call_tool("busy", {"key": "three", "times": 2})

    assert attempts_seen(seen) == [1, 2, 3]
    assert len(ids) == 3 and len(set(ids)) == 3, f"three requests, three ids: {ids}"


def _also(first, then):
    def both(request_id):
        first(request_id)
        if then is not None:
            then(request_id)

    return both


def test_max_retries_is_a_spelling_of_retry(front):
    seen: list[tuple[str, int]] = []
    with connect(front.url(), timeout=20, http=HTTP(max_retries=2), middleware=[recording(seen)]) as client:
        assert client._conversation.retry == Retry(attempts=3)
        client.list_tools()
        before = ran(client)
        front.fault("tools/call", Refuse(503, "0"), tool="append", times=2)
        seen.clear()

        assert client.call_tool("append", {"item": "m"}).content[0].text == "appended m"

        assert front.seen("tools/call", "append") == ["refused 503", "refused 503", "passed"]
        assert attempts_seen(seen)[:3] == [1, 2, 3], "the attempts are the client's, seen by the middleware"
        assert runs_of(client, "append", before) == 1

    with pytest.raises(TypeError, match="not both"):
        connect(front.url(), http=HTTP(max_retries=2), retry=Retry())


# -- every pause ends at the call's deadline, its cancel and close() --------------------------

#: A pause far longer than any test waits: a test that fails waits it out.
LONG = Retry(backoff=60.0, backoff_max=60.0, jitter=0.0)


def test_a_pause_past_the_calls_timeout_is_not_taken(front):
    with connect(front.url(), timeout=30, retry=LONG) as client:
        client.list_tools()
        front.fault("tools/call", Refuse(503), tool="lookup")
        started = time.monotonic()
        with pytest.raises(HTTPStatusError) as caught:
            client.call_tool("lookup", {"key": "k"})  # 60 s of backoff > 30 s of timeout: at once
        assert time.monotonic() - started < 10
        assert caught.value.status_code == 503

        front.fault("tools/call", Refuse(503, "45"), tool="lookup")  # Retry-After 45 s > 30 s left
        started = time.monotonic()
        with pytest.raises(HTTPStatusError):
            client.call_tool("lookup", {"key": "k"})
        assert time.monotonic() - started < 10
        assert front.seen("tools/call", "lookup") == ["refused 503", "refused 503"]


def test_a_retry_after_past_the_policys_limit_is_not_waited_for(front):
    with connect(front.url(), timeout=120, retry=LONG.new(retry_after_max=5.0)) as client:
        client.list_tools()
        front.fault("tools/call", Refuse(503, "30"), tool="lookup")  # 30 s asked, 5 s allowed, 120 s left
        started = time.monotonic()
        with pytest.raises(HTTPStatusError) as caught:
            client.call_tool("lookup", {"key": "k"})
        assert time.monotonic() - started < 10 and caught.value.retry_after == 30.0
        front.fault("tools/call", Refuse(503, "0"), tool="lookup")  # within it: waited for, sent again
        assert client.call_tool("lookup", {"key": "k"}).content[0].text == "value of k"


def test_a_total_shorter_than_the_pause_gives_up_at_once(front):
    with connect(front.url(), timeout=120, retry=LONG.new(total=20.0)) as client:
        client.list_tools()
        front.fault("tools/call", Refuse(503), tool="lookup")
        started = time.monotonic()
        with pytest.raises(HTTPStatusError):
            client.call_tool("lookup", {"key": "k"})
        assert time.monotonic() - started < 10


def _pausing(front, client, caplog, **options):
    """Call lookup on a thread; it is refused and pauses 60 s. Returns (thread, outcome)."""
    outcome: dict[str, object] = {}

    def run():
        try:
            outcome["result"] = client.call_tool("lookup", {"key": "k"}, **options)
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            outcome["error"] = exc
        outcome["ended"] = time.monotonic()

    front.fault("tools/call", Refuse(503), tool="lookup")
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_for(lambda: pausing(caplog), timeout=20, what="the pause before attempt 2")
    return thread, outcome


def test_a_cancel_ends_the_pause(front, caplog):
    caplog.set_level("INFO", logger="mcpclient")
    with connect(front.url(), timeout=120, retry=LONG) as client:
        client.list_tools()
        token = CancelToken()
        thread, outcome = _pausing(front, client, caplog, cancel=token)
        assert "ended" not in outcome, outcome
        asked = time.monotonic()
        token.cancel("the user gave up")
        thread.join(10)
        assert "ended" in outcome, "the pause outlived the cancel"
        assert isinstance(outcome["error"], RequestCancelled)
        assert outcome["ended"] - asked < 10
        assert front.seen("tools/call", "lookup") == ["refused 503"], "nothing sent after the cancel"


def test_close_ends_the_pause(front, caplog):
    caplog.set_level("INFO", logger="mcpclient")
    client = connect(front.url(), timeout=120, retry=LONG)
    try:
        client.list_tools()
        thread, outcome = _pausing(front, client, caplog)
        assert "ended" not in outcome, outcome
        asked = time.monotonic()
        client.close()
        thread.join(10)
        assert "ended" in outcome, "the pause outlived close()"
        assert isinstance(outcome["error"], ClientClosedError)
        assert outcome["ended"] - asked < 10
        assert front.seen("tools/call", "lookup") == ["refused 503"]
    finally:
        client.close()


def test_a_pause_past_the_calls_max_total_is_not_taken(front):
    # timeout 120 s and a 60 s pause, but max_total 3 s: the pause is not taken (it would end past it)
    with connect(front.url(), timeout=120, retry=LONG) as client:
        client.list_tools()
        front.fault("tools/call", Refuse(503), tool="lookup")
        started = time.monotonic()
        with pytest.raises(HTTPStatusError):
            client.call_tool("lookup", {"key": "k"}, max_total=30)
        assert time.monotonic() - started < 10
