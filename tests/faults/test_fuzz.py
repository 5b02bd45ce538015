"""Property-based fuzzing of everything a server can send: converter, dispatcher, handlers.

The promise checked: whatever JSON arrives, nothing escapes but the documented errors
(``ProtocolError`` from the converter, ``MCPError`` subclasses from calls, ``RPCError`` from a
handler); the dispatcher (``Engine._route``) never raises at all. Each test also says which
outcome each input must get: which reply wakes which call, which error code a request earns,
which handler a notification reaches.
"""

from __future__ import annotations

import json
import math
import threading

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpclient import Client, ProtocolError, RPCError, types
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
def test_the_converter_gives_the_type_or_a_protocol_error(cls, data):
    value = data.draw(shaped(cls) | json_values)
    try:
        built = converter.structure(value, cls)
    except ProtocolError:
        built = None
    else:
        assert isinstance(built, cls)
        assert isinstance(value, dict), "only a JSON object can become a model"
    try:
        [listed] = converter.structure_list([value], cls)
    except ProtocolError:
        assert built is None, "a value read alone is read the same in a list"
    else:
        assert built is not None and repr(listed) == repr(built)  # (NaN in opaque JSON: never ==)
    if not isinstance(value, list):
        with pytest.raises(ProtocolError):
            converter.structure_list(value, cls)


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


def expected_read(reply: dict) -> tuple[type, object]:
    """What reading ``reply`` must give a caller: ``(dict, result)``, ``(RPCError, code)``
    for an error object, or ``(ProtocolError, None)`` for a reply that is neither."""
    if "error" in reply:
        error = reply["error"]
        if "result" in reply or not isinstance(error, dict):
            return ProtocolError, None
        code = error.get("code")
        return RPCError, code if isinstance(code, int) and not isinstance(code, bool) else 0
    result = reply.get("result")
    return (dict, result) if isinstance(result, dict) else (ProtocolError, None)


def check_read(reply: dict, request_id: object = 7) -> None:
    kind, value = expected_read(reply)
    if kind is dict:
        assert engine_module._read_reply(reply, "tools/call", request_id) is value
        return
    with pytest.raises(kind) as info:
        engine_module._read_reply(reply, "tools/call", request_id)
    assert type(info.value) is kind  # not merely a subclass: RPCError is not a ProtocolError
    if kind is RPCError:
        assert info.value.code == value and info.value.request_id == request_id


def our_id(request_id: object) -> object:
    """The id of ours a reply's ``id`` names: an int as sent, or the same number as an ASCII
    digit string or an integral float (servers that change our ids' type); anything else
    (booleans, Unicode digits, other strings) names no call of ours."""
    if isinstance(request_id, bool):
        return None
    if isinstance(request_id, int):
        return request_id
    if isinstance(request_id, str) and len(request_id) < 20 and request_id.isascii() and request_id.isdigit():
        return int(request_id)
    if isinstance(request_id, float) and math.isfinite(request_id) and request_id.is_integer():
        return int(request_id)
    return None


def replies_for_pending(message: object) -> dict[int, dict]:
    """Which pending call (1, 2, 3) each reply in ``message`` must wake: the first reply
    (an object with ``result`` or ``error`` and no method) to name it."""
    items = message if isinstance(message, list) else [message]
    woken: dict[int, dict] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("method") is not None:
            continue
        if "result" not in item and "error" not in item:
            continue
        request_id = our_id(item.get("id"))
        if request_id in (1, 2, 3) and request_id not in woken:
            woken[request_id] = item
    return woken


@FUZZ
@given(message=inbound)
def test_the_dispatcher_wakes_exactly_the_calls_a_message_answers(recorder, message):
    recorder.arm()
    slots = dict(recorder.engine._pending)
    recorder.engine._route(message)  # must not raise, whatever the message
    expected = replies_for_pending(message)
    woken = {request_id: slot.reply for request_id, slot in slots.items() if slot.reply is not None}
    assert woken.keys() == expected.keys()
    for request_id, reply in woken.items():
        assert reply is expected[request_id]
        assert request_id not in recorder.engine._pending  # the call's slot left the table
        check_read(reply, request_id)


@FUZZ
@given(result=json_values, error=json_values)
def test_reading_any_reply_gives_its_result_or_the_error_it_names(result, error):
    for reply in ({"result": result}, {"error": error}, {"result": result, "error": error}):
        check_read(reply)


