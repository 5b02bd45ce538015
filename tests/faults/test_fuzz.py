"""Property-based fuzzing of everything a server can send: converter, dispatcher, handlers.

The promise checked: whatever JSON arrives, nothing escapes but the documented errors
(``ProtocolError`` from the converter, ``MCPError`` subclasses from calls, ``RPCError`` from a
handler); the dispatcher (``Engine._route``) never raises at all.
"""

from __future__ import annotations

import threading

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpclient import Client, MCPError, ProtocolError, RPCError, types
from mcpclient._rpc import engine as engine_module
from mcpclient._core.cancel import CancelToken
from mcpclient._rpc.engine import Engine, _Slot
from mcpclient._protocol.wire import converter
from tests.doubles import QueueTransport

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
#: Per type: nineteen types, so fewer examples each.
FUZZ_EACH = settings(FUZZ, max_examples=60)

# Keys a server's JSON is made of, so that generated objects reach past the first check.
KEYS = sorted(
    {converter.wire_name(a.name) for cls in vars(types).values() if attrs.has(cls) for a in attrs.fields(cls)}
    | {"type", "role", "content", "messages", "resource", "uri", "text", "blob", "data", "mimeType",
       "jsonrpc", "id", "method", "params", "result", "error", "code", "message", "progressToken",
       "progress", "total", "requestId", "reason", "level", "logger", "properties", "default",
       "mode", "requestedSchema", "url", "elicitationId"}
)
TYPES = ["text", "image", "audio", "resource", "resource_link", "tool_use", "tool_result", "ref/prompt", "x"]
METHODS = [
    "ping", "sampling/createMessage", "elicitation/create", "roots/list", "no/such",
    "notifications/message", "notifications/progress", "notifications/cancelled",
    "notifications/tools/list_changed", "notifications/prompts/list_changed",
    "notifications/resources/list_changed", "notifications/resources/updated", "notifications/x",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, 2, 3, -1, 10**300])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([float("inf"), float("-inf"), float("nan"), 1e308, -0.0])
    | st.text(max_size=20)
    | st.sampled_from(TYPES + METHODS + ["user", "assistant", "accept", "form", "url", "aGk=", "!!", "\u00b2"])
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=6),
    max_leaves=12,
)
# Lighter values for objects that have many keys: generation time grows with the leaves.
small_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=4,
)
ids = st.integers(min_value=-2, max_value=5) | st.text(max_size=4) | st.sampled_from(["1", "\u00b2", "1" * 5000]) | json_values
messages = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0")},
    optional={
        "id": ids,
        "method": st.sampled_from(METHODS) | json_values,
        "params": json_values,
        "result": json_values,
        "error": json_values | st.fixed_dictionaries({"code": json_values, "message": json_values}, optional={"data": json_values}),
    },
)
inbound = messages | st.lists(messages, max_size=3) | json_values

INBOUND_TYPES = [cls for cls in vars(types).values() if isinstance(cls, type) and attrs.has(cls)]


def shaped(cls: type) -> st.SearchStrategy:
    """Objects with ``cls``'s own wire keys, holding anything: they pass the first checks."""
    keys = {converter.wire_name(a.name): small_values for a in attrs.fields(cls)}
    return st.fixed_dictionaries({}, optional=keys)


@pytest.mark.parametrize("cls", INBOUND_TYPES, ids=lambda cls: cls.__name__)
@FUZZ_EACH
@given(data=st.data())
def test_the_converter_raises_only_protocol_error(cls, data):
    value = data.draw(shaped(cls) | json_values)
    for read in (converter.structure, converter.structure_list):
        try:
            read(value if read is converter.structure else [value], cls)
        except ProtocolError:
            pass


class Recorder:
    """An engine on a QueueTransport with three calls pending, one of them with progress."""

    def __init__(self) -> None:
        self.transport = QueueTransport()
        self.engine = Engine(
            self.transport,
            on_request=lambda method, params, token: {},
            on_notification=lambda method, params: None,
            max_dispatch=2,
        )
        self.progress: list[tuple] = []

    def arm(self) -> None:
        with self.engine._lock:
            self.engine._pending.clear()
            for request_id in (1, 2, 3):
                slot = _Slot("tools/call", threading.Event())
                if request_id == 1:
                    slot.on_progress = lambda *args: self.progress.append(args)
                self.engine._pending[request_id] = slot


