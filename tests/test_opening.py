"""One path opens every client (``_build/open.open_client``), and the groups are what it takes.

Every Client option given to ``connect``, a config entry, ``ClientGroup``, ``SharedClient`` or
``SharedGroup`` reaches the Client (the options are listed from ``Client.__init__`` itself, so
one added there and not forwarded fails here). The flat keywords of the release before are
spellings of the groups: the old keyword and the group give the same client, over a real
server, with a ``DeprecationWarning`` at the caller's line.
"""

from __future__ import annotations

import inspect
import pickle
import re
import warnings

import attrs
import pytest
import requests

from mcpclient import (
    HTTP,
    Client,
    ClientGroup,
    Handlers,
    Plugins,
    SharedClient,
    SharedGroup,
    Stdio,
    connect,
    types as t,
)
from mcpclient._client.settings import OLD_KEYWORDS
from mcpclient.config import ServerConfig
from mcpclient.extensions import Extension
from mcpclient.lock import Lock
from mcpclient.policy import Policy, Rule
from mcpclient.testing import FakeServer
from mcpclient.transports import StdioTransport, StreamableHTTPTransport
from tests.conftest import FAST_SERVER, ROOT

pytestmark = pytest.mark.timeout(90)


def sampling(request):
    raise AssertionError("never asked")


def elicit(request):
    raise AssertionError("never asked")


def notifications(method, params):
    pass


def token():
    return "probe-token"


ROOTS = ["file:///tmp"]
HANDLERS = Handlers(sampling=sampling, elicitation=elicit, elicitation_modes=("form", "url"), roots=ROOTS,
                    notification=notifications)
PLUGINS = Plugins(cache=True, cache_partition="user-42", output_validation="off", apps=True, telemetry=False,
                  keepalive=45.0, policy=Policy([Rule("allow")]), lock=Lock("probe.lock"), on_change="warn")
SESSION = requests.Session()
BASIC = requests.auth.HTTPBasicAuth("probe", "pass")
HTTP_GROUP = HTTP(headers={"X-Probe": "1"}, auth=BASIC, token_provider=token, auth_header="X-Token", session=SESSION,
                  max_retries=2, keep_session=True)
STDIO_GROUP = Stdio(env={"PROBE": "1"}, cwd=str(ROOT), stderr=None)

#: A value for each Client option, none of them its default.
SAMPLES = {
    "timeout": 7.5,
    "protocol": "legacy",
    "handlers": HANDLERS,
    "plugins": PLUGINS,
    "middleware": (lambda message, next_: next_(message),),
    "extensions": (Extension(),),
    "on_session_lost": "reinitialize",
    "client_info": t.Implementation(name="probe", version="9.9"),
    "max_dispatch": 3,
}
#: Client options that cannot take a sample over the stdio and in-memory targets used here,
#: and where each is tested passing through instead.
NOT_SAMPLED = {"resume": "a Streamable HTTP session: tests/http/test_resume_session.py (connect)",
               "retry": "HTTP_GROUP's max_retries=2 spells it (both at once are refused): "
                        "tests/http/test_retry_policy.py"}
OTHERS = {name: value for name, value in SAMPLES.items() if name != "timeout"}

#: Each old keyword with the value it is given here, and the groups they spell, written out.
OLD = {
    "sampling_handler": sampling, "elicitation_handler": elicit, "elicitation_modes": HANDLERS.elicitation_modes,
    "roots": ROOTS, "notification_handler": notifications,
    **attrs.asdict(PLUGINS, recurse=False), **attrs.asdict(HTTP_GROUP, recurse=False),
    **attrs.asdict(STDIO_GROUP, recurse=False),
}
GROUP_OF = {"handlers": HANDLERS, "plugins": PLUGINS, "http": HTTP_GROUP, "stdio": STDIO_GROUP}


def client_options() -> set[str]:
    parameters = inspect.signature(Client.__init__).parameters.values()
    return {p.name for p in parameters if p.kind is p.KEYWORD_ONLY}


def test_every_client_option_has_a_sample():
    assert set(SAMPLES) | set(NOT_SAMPLED) == client_options(), "add a sample for the new Client option"


