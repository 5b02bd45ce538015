"""Every public Client method against the official-SDK test server, over stdio.

The checks live in ``tests/interop/suite.py`` and are shared with the HTTP transports; this
module only builds the clients and adds what is specific to stdio (the child process is gone
after ``close()``). Every test runs against both server modes (``era``).

Starting the SDK server costs about a second, so clients are shared where that is safe:
``client`` (no handlers) for the checks that only call the server, and ``peer_client`` (all
handlers, one dispatch thread started up front) for sampling, elicitation, roots, logs and
progress.
Tests that need a pristine client use ``connect``.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

import mcpclient
from mcpclient import ClientClosedError, StdioTransport
from tests.conftest import FAST_SERVER, SDK_SERVER, child_pids

from . import suite
from .peer import Connections, Peer
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

#: The server's two modes: both protocol eras (mcpclient picks the newest), or the handshake
#: era only. Each mode runs every test, with the protocol version mcpclient must settle on.
ERAS = {
    "dual-era": ([], "2026-07-28"),
    "legacy-only": (["--legacy-only"], "2025-11-25"),
}


@pytest.fixture(scope="module", params=sorted(ERAS))
def era(request) -> tuple[list[str], str]:
    return ERAS[request.param]


@pytest.fixture(scope="module")
def events_file(era, tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sdk-events") / "events.jsonl"


def sdk_transport(era, events_file: Path) -> StdioTransport:
    argv, _ = era
    return StdioTransport(SDK_SERVER + argv, env={"SDK_SERVER_EVENTS": str(events_file)})


@pytest.fixture(scope="module")
def client(era, events_file):
    """A client with no handlers: the server never sends it anything unasked, so no test
    starts a dispatch thread (the thread-leak check would see it)."""
    connections = Connections(lambda: sdk_transport(era, events_file))
    yield connections.open()
    connections.close_all()


@pytest.fixture(scope="module")
def handled(era, events_file):
    """(client, peer) with every handler installed; its one dispatch thread is started here."""
    connections = Connections(lambda: sdk_transport(era, events_file))
    shared = Peer()
    client = connections.open(shared, max_dispatch=1)
    client.set_log_level("debug")
    client.call_tool("log", {"message": "warm-up"})
    shared.wait_for("notifications/message", lambda p: p.get("data") == "warm-up")
    yield client, shared
    connections.close_all()


@pytest.fixture
def peer_client(handled):
    return handled[0]


@pytest.fixture
def peer(handled) -> Peer:
    shared = handled[1]
    shared.reset()
    return shared


@pytest.fixture
def connect(era, events_file):
    """``connect(peer=None, **install)``: a new server process and an initialized client on it."""
    connections = Connections(lambda: sdk_transport(era, events_file))
    yield connections.open
    connections.close_all()


def read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- handshake and tools ----------------------------------------------------------------------


def test_initialize_reports_version_server_info_capabilities_and_instructions(client, era):
    suite.check_handshake(client)
    assert client.protocol_version == era[1]


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


def test_timeout_raises_cancels_on_the_server_and_client_stays_usable(client, events_file):
    suite.check_timeout_cancels(client, lambda: read_events(events_file))


# -- server-initiated requests and notifications ----------------------------------------------


def test_sampling_handler_answers_the_server(peer_client, peer):
    suite.check_sampling(peer_client, peer)


def test_elicitation_handler_accepts_with_content(peer_client, peer):
    suite.check_elicitation_accepted(peer_client, peer)


def test_elicitation_handler_declines(peer_client, peer):
    suite.check_elicitation_declined(peer_client, peer)


def test_elicitation_without_handler_is_declined_automatically(connect):
    suite.check_elicitation_without_handler(connect(Peer(), elicitation=False))


def test_roots_are_listed_and_updated(peer_client, peer):
    suite.check_roots(peer_client, peer)


def test_log_tool_reaches_the_notification_handler(peer_client, peer):
    suite.check_log_notification(peer_client, peer)


def test_progress_reports_reach_on_progress(peer_client):
    suite.check_progress_reports(peer_client)


# -- subscriptions, list changes and caching ----------------------------------------------------


def test_resource_subscription_reports_updates(connect):
    peer = Peer()
    suite.check_resource_subscription(connect(peer), peer)


def test_subscribe_returns_once_the_server_listens(connect):
    peer = Peer()
    suite.check_subscribe_returns_once_the_server_listens(connect(peer), peer)


def test_tools_list_changed_reaches_the_handler(connect):
    peer = Peer()
    suite.check_tools_list_changed(connect(peer), peer)


def test_cache_honours_ttl_and_drops_on_list_changed(connect):
    peer = Peer()
    suite.check_cache(connect(peer, cache=True), peer)


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


# -- stdio specifics --------------------------------------------------------------------------


def test_close_leaves_no_child_process():
    client = mcpclient.Client(StdioTransport(SDK_SERVER), timeout=15)
    client.initialize()
    pid = client.transport.pid
    assert pid in child_pids()
    client.close()
    assert pid not in child_pids()
    assert client.transport.returncode is not None
    with pytest.raises(ClientClosedError):
        client.ping()


# -- bugs found by these tests (see the reasons) ------------------------------------------------


class SpyTransport(StdioTransport):
    """A StdioTransport that remembers every message it sent and every notification it read."""

    def __init__(self, *args, **kwargs) -> None:
        self.sent: list[dict] = []
        self.notifications_read: list[dict] = []
        super().__init__(*args, **kwargs)

    def send(self, message, *, timeout=None):
        self.sent.append(message)
        return super().send(message, timeout=timeout)

    def receive(self):
        return self._spy(super().receive())

    def receive_within(self, timeout):  # a caller reading its own reply (the engine's inline reads)
        return self._spy(super().receive_within(timeout))

    def _spy(self, message):
        if isinstance(message, dict) and "method" in message and "id" not in message:
            self.notifications_read.append(message)
        return message


def test_set_roots_after_initialize_does_not_notify_an_undeclared_capability():
    transport = SpyTransport(FAST_SERVER)  # a legacy server: only those are notified
    with mcpclient.Client(transport, timeout=15) as client:
        [init] = [m for m in transport.sent if m.get("method") == "initialize"]
        assert "roots" not in init["params"]["capabilities"]
        client.set_roots(["file:///late"])
        client.ping()
    assert "notifications/roots/list_changed" not in [m.get("method") for m in transport.sent]


def test_ai_tool_execute_with_timeout_none_means_no_limit():
    client = mcpclient.Client(StdioTransport(FAST_SERVER + ["--no-reply"]), timeout=0.3)
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(_run(echo.execute, {"text": "x"}, timeout=None)))
    try:
        client.initialize(timeout=15)
        [echo] = [tool for tool in mcpclient.tools(client, timeout=15) if tool.name == "echo"]
        thread.start()
        thread.join(1.0)  # well past the client's 0.3 s; the server never answers tools/call
        assert thread.is_alive(), f"execute(timeout=None) gave up: {outcome}"
    finally:
        client.close()  # ends the pending call with ClientClosedError
        if thread.is_alive():
            thread.join(5)


def _run(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        return exc


def test_notifications_reach_the_handler_in_wire_order():
    transport = SpyTransport(SDK_SERVER + ["--legacy-only"])  # logs need no opt-in there
    seen: list[str] = []
    done = threading.Event()

    def on_notification(method, params):
        if method != "notifications/message":
            return
        if params["data"] == "first":
            time.sleep(0.3)  # a handler that is slow once (a log sink flushing, say)
        seen.append(params["data"])
        if len(seen) == 2:
            done.set()

    client = mcpclient.Client(transport, timeout=15)
    client.set_notification_handler(on_notification)
    try:
        client.initialize()
        client.call_tool("log", {"message": "first"})
        client.call_tool("log", {"message": "second"})
        assert done.wait(5)
    finally:
        client.close()
    wire = [m["params"]["data"] for m in transport.notifications_read if m["method"] == "notifications/message"]
    assert wire == ["first", "second"]
    assert seen == wire
