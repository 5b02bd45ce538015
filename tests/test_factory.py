"""Every Client option given to connect, open_target, a config entry or ClientGroup reaches
the Client: they all build it with one factory, and these tests list the options from
``Client.__init__`` itself, so an option added there and not forwarded fails here."""

from __future__ import annotations

import inspect

import pytest

from mcpclient import Client, ClientGroup, connect, types as t
from mcpclient._build.open import open_target
from mcpclient.extensions import Extension
from mcpclient.lock import Lock
from mcpclient.policy import Policy, Rule
from mcpclient.config import ServerConfig
from mcpclient.testing import FakeServer
from tests.conftest import FAST_SERVER

pytestmark = pytest.mark.timeout(60)

#: A value for each Client option, none of them its default.
SAMPLES = {
    "timeout": 7.5,
    "client_info": t.Implementation(name="probe", version="9.9"),
    "max_dispatch": 3,
    "protocol": "legacy",
    "cache": True,
    "cache_partition": "user-42",
    "output_validation": "off",
    "apps": True,
    "telemetry": False,
    "middleware": (lambda message, next_: next_(message),),
    "extensions": (Extension(),),
    "keepalive": 45.0,
    "policy": Policy([Rule("allow")]),
    "lock": Lock("probe.lock"),
    "on_change": "warn",
    "on_session_lost": "reinitialize",
}
#: Client options that cannot take a sample over the stdio and in-memory targets used here,
#: and where each is tested passing through instead.
NOT_SAMPLED = {"resume": "a Streamable HTTP session: tests/http/test_resume_session.py (connect)"}


def client_options() -> set[str]:
    return {name for name in inspect.signature(Client.__init__).parameters if name not in ("self", "transport")}


def test_every_client_option_has_a_sample():
    assert set(SAMPLES) | set(NOT_SAMPLED) == client_options(), "add a sample for the new Client option"


@pytest.fixture
def recorded(monkeypatch):
    """The keyword arguments of every Client built during the test."""
    calls: list[dict] = []
    original = Client.__init__

    def recording_init(self, transport, **kwargs):
        calls.append(kwargs)
        original(self, transport, **kwargs)

    monkeypatch.setattr(Client, "__init__", recording_init)
    return calls


def sampling(request):
    raise AssertionError("never asked")


def notifications(method, params):
    pass


HANDLERS = {"sampling_handler": sampling, "notification_handler": notifications, "roots": ["file:///tmp"]}
OTHERS = {name: value for name, value in SAMPLES.items() if name != "timeout"}


def fake() -> FakeServer:
    server = FakeServer()
    server.add_tool("echo", lambda text: text)
    return server


def via_connect():
    return connect(FAST_SERVER, **SAMPLES, **HANDLERS)


def via_open_target_transport():
    return open_target(fake(), call_timeout=SAMPLES["timeout"], **OTHERS, **HANDLERS)


def via_open_target_command():
    return open_target(FAST_SERVER, call_timeout=SAMPLES["timeout"], **OTHERS, **HANDLERS)


def via_open_target_command_with_stderr():
    return open_target(FAST_SERVER, stderr=None, call_timeout=SAMPLES["timeout"], **OTHERS, **HANDLERS)


def via_config_entry():
    entry = ServerConfig(name="fast", command=FAST_SERVER[0], args=FAST_SERVER[1:])
    return open_target(entry, call_timeout=SAMPLES["timeout"], **OTHERS, **HANDLERS)


def via_config_entry_open():
    entry = ServerConfig(name="fast", command=FAST_SERVER[0], args=FAST_SERVER[1:])
    return entry.open(call_timeout=SAMPLES["timeout"], **OTHERS, **HANDLERS)


def group_of(target, name):
    def build():
        group = ClientGroup({"one": target()}, timeout=SAMPLES["timeout"], **OTHERS, **HANDLERS).open()
        assert not group.errors, group.errors
        client = group.clients["one"]
        group.clients.clear()  # the test closes the client
        return client

    build.__name__ = name
    return build


@pytest.mark.parametrize("build", [
    via_connect,
    via_open_target_transport,
    via_open_target_command,
    via_open_target_command_with_stderr,
    via_config_entry,
    via_config_entry_open,
    group_of(fake, "via_group_transport"),
    group_of(lambda: list(FAST_SERVER), "via_group_command"),
], ids=lambda build: build.__name__)
def test_every_client_option_reaches_the_client(build, recorded):
    client = build()
    try:
        (given,) = recorded
        for name, value in SAMPLES.items():
            if name == "timeout":
                assert client.timeout == value  # open_target sets the call timeout after the handshake
            elif name in ("policy", "lock"):  # bound to the entry's or the group's name on the way
                assert given.get(name) == value or given[name] == value.for_server(given[name].server)
            else:
                assert given.get(name) == value, f"{name} was not passed on"
        assert client._handlers.sampling is not None and client._handlers.sampling.fn is sampling
        assert client._handlers.notification is notifications
        assert [root.uri for root in client._handlers.roots or []] == ["file:///tmp"]
        assert client.protocol_version and client.protocol_version != "2026-07-28"
    finally:
        client.close()


def test_the_factory_refuses_an_unknown_option():
    from mcpclient._build.factory import make_client

    with pytest.raises(TypeError, match="colour"):
        make_client(fake(), colour="blue")