def test_connect_takes_the_clients_keywords_with_the_same_defaults_and_the_transports_groups():
    from mcpclient._build.open import OPTIONS

    connects = inspect.signature(connect).parameters
    clients = inspect.signature(Client.__init__).parameters
    assert set(OPTIONS) == client_options() | {"http", "stdio"}
    assert {name: connects[name].default for name in client_options()} == {
        name: clients[name].default for name in client_options()}


def test_every_old_keyword_has_a_sample_and_a_group():
    assert set(OLD) == set(OLD_KEYWORDS)
    for name, (group, field) in OLD_KEYWORDS.items():
        assert getattr(GROUP_OF[group], field) is OLD[name], name


@pytest.fixture
def recorded(monkeypatch):
    """What every Client and transport built during the test was given, in order."""
    calls: list[tuple[str, object]] = []

    def record(cls, kind):
        original = cls.__init__

        def recording(self, *args, **kwargs):
            # A Client's transport is a new object each time: what kind of transport it is.
            shown = tuple(type(arg).__name__ for arg in args) if kind == "Client" else args
            calls.append((kind, shown, kwargs))
            original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", recording)

    record(Client, "Client")
    record(StdioTransport, "stdio")
    record(StreamableHTTPTransport, "http")
    return calls


def fake() -> FakeServer:
    server = FakeServer()
    server.add_tool("echo", lambda text: text)
    return server


def entry_of(target) -> ServerConfig:
    if isinstance(target, str):
        return ServerConfig(name="one", url=target)
    return ServerConfig(name="one", command=target[0], args=list(target[1:]))


#: Each front that opens clients: ``open(target, options)`` gives (the client, what closes it).
def via_connect(target, options):
    client = connect(target, **options)
    return client, client.close


def via_entry_open(target, options):
    client = entry_of(target).open(**options)
    return client, client.close


def via_connect_entry(target, options):
    client = connect(entry_of(target), **options)
    return client, client.close


def via_group(target, options):
    timeout = options.pop("timeout", None)
    group = ClientGroup({"one": target}, **({} if timeout is None else {"timeout": timeout}), **options)
    group.open()
    assert not group.errors, group.errors
    return group.clients["one"], group.close


def via_shared(target, options):
    shared = SharedClient(target, **options)
    return shared.get(), shared.close


def via_shared_group(target, options):
    shared = SharedGroup({"one": target}, **options)
    group = shared.get()
    assert not group.errors, group.errors
    return group.clients["one"], shared.close


FRONTS = [via_connect, via_entry_open, via_connect_entry, via_group, via_shared, via_shared_group]


def bound(plugins: Plugins, name: str | None) -> Plugins:
    """``plugins`` as a front that knows the server as ``name`` gives it (a config entry's
    name, a group's key): the policy and lockfile bound to it."""
    if name is None:
        return plugins
    return attrs.evolve(plugins, policy=plugins.policy.for_server(name), lock=plugins.lock.for_server(name))


NAMED = {via_entry_open: "one", via_connect_entry: "one", via_group: "one", via_shared_group: "one"}


@pytest.mark.parametrize("target", [pytest.param(fake, id="transport"), pytest.param(lambda: list(FAST_SERVER), id="command")])
@pytest.mark.parametrize("front", FRONTS, ids=lambda front: front.__name__)
def test_every_client_option_reaches_the_client(front, target, recorded):
    if front in (via_entry_open, via_connect_entry, via_shared, via_shared_group) and target is fake:
        pytest.skip("a config entry names a command or a URL; a shared client opens its own in each process")
    client, close = front(target(), dict(SAMPLES))
    try:
        (given,) = [kwargs for kind, _, kwargs in recorded if kind == "Client"]
        for name, value in SAMPLES.items():
            if name == "plugins":
                assert given[name] == bound(value, NAMED.get(front))
            else:
                assert given.get(name) == value, f"{name} was not passed on"
        assert client.timeout == SAMPLES["timeout"]
        assert client._handlers.sampling is not None and client._handlers.sampling.fn is sampling
        assert client._handlers.notification is notifications
        assert [root.uri for root in client._handlers.roots or []] == ["file:///tmp"]
        assert client.protocol_version and client.protocol_version != "2026-07-28"
    finally:
        close()


