"""The tests every transport runs against the official-SDK test server, written once.

``test_sdk_stdio.py`` and ``test_sdk_http.py`` import them (``from .sdk_checks import *``) and
give the fixtures they use: ``client`` (may be shared by the module), ``peer_client`` and
``peer`` (a client with every handler, and what its handlers saw), ``connect`` (a new client),
``events_file`` (what the server logged), ``version`` (the era the client must settle on) and
``carries`` (what the transport's mode carries: a ``Carries``). The checks themselves live in
``tests/interop/suite.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from . import suite
from .peer import Peer

__all__ = [
    "Carries", "asks", "streams", "read_events",
    "test_initialize_reports_version_server_info_capabilities_and_instructions", "test_ping",
    "test_list_tools_passes_schemas_through_verbatim", "test_text_tool_round_trips_unicode",
    "test_structured_output_arrives_as_structured_content",
    "test_structured_output_has_a_typed_view_built_from_the_output_schema", "test_image_tool_decodes_to_a_png",
    "test_failing_tool_is_an_error_result_until_raise_for_error",
    "test_unknown_tool_and_bad_arguments_are_error_results", "test_progress_tool_completes",
    "test_mixed_content_keeps_wire_order", "test_server_state_persists_across_calls",
    "test_timeout_raises_cancels_on_the_server_and_client_stays_usable",
    "test_sampling_handler_answers_the_server", "test_elicitation_handler_accepts_with_content",
    "test_elicitation_handler_declines", "test_elicitation_without_handler_is_declined_automatically",
    "test_roots_are_listed_and_updated", "test_log_tool_reaches_the_notification_handler",
    "test_progress_reports_reach_on_progress", "test_resources_list_and_read_text_and_blob",
    "test_resource_template_lists_and_reads", "test_reading_a_missing_resource_raises_rpc_error",
    "test_list_prompts_with_arguments_and_descriptions", "test_get_prompt_with_arguments_resource_and_image",
    "test_complete_prompt_and_template_arguments", "test_ai_tools_execute_and_raise_tool_error",
    "test_resource_subscription_reports_updates", "test_subscribe_returns_once_the_server_listens",
    "test_tools_list_changed_reaches_the_handler", "test_cache_honours_ttl_and_drops_on_list_changed",
]


class Carries(NamedTuple):
    """What a transport's mode carries."""

    asks: bool = True  # the server can ask the client things (sampling, elicitation, roots)
    streams: bool = True  # notifications about a call arrive with its reply (progress, logs)
    pushes: bool = True  # a legacy subscriber hears of touched resources (modern ones always do)
    cancels: bool = True  # the server stops a call whose client gave up on it


@pytest.fixture
def asks(carries: Carries) -> None:
    if not carries.asks:
        pytest.skip("a legacy server answering with JSON bodies cannot ask the client anything")


@pytest.fixture
def streams(carries: Carries) -> None:
    if not carries.streams:
        pytest.skip("a JSON reply carries no notifications about the call")


def pushes(carries: Carries) -> None:
    if not carries.pushes:
        pytest.skip("the server sends a legacy resource update on the reply stream, which JSON lacks")


def read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- handshake and tools ----------------------------------------------------------------------


def test_initialize_reports_version_server_info_capabilities_and_instructions(client, version):
    suite.check_handshake(client)
    assert client.protocol_version == version


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


def test_timeout_raises_cancels_on_the_server_and_client_stays_usable(carries, client, events_file):
    if not carries.cancels:
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


def test_resource_subscription_reports_updates(carries, connect):
    pushes(carries)
    peer = Peer()
    suite.check_resource_subscription(connect(peer), peer)


def test_subscribe_returns_once_the_server_listens(carries, connect):
    pushes(carries)
    peer = Peer()
    suite.check_subscribe_returns_once_the_server_listens(connect(peer), peer)


def test_tools_list_changed_reaches_the_handler(connect):
    peer = Peer()
    suite.check_tools_list_changed(connect(peer), peer)


def test_cache_honours_ttl_and_drops_on_list_changed(connect):
    peer = Peer()
    suite.check_cache(connect(peer, cache=True), peer)