@pytest.fixture
def recorder():
    rec = Recorder()
    yield rec
    rec.engine.close()


@FUZZ
@given(message=inbound)
def test_the_dispatcher_never_raises(recorder, message):
    recorder.arm()
    slots = dict(recorder.engine._pending)
    recorder.engine._route(message)  # must not raise, whatever the message
    for request_id, slot in slots.items():
        if slot.reply is not None:  # what the waiting caller would then get
            try:
                engine_module._read_reply(slot.reply, slot.method, request_id)
            except MCPError:
                pass


@FUZZ
@given(result=json_values, error=json_values)
def test_reading_any_reply_raises_only_mcp_errors(result, error):
    for reply in ({"result": result}, {"error": error}, {"result": result, "error": error}):
        try:
            engine_module._read_reply(reply, "tools/call", 7)
        except MCPError:
            pass


@pytest.fixture
def client():
    transport = QueueTransport()
    client = Client(transport, timeout=1)
    client.set_sampling_handler(lambda request: types.CreateMessageResult.from_text("hi", model="m"))
    client.set_elicitation_handler(lambda request: types.ElicitationResult(action="accept", content={}),
                                   modes=("form", "url"))
    client.set_roots(["file:///tmp"])
    client.set_notification_handler(lambda method, params: None)
    yield client
    client.close()


REQUEST_PARAMS = {
    "sampling/createMessage": shaped(types.CreateMessageRequest),
    "elicitation/create": shaped(types.ElicitationRequest),
}


@FUZZ
@given(data=st.data(), method=st.sampled_from(METHODS) | st.text(max_size=10))
def test_the_request_handlers_raise_only_rpc_errors(client, data, method):
    params = data.draw(REQUEST_PARAMS.get(method, json_values) | json_values)
    if not isinstance(params, dict):
        params = {"value": params}  # the engine refuses non-object params before handlers run
    try:
        client._handlers.handle(method, params, CancelToken())
    except RPCError:
        pass


@FUZZ
@given(method=st.sampled_from(METHODS), params=json_values)
def test_the_notification_handler_never_raises(client, method, params):
    if not isinstance(params, dict):
        params = {"value": params}
    client._on_notification(method, params)


def test_the_dispatcher_answers_every_fuzzed_request_and_stays_alive():
    """Smoke check of the real reader thread with a few hostile messages in a row."""
    transport = QueueTransport()
    client = Client(transport, timeout=2)
    for message in (
        {"jsonrpc": "2.0", "id": "a", "method": "sampling/createMessage", "params": {"messages": "xyz"}},
        {"jsonrpc": "2.0", "id": "b", "method": "elicitation/create", "params": {"requestedSchema": [1]}},
        {"jsonrpc": "2.0", "id": "c", "method": "roots/list"},
    ):
        transport.push(message)
    end = threading.Event()
    for _ in range(200):
        if len([m for m in transport.sent if m.get("id") in ("a", "b", "c")]) == 3:
            break
        end.wait(0.01)
    replies = {m["id"]: m for m in transport.sent if m.get("id") in ("a", "b", "c")}
    assert set(replies) == {"a", "b", "c"}
    assert client._engine._reader.is_alive()
    client.close()


# -- what the fuzzing found, pinned -----------------------------------------------------------


def test_a_reply_id_of_unicode_digits_is_dropped_not_an_error(recorder, caplog):
    recorder.arm()
    for request_id in ("\u00b2", "\u0661", "1" * 5000):
        recorder.engine._route({"jsonrpc": "2.0", "id": request_id, "result": {}})
    assert all(slot.reply is None for slot in recorder.engine._pending.values())
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_an_infinite_max_tokens_is_a_protocol_error():
    with pytest.raises(ProtocolError):
        converter.structure({"messages": [], "maxTokens": float("inf")}, types.CreateMessageRequest)


def test_a_requested_schema_that_is_not_an_object_does_not_break_the_elicitation_handler(client):
    params = {"message": "m", "requestedSchema": [1]}
    try:
        client._handlers.handle("elicitation/create", params, CancelToken())
    except RPCError:
        pass