def test_the_stdio_group_reaches_the_command(recorded, tmp_path):
    with connect(FAST_SERVER, stdio=Stdio(env={"PROBE": "1"}, cwd=str(tmp_path), stderr=None)) as client:
        assert client.list_tools()
    ((_, args, kwargs),) = [call for call in recorded if call[0] == "stdio"]
    assert args == (list(FAST_SERVER), {"PROBE": "1"}) and kwargs == {"cwd": str(tmp_path), "stderr": None}


def test_a_config_entry_puts_its_env_headers_and_cwd_under_the_groups(recorded, tmp_path):
    entry = ServerConfig(name="one", command=FAST_SERVER[0], args=FAST_SERVER[1:], env={"A": "entry", "B": "entry"},
                         cwd=str(tmp_path))
    with connect(entry, stdio=Stdio(env={"B": "caller"}, stderr=None)) as client:
        assert client.list_tools()
    ((_, args, kwargs),) = [call for call in recorded if call[0] == "stdio"]
    assert args[1] == {"A": "entry", "B": "caller"} and kwargs["cwd"] == str(tmp_path)


# -- the old keywords, spellings of the groups ------------------------------------------------


@pytest.fixture(scope="module")
def url(shared_sdk_server):
    return shared_sdk_server("--transport", "streamable-http").url


def opened(front, target, options):
    """The constructions one opening made, and the client's handlers and extensions."""
    client, close = front(target, options)
    try:
        return (client._handlers.sampling.fn, client._handlers.elicitation is not None,
                [root.uri for root in client._handlers.roots], client._handlers.notification,
                sorted(type(ext).__name__ for ext in client.extensions))
    finally:
        close()


@pytest.mark.parametrize("kind", ["command", "url"])
@pytest.mark.parametrize("front", FRONTS, ids=lambda front: front.__name__)
def test_an_old_keyword_and_its_group_open_the_same_client(front, kind, request, recorded):
    target = list(FAST_SERVER) if kind == "command" else request.getfixturevalue("url")
    groups = ("handlers", "plugins", "stdio" if kind == "command" else "http")
    old = {name: OLD[name] for name, (group, _) in OLD_KEYWORDS.items() if group in groups}
    new = {group: GROUP_OF[group] for group in groups}

    with pytest.warns(DeprecationWarning) as caught:
        by_old = opened(front, target, {"timeout": 20, **old})
    built_by_old, recorded[:] = list(recorded), []
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        by_new = opened(front, target, {"timeout": 20, **new})

    assert by_old == by_new
    assert built_by_old == recorded and len(recorded) >= 2  # the Client and its transport, given the same
    said = {str(w.message).split("(")[1].split("=")[0]: w for w in caught if "mcpclient deprecates" in str(w.message)}
    assert set(said) == set(old), "each old keyword warns, once"
    for name, warning in said.items():
        group, field = OLD_KEYWORDS[name]
        assert f"give {group}={type(GROUP_OF[group]).__name__}({field}=...)" in str(warning.message)
        assert warning.filename == __file__, "the warning names the caller's line"


def test_the_clients_old_keywords_spell_its_plugins(recorded):
    old = {name: OLD[name] for name, (group, _) in OLD_KEYWORDS.items() if group == "plugins"}
    with pytest.warns(DeprecationWarning, match="mcpclient deprecates Client") as caught:
        with fake() as server, Client(server, protocol="legacy", **old) as client:
            by_old = sorted(type(ext).__name__ for ext in client.extensions)
    with fake() as server, Client(server, protocol="legacy", plugins=PLUGINS) as client:
        by_new = sorted(type(ext).__name__ for ext in client.extensions)
    assert by_old == by_new and "Apps" in by_new
    (first, second) = [kwargs for kind, _, kwargs in recorded if kind == "Client"]
    assert first == {"protocol": "legacy", **old} and second == {"protocol": "legacy", "plugins": PLUGINS}
    assert {w.filename for w in caught} == {__file__} and len(caught) == len(old)


def test_a_field_given_both_ways_is_refused_before_anything_starts(recorded):
    with pytest.raises(TypeError, match=r"stderr= and stdio=Stdio\(stderr=...\)"), pytest.warns(DeprecationWarning):
        connect(FAST_SERVER, stderr=None, stdio=Stdio(stderr=None))
    with pytest.raises(TypeError, match=r"cache= and plugins=Plugins\(cache=...\)"), pytest.warns(DeprecationWarning):
        SharedClient(FAST_SERVER, cache=True, plugins=Plugins(cache=True))
    assert recorded == []


