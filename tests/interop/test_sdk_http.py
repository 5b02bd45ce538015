"""Every public Client method against the official-SDK test server, over Streamable HTTP.

The same checks as ``test_sdk_stdio.py`` (they live in ``tests/interop/suite.py``), run against
one server process per mode: the server's default mode (mcpclient detects 2026-07-28 by
itself) and ``--legacy-only`` (it falls back to the handshake), each with SSE reply streams and
with ``--json-response`` bodies. A mode runs only the checks it can carry:

* the server asks the client (sampling, elicitation, roots) in the modern era with
  input-required results, whatever the body; in the legacy era only with a reply stream;
* progress and log notifications need a reply stream;
* ``touch`` notifies a legacy subscriber on the reply stream, a modern one on its
  ``subscriptions/listen`` stream; ``toggle_tool`` notifies legacy clients on the GET stream.

The server is shared by a mode's tests and clients are cheap, so every test opens its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from mcpclient import StreamableHTTPTransport
from tests.http.conftest import start_sdk_server

from . import suite
from .peer import Connections, Peer
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

pytestmark = pytest.mark.timeout(120)

MODERN, LEGACY = "2026-07-28", "2025-11-25"


class Mode(NamedTuple):
    args: tuple[str, ...]
    version: str
    asks: bool  # the server can ask the client things (sampling, elicitation, roots)
    streams: bool  # notifications about a call arrive with its reply (progress, logs)
    pushes: bool  # a legacy subscriber hears of touched resources (modern ones always do)
    cancels: bool = True  # the server stops a call whose client gave up on it


MODES = {
    "modern-sse": Mode((), MODERN, asks=True, streams=True, pushes=True),
    # The SDK's 2026 JSON-body path never notices a closed connection, the era's cancellation.
    "modern-json": Mode(("--json-response",), MODERN, asks=True, streams=False, pushes=True, cancels=False),
    "legacy-sse": Mode(("--legacy-only",), LEGACY, asks=True, streams=True, pushes=True),
    "legacy-json": Mode(("--legacy-only", "--json-response"), LEGACY, asks=False, streams=False, pushes=False),
}


@pytest.fixture(scope="module", params=list(MODES))
def mode(request) -> Mode:
    return MODES[request.param]


@pytest.fixture(scope="module")
def events_file(mode, tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sdk-http-events") / "events.jsonl"


@pytest.fixture(scope="module")
def server(mode, events_file):
    started = start_sdk_server(
        "--transport", "streamable-http", *mode.args, env={"SDK_SERVER_EVENTS": str(events_file)}
    )
    yield started
    started.stop()


@pytest.fixture
def connect(server):
    """``connect(peer=None, **install)``: an initialized client of its own on the shared server."""
    connections = Connections(lambda: StreamableHTTPTransport(server.url))
    yield connections.open
    connections.close_all()


@pytest.fixture
def client(connect):
    return connect()


@pytest.fixture
def peer() -> Peer:
    return Peer()


@pytest.fixture
def peer_client(connect, peer):
    return connect(peer)


@pytest.fixture
def asks(mode) -> None:
    if not mode.asks:
        pytest.skip("a legacy server answering with JSON bodies cannot ask the client anything")


@pytest.fixture
def streams(mode) -> None:
    if not mode.streams:
        pytest.skip("a JSON reply carries no notifications about the call")


def read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- handshake and tools ----------------------------------------------------------------------


def test_initialize_reports_version_server_info_capabilities_and_instructions(client, mode):
    suite.check_handshake(client)
    assert client.protocol_version == mode.version


def test_ping(client):
    suite.check_ping(client)


def test_list_tools_passes_schemas_through_verbatim(client):
    suite.check_list_tools(client)


def test_text_tool_round_trips_unicode(client):
    suite.check_text_tool(client)


def test_structured_output_arrives_as_structured_content(client):
    suite.check_structured_tool(client)


def test_structured_output_has_a_typed_view_built_from_the_output_schema(client):
    suite.check_typed_results(client)


def test_image_tool_decodes_to_a_png(client):
    suite.check_image_tool(client)


def test_failing_tool_is_an_error_result_until_raise_for_error(client):
    suite.check_error_tool(client)


def test_unknown_tool_and_bad_arguments_are_error_results(client):
    suite.check_tool_errors_are_results(client)


def test_progress_tool_completes(client):
    suite.check_progress_tool(client)


def test_mixed_content_keeps_wire_order(client):
    suite.check_mixed_content(client)


def test_server_state_persists_across_calls(client):
    suite.check_state_kept_between_calls(client)


def test_timeout_raises_cancels_on_the_server_and_client_stays_usable(mode, client, events_file):
    if not mode.cancels:
        pytest.skip("the SDK server's modern JSON-body path does not watch for the connection closing")
    suite.check_timeout_cancels(client, lambda: read_events(events_file))


# -- what the server asks of the client, and notifications about a call -------------------------


def test_sampling_handler_answers_the_server(asks, peer_client, peer):
    suite.check_sampling(peer_client, peer)


def test_elicitation_handler_accepts_with_content(asks, peer_client, peer):
    suite.check_elicitation_accepted(peer_client, peer)


def test_elicitation_handler_declines(asks, peer_client, peer):
    suite.check_elicitation_declined(peer_client, peer)


def test_elicitation_without_handler_is_declined_automatically(asks, connect):
    suite.check_elicitation_without_handler(connect(Peer(), elicitation=False))


def test_roots_are_listed_and_updated(asks, peer_client, peer):
    suite.check_roots(peer_client, peer)


def test_log_tool_reaches_the_notification_handler(streams, peer_client, peer):
    suite.check_log_notification(peer_client, peer)


def test_progress_reports_reach_on_progress(streams, peer_client):
    suite.check_progress_reports(peer_client)


# -- resources, prompts, completions, ai --------------------------------------------------------


def test_resources_list_and_read_text_and_blob(client):
    suite.check_resources(client)


def test_resource_template_lists_and_reads(client):
    suite.check_resource_templates(client)


def test_reading_a_missing_resource_raises_rpc_error(client):
    suite.check_read_missing_resource(client)


def test_list_prompts_with_arguments_and_descriptions(client):
    suite.check_prompts(client)


def test_get_prompt_with_arguments_resource_and_image(client):
    suite.check_get_prompt(client)


def test_complete_prompt_and_template_arguments(client):
    suite.check_completions(client)


def test_ai_tools_execute_and_raise_tool_error(client):
    suite.check_ai_tools(client)


# -- subscriptions, list changes and caching ----------------------------------------------------


def test_resource_subscription_reports_updates(mode, connect, peer):
    if not mode.pushes:
        pytest.skip("the server sends a legacy resource update on the reply stream, which JSON lacks")
    suite.check_resource_subscription(connect(peer), peer)


def test_subscribe_returns_once_the_server_listens(mode, connect, peer):
    if not mode.pushes:
        pytest.skip("the server sends a legacy resource update on the reply stream, which JSON lacks")
    suite.check_subscribe_returns_once_the_server_listens(connect(peer), peer)


def test_tools_list_changed_reaches_the_handler(connect, peer):
    suite.check_tools_list_changed(connect(peer), peer)


def test_cache_honours_ttl_and_drops_on_list_changed(connect, peer):
    suite.check_cache(connect(peer, cache=True), peer)
