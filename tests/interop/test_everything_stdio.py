"""``@modelcontextprotocol/server-everything`` over stdio: its tools, resources, prompts and
completions, and the sampling, elicitation and roots requests it sends.

The checks live in ``tests/interop/everything_suite.py`` (shared with the HTTP transports).
Checks that only call the server share one process (``client``, a client that declared no
capabilities); the rest get a fresh server with their handlers installed before
``initialize()`` (``connect``).
"""

from __future__ import annotations

import pytest

from mcpclient import ElicitationResult, StdioTransport
from tests.conftest import child_pids
from tests.node_tools import NODE_DIR, everything_server_cmd

from . import everything_suite as suite
from .peer import Connections, Peer

try:
    ARGV = everything_server_cmd("stdio")
except FileNotFoundError as exc:  # CI installs them; locally: `npm ci` in tests/node
    pytest.skip(f"server-everything needs Node 22 and {NODE_DIR}/node_modules: {exc}", allow_module_level=True)

pytestmark = pytest.mark.node

#: Given to the server's environment; get-env must report it.
ENV = {"MCPCLIENT_INTEROP": "everything-stdio"}


def transport() -> StdioTransport:
    return StdioTransport(ARGV, env=ENV)


@pytest.fixture(scope="module")
def client():
    """One client and server for the module's read-only checks.

    The server announces its per-client tools once after initialize(); waiting for that here
    starts the client's only dispatch thread, so no later test sees one start.
    """
    connections = Connections(transport)
    peer = Peer()
    client = connections.open(peer, max_dispatch=1, sampling=False, elicitation=False, roots=False)
    suite.wait_for_tools(peer)
    yield client
    connections.close_all()


@pytest.fixture
def connect():
    """``connect(peer=None, **install)``: a new server process and an initialized client on it."""
    connections = Connections(transport)
    with_roots: list[Peer] = []

    def open_(peer: Peer | None = None, **install: bool):
        client = connections.open(peer, **install)
        if peer is not None and install.get("roots", True):
            with_roots.append(peer)
        return client

    yield open_
    try:
        # The server asks for roots 350 ms after initialize(); closed before that, it lingers
        # on the unanswered request and close() has to wait for its grace period to end.
        for peer in with_roots:
            suite.wait_for_roots_sync(peer)
    finally:
        connections.close_all()


# -- handshake and read-only tools --------------------------------------------------------------


def test_initialize_reports_server_info_capabilities_and_instructions(client):
    suite.check_handshake(client)


def test_ping(client):
    suite.check_ping(client)


def test_client_without_capabilities_gets_only_the_base_tools(client):
    suite.check_tool_list_without_capabilities(client)


def test_echo(client):
    suite.check_echo(client)


def test_get_sum(client):
    suite.check_get_sum(client)


def test_invalid_arguments_are_an_error_result(client):
    suite.check_invalid_arguments(client)


def test_get_tiny_image_between_two_texts(client):
    suite.check_tiny_image(client)


def test_get_annotated_message_keeps_annotations(client):
    suite.check_annotated_message(client)


def test_get_env_sees_the_transport_env(client):
    suite.check_get_env(client, ENV)


def test_get_resource_links_are_readable(client):
    suite.check_resource_links(client)


def test_get_resource_reference_embeds_text_and_blob(client):
    suite.check_resource_reference(client)


def test_get_structured_content(client):
    suite.check_structured_content(client)


def test_trigger_long_running_operation_reports_progress(client):
    suite.check_long_running_operation(client)


def test_task_only_tool_reports_that_it_needs_tasks(client):
    suite.check_task_only_tool(client)


def test_ai_tools(client):
    suite.check_ai_tools(client)


# -- resources, prompts, completions ----------------------------------------------------------


def test_static_resources_list_and_read(client):
    suite.check_resources(client)


def test_resource_templates_list_and_read_text_and_blob(client):
    suite.check_resource_templates(client)


def test_reading_an_unknown_resource_raises_rpc_error(client):
    suite.check_read_unknown_resource(client)


def test_list_prompts(client):
    suite.check_prompts(client)


def test_get_prompt_with_arguments(client):
    suite.check_get_prompt(client)


def test_get_prompt_with_embedded_resources(client):
    suite.check_prompt_with_resource(client)


def test_complete_prompt_arguments_with_context_and_template_arguments(client):
    suite.check_completions(client)


# -- tools that need a fresh server ---------------------------------------------------------------


def test_client_with_capabilities_gets_the_conditional_tools(connect):
    peer = suite.url_peer()
    suite.check_tool_list(connect(peer), peer)


def test_timeout_then_the_client_is_still_usable(connect):
    suite.check_timeout(connect())


def test_gzip_file_as_resource_from_a_data_uri(connect):
    peer = Peer()
    suite.check_gzip_resource(connect(peer, sampling=False, elicitation=False, roots=False), peer)


def test_simulated_logging_reaches_the_notification_handler(connect):
    peer = Peer()
    suite.check_simulated_logging(connect(peer, sampling=False, elicitation=False, roots=False), peer)


def test_subscriber_updates_for_a_subscribed_resource(connect):
    peer = Peer()
    suite.check_subscriber_updates(connect(peer, sampling=False, elicitation=False, roots=False), peer)


def test_roots_are_fetched_after_initialize_and_on_change(connect):
    peer = Peer()
    suite.check_roots(connect(peer), peer)


def test_sampling_request_is_answered(connect):
    peer = Peer()
    suite.check_sampling(connect(peer, roots=False), peer)


def test_elicitation_request_is_accepted_with_content(connect):
    peer = suite.url_peer()
    suite.check_elicitation_accepted(connect(peer, roots=False), peer)


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_elicitation_request_is_refused(connect, action):
    peer = Peer(elicitation=ElicitationResult(action=action))
    suite.check_elicitation_refused(connect(peer, roots=False), peer, action)


def test_url_elicitation_request_and_error_path(connect):
    peer = suite.url_peer()
    suite.check_url_elicitation(connect(peer, roots=False), peer)


def test_close_leaves_no_child_process(connect):
    client = connect()
    pid = client.transport.pid
    assert pid in child_pids()
    client.close()
    assert pid not in child_pids()