def test_a_keyword_nobody_takes_is_refused_where_it_is_given():
    for make in (lambda: connect(FAST_SERVER, colour="blue"), lambda: SharedClient(FAST_SERVER, colour="blue"),
                 lambda: ClientGroup({"one": FAST_SERVER}, colour="blue"),
                 lambda: SharedGroup({"one": FAST_SERVER}, colour="blue"),
                 lambda: entry_of(FAST_SERVER).open(colour="blue"), lambda: Client(fake(), colour="blue")):
        with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
            make()
    # Client is given its transport made: the transport's groups, and their old keywords, are not its.
    with pytest.raises(TypeError, match="unexpected keyword argument 'http'"):
        Client(fake(), http=HTTP())
    with pytest.raises(TypeError, match="unexpected keyword argument 'headers'"):
        Client(fake(), headers={"X": "1"})


def test_the_groups_show_no_credential_in_their_repr():
    secret = "s3cret-value-0123456789"
    shown = repr(HTTP(headers={"Authorization": f"Bearer {secret}"}, auth=requests.auth.HTTPBasicAuth("u", secret),
                      token_provider=lambda: secret, session=requests.Session()))
    shown += repr(Stdio(env={"API_KEY": secret}))
    assert secret not in shown
    assert "'Authorization': '***'" in shown and "'API_KEY': '***'" in shown and "<HTTPBasicAuth>" in shown


def test_a_shared_client_pickles_its_groups_and_opens_with_them_in_another_process_as_here():
    shared = SharedClient(FAST_SERVER, timeout=20, stdio=STDIO_GROUP, plugins=Plugins(cache=True))
    copy = pickle.loads(pickle.dumps(shared))
    assert copy is shared  # the same process: the same one
    spec = shared.__reduce__()[1][1]
    assert spec[3] == {"timeout": 20, "stdio": STDIO_GROUP, "plugins": Plugins(cache=True)}


# -- nothing of ours uses an old keyword -----------------------------------------------------

#: What takes ``connect``'s keywords, by the name it is called with.
FRONT_NAMES = {"connect", "Client", "SharedClient", "ClientGroup", "SharedGroup", "from_config", "open",
               "connect_in_process", "mcp_in_process", "assert_locked", "diagnose", "open_words", "MCP"}


def old_spellings(code: str) -> list[str]:
    """``name(old_keyword=...)`` for each call of a front in ``code`` given an old keyword."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:  # a shortened block ("..."): read it as text
        calls = re.finditer(rf"\b({'|'.join(FRONT_NAMES)})\(([^()]|\([^()]*\))*?\b({'|'.join(OLD_KEYWORDS)})=", code)
        return [f"line {code.count(chr(10), 0, m.start()) + 1}: {m.group(1)}({m.group(3)}=...)" for m in calls]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in FRONT_NAMES:
                found += [f"line {node.lineno}: {name}({k.arg}=...)" for k in node.keywords if k.arg in OLD_KEYWORDS]
    return found


def test_the_finder_sees_an_old_keyword():
    assert old_spellings("mcpclient.connect(url, headers=h)\nClient(t, plugins=Plugins(cache=True))") == [
        "line 1: connect(headers=...)"]
    assert old_spellings("x = {...\nSharedClient(url, timeout=f(1), cache=True)") == ["line 2: SharedClient(cache=...)"]


def test_the_package_docs_and_examples_use_no_old_keyword():
    from tests.test_docs_python_blocks import ALL

    sources = {str(path.relative_to(ROOT)): path.read_text()
               for folder in ("mcpclient", "examples", "benchmarks") for path in sorted((ROOT / folder).rglob("*.py"))}
    sources.update({f"{path.relative_to(ROOT)}:{line}": code for path, line, code, _ in ALL})  # run or not
    found = {where: spelled for where, code in sources.items() if (spelled := old_spellings(code))}
    assert found == {}, "use the groups (HTTP, Stdio, Handlers, Plugins)"


def test_a_shared_group_hides_the_credentials_of_its_options_too():
    secret = "group-secret-0123456789"
    group = SharedGroup({"one": "https://example.invalid/mcp"},
                        http=HTTP(headers={"Authorization": f"Bearer {secret}"}))
    assert secret not in group._redact(f"the server said: Bearer {secret}")  # what health() and its errors show
