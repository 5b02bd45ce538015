"""Server values nested hundreds or thousands of levels deep: nothing recurses over them.

The redactor walks them with a stack; over the legacy HTTP+SSE transport an error reply so
deep reaches its caller (redacted) and the reader thread reads on; so does an endpoint
event ``urljoin`` cannot read. OAuth metadata nested
200,000 deep is in ``test_oauth_hostile``, a SKILL.md frontmatter in ``test_skill_frontmatter``.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest

from mcpclient import Client, RPCError, SSETransport, TransportError
from mcpclient._core.redact import REDACTED, Redactor
from tests.security.legacy_sse import LegacySSE, scripted
from tests.security.test_secrets import exception_texts, forms, leaks
from tests.helpers import RELEASED_WITHIN

pytestmark = pytest.mark.timeout(60)

SECRET = "tok/" + uuid.uuid4().hex + "+x="
HEADERS = {"Authorization": f"Bearer {SECRET}"}


def nested(depth: int, leaf: object) -> object:
    value = leaf
    for level in range(depth):
        value = {"level": level, "next": [value], "secret": SECRET} if level % 2 else [value, SECRET]
    return value


def nested_text(depth: int) -> str:
    """JSON text of lists ``depth`` deep, the secret at every level (too deep for ``json.dumps``)."""
    return "[" * depth + json.dumps(SECRET) + f", {json.dumps(SECRET)}]" * depth


def test_the_redactor_walks_a_value_600_deep_without_recursing():
    redactor = Redactor()
    redactor.add(SECRET)
    value = nested(600, SECRET)
    redacted = redactor.redact_value(value)  # raised RecursionError
    assert SECRET not in json.dumps(redacted) and REDACTED in json.dumps(redacted)
    message = {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": SECRET, "data": value}}
    assert redactor.redact_message(message)["error"]["message"] == REDACTED
    assert SECRET not in redactor.excerpt(value, 10_000)


@pytest.mark.parametrize("depth", [600, 5000])
def test_an_error_nested_deep_over_legacy_sse_reaches_its_caller_and_the_reader_lives(depth):
    def reply(id: object) -> str:
        error = f'{{"code": -32000, "message": "no {SECRET}", "data": {nested_text(depth)}}}'
        return f'{{"jsonrpc": "2.0", "id": {json.dumps(id)}, "error": {error}}}'

    server = scripted(reply)
    try:
        transport = SSETransport(server.url, headers=HEADERS, endpoint_timeout=5)
        with Client(transport, timeout=5, protocol="legacy") as client:
            with pytest.raises(RPCError) as info:
                client.call_tool("echo", {})
            assert info.value.code == -32000
            assert leaks(exception_texts(info.value), forms(SECRET)) == []
            client.ping()  # the reader thread still reads
    finally:
        server.stop()


def test_an_endpoint_urllib_cannot_read_is_refused_and_the_reader_does_not_die():
    server = LegacySSE()
    server.endpoint = "http://[::1/messages"  # urljoin raises ValueError on it
    server.start()
    try:
        started = time.monotonic()
        with pytest.raises(TransportError, match="another origin"):
            SSETransport(server.url, endpoint_timeout=60)
        assert time.monotonic() - started < RELEASED_WITHIN  # refused at once, not after the 60 s endpoint timeout
    finally:
        server.stop()
