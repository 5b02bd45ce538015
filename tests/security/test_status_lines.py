"""A status line quoting the credential shows it nowhere: the SSE POST here; Streamable HTTP
in ``test_secrets`` (the ``reason-*`` and ``*chunk-header`` modes of ``echo_server``), and the
OAuth endpoints in ``test_oauth_hostile``.
"""

from __future__ import annotations

import json
import uuid

import pytest

from mcpclient import Client, HTTPStatusError, SSETransport
from tests.security.legacy_sse import scripted
from tests.security.test_secrets import exception_texts, forms, leaks

pytestmark = pytest.mark.timeout(60)

SECRET = "tok/" + uuid.uuid4().hex + "+x="
HEADERS = {"Authorization": f"Bearer {SECRET}"}


def test_a_reason_phrase_echoing_the_credential_on_the_sse_post_shows_it_nowhere():
    server = scripted(lambda id: json.dumps({"jsonrpc": "2.0", "id": id, "result": {"content": []}}))
    try:
        transport = SSETransport(server.url, headers=HEADERS, endpoint_timeout=5)
        with Client(transport, timeout=5, protocol="legacy") as client:
            client.initialize()
            server.post_status = 403
            server.post_reason = lambda headers: f"denied for {headers.get('authorization')}"
            with pytest.raises(HTTPStatusError) as info:
                client.call_tool("echo", {})
        assert "403" in str(info.value)
        found = leaks(exception_texts(info.value), forms(SECRET, f"Bearer {SECRET}"))
        assert found == [], found[:3]
    finally:
        server.stop()
