"""``encode_message`` and ``decode_message`` call json's C halves directly: they must answer
exactly what ``json.dumps`` and ``json.loads`` answer, errors included."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient import ProtocolError
from mcpclient.transports.base import decode_message, encode_message

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def _dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None)
@given(_json_values)
def test_encoding_is_json_dumps_compact(value):
    try:
        expected = _dumps(value)
    except UnicodeEncodeError:  # a lone surrogate: neither can send it as UTF-8
        with pytest.raises(UnicodeEncodeError):
            encode_message(value)
        return
    assert encode_message(value) == expected


def test_encoding_errors_are_json_dumps_errors():
    circular: list = []
    circular.append(circular)
    for bad, error in ((circular, ValueError), ({"x": math.nan}, ValueError), ({"x": object()}, TypeError)):
        with pytest.raises(error) as ours:
            encode_message(bad)
        with pytest.raises(error) as theirs:
            _dumps(bad)
        assert str(ours.value) == str(theirs.value)


def test_a_circular_or_too_deep_value_leaves_the_shared_encoder_as_it_was():
    # One encoder without a circularity table serves every call: a circular value ends in
    # its RecursionError, and a checking encoder gives json.dumps's error.
    circular: dict = {"a": [1]}
    circular["a"].append(circular)
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    for _ in range(3):
        with pytest.raises(ValueError, match="Circular reference detected"):
            encode_message({"params": circular})
        with pytest.raises(RecursionError):
            encode_message(deep)
        assert encode_message({"a": circular["a"][0], "b": "é"}) == _dumps({"a": 1, "b": "é"})


def test_threads_encoding_at_once_each_get_their_own_message():
    import threading

    failures: list[str] = []

    def encode(n: int) -> None:
        for i in range(2000):
            value = {"id": n * 10_000 + i, "params": {"text": f"{n}-{i}", "list": list(range(i % 7))}}
            if encode_message(value) != _dumps(value):
                failures.append(f"{n}-{i}")

    workers = [threading.Thread(target=encode, args=(n,)) for n in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert failures == []


@settings(max_examples=300, deadline=None)
@given(_json_values, st.sampled_from(["", "\n", "\r\n", " \t\n", "\n\n"]), st.sampled_from(["", " ", "\n"]))
def test_decoding_is_json_loads(value, tail, head):
    data = (head + json.dumps(value, ensure_ascii=False) + tail).encode("utf-8", "surrogatepass")
    assert decode_message(data) == json.loads(data)
    assert decode_message(data.decode("utf-8", "surrogatepass")) == json.loads(data)


@pytest.mark.parametrize(
    "data",
    [
        b'\xef\xbb\xbf{"a":1}',  # a UTF-8 byte-order mark
        '{"a":1}'.encode("utf-16"),  # json.loads sniffs other encodings
        '{"a":1}'.encode("utf-32-le"),
        b'"\xed\xa0\x80"',  # a surrogate encoded in UTF-8, which json.loads lets through
        b"NaN",
        b'{"a":1}\n\n',
    ],
)
def test_decoding_what_json_loads_accepts_beyond_plain_utf8(data):
    assert repr(decode_message(data)) == repr(json.loads(data))


@pytest.mark.parametrize(
    "data",
    [b'{"a":1} x', b'{"a":', b"\xff", b'{"a":1}\x0b', b"", b"   ", b'{"a":1}{"b":2}', b"[" * 100_000],
)
def test_decoding_errors_are_protocol_errors_with_json_loads_reason(data):
    try:
        json.loads(data)
    except (ValueError, RecursionError) as exc:
        reason = str(exc)
    else:
        raise AssertionError("json.loads accepted it")
    with pytest.raises(ProtocolError) as caught:
        decode_message(data)
    assert reason in str(caught.value)