def test_a_reply_whose_id_is_true_wakes_no_call(recorder):
    """JSON ``true`` is not an id: Python's ``True == 1`` must not make it answer call 1."""
    recorder.arm()
    recorder.engine._route({"jsonrpc": "2.0", "id": True, "result": {}})
    recorder.engine._route([{"jsonrpc": "2.0", "id": True, "result": {}}])
    assert all(slot.reply is None for slot in recorder.engine._pending.values())
    assert set(recorder.engine._pending) == {1, 2, 3}


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


def expected_answer(method: str, params: dict) -> object:
    """What ``client``'s handlers must answer: the result for ``ping`` and ``roots/list``,
    ``"valid"`` for a result or -32602 (sampling, elicitation: depends on the params), or
    -32601 for every method this client does not answer."""
    if method == "ping":
        return {}
    if method == "roots/list":
        return {"roots": [{"uri": "file:///tmp"}]}
    if method in ("sampling/createMessage", "elicitation/create"):
        return "valid"
    return RPCError.METHOD_NOT_FOUND


@FUZZ
@given(data=st.data(), method=st.sampled_from(METHODS) | st.text(max_size=10))
def test_each_request_gets_its_result_or_the_error_code_it_earns(client, data, method):
    params = data.draw(REQUEST_PARAMS.get(method, json_values) | json_values)
    if not isinstance(params, dict):
        params = {"value": params}  # the engine refuses non-object params before handlers run
    expected = expected_answer(method, params)
    try:
        answer = client._handlers.handle(method, params, CancelToken())
    except RPCError as exc:
        allowed = RPCError.INVALID_PARAMS if expected == "valid" else expected
        assert exc.code == allowed, f"{method!r} refused with {exc.code}, expected {expected!r}"
        return
    assert not isinstance(expected, int), f"{method!r} must be refused with {expected}, got {answer!r}"
    if expected != "valid":
        assert answer == expected
    elif method == "sampling/createMessage":
        assert answer["model"] == "m" and answer["content"] == {"type": "text", "text": "hi"}
    else:
        mode = params.get("mode", "form")
        assert answer["action"] in ("accept", "cancel")
        if mode == "url":
            assert answer == {"action": "accept"}  # a URL-mode answer carries no content
    json.dumps(answer, allow_nan=False)  # what goes back on the wire is JSON


@FUZZ
@given(method=st.sampled_from(METHODS), params=json_values)
def test_each_notification_reaches_the_handlers_it_names(method, params):
    transport = QueueTransport()
    client = Client(transport, timeout=1)
    seen: list[tuple] = []
    client.set_notification_handler(lambda m, p: seen.append(("any", m, p)))
    client.set_list_changed_handler(lambda kind: seen.append(("list", kind)))
    client.set_resource_updated_handler(lambda uri: seen.append(("updated", uri)))
    client.set_log_handler(lambda level, data, logger: seen.append(("log", level)))
    try:
        if not isinstance(params, dict):
            params = {"value": params}
        client._on_notification(method, params)
    finally:
        client.close()
    assert ("any", method, params) in seen and [s for s in seen if s[0] == "any"] == [("any", method, params)]
    kinds = {"notifications/tools/list_changed": "tools", "notifications/prompts/list_changed": "prompts",
             "notifications/resources/list_changed": "resources"}
    assert [s for s in seen if s[0] == "list"] == ([("list", kinds[method])] if method in kinds else [])
    uri = params.get("uri")
    updated = method == "notifications/resources/updated" and isinstance(uri, str)
    assert [s for s in seen if s[0] == "updated"] == ([("updated", uri)] if updated else [])
    if method != "notifications/message":
        assert not [s for s in seen if s[0] == "log"]


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


@pytest.mark.parametrize("schema", [[1], "object", 3, True])
def test_a_requested_schema_that_is_not_an_object_is_refused_before_the_handler(schema):
    """A form request must carry a JSON object schema (the spec's ``requestedSchema``):
    anything else is -32602 and the user's handler never sees it."""
    client = Client(QueueTransport(), timeout=1)
    asked = []
    client.set_elicitation_handler(lambda request: asked.append(request) or types.ElicitationResult(action="accept", content={}))
    try:
        with pytest.raises(RPCError) as info:
            client._handlers.handle("elicitation/create", {"message": "m", "requestedSchema": schema}, CancelToken())
        assert info.value.code == RPCError.INVALID_PARAMS and "requestedSchema" in str(info.value)
        assert asked == []
        # An object schema, or none, still reaches the handler.
        for params in ({"message": "m", "requestedSchema": {"type": "object", "properties": {}}}, {"message": "m"}):
            assert client._handlers.handle("elicitation/create", params, CancelToken()) == {"action": "accept", "content": {}}
        assert len(asked) == 2
    finally:
        client.close()
