"""MCP Apps (SEP-1865) without a browser: negotiation, the tool model, the view read, the
visibility rule, the CSP, and the host side of the view protocol message by message."""

from __future__ import annotations

import base64
import threading
from html.parser import HTMLParser

import pytest

import mcpclient
from mcpclient import Client, ClientGroup, Plugins, types as t
from mcpclient.plugins.apps.bridge import DENIED, Bridge
from mcpclient._protocol.eras import modern
from mcpclient._client.seam import Seam
from mcpclient._client.handlers import BUILTIN_REQUESTS, Handlers
from mcpclient.plugins.apps.widget import SANDBOX, framed, with_csp
from mcpclient._client.app_views import allow_attribute, content_security_policy
from mcpclient.apps import Apps, UIResource, visible_to_model
from mcpclient.llm import anthropic, openai
from mcpclient.testing import FakeServer

pytestmark = pytest.mark.timeout(30)

URI = "ui://clock/view.html"
MIME = "text/html;profile=mcp-app"
VIEW = "<!DOCTYPE html><html><body>clock</body></html>"
RESTRICTIVE = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; media-src 'self' data:; connect-src 'none'")


def app_server(view_meta=None, blob=False) -> FakeServer:
    fake = FakeServer(strict=False)
    fake.add_tool("clock", result="12:00", meta={"ui": {"resourceUri": URI}})
    fake.add_tool("refresh", result="12:01", meta={"ui": {"resourceUri": URI, "visibility": ["app"]}})
    fake.add_tool("secret", result="s3cret", meta={"ui": {"visibility": ["model"]}})
    fake.add_tool("old", result="x", meta={"ui/resourceUri": URI})
    fake.add_tool("plain", result="p")
    body = {"blob": base64.b64encode(VIEW.encode()).decode()} if blob else {"text": VIEW}
    entry = {"uri": URI, "mimeType": MIME, **body}
    if view_meta is not None:
        entry["_meta"] = {"ui": view_meta}
    fake.add_resource(URI, lambda: [entry])
    return fake


@pytest.fixture
def client():
    fake = app_server({"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": False})
    with fake, Client(fake, plugins=Plugins(apps=True)) as c:
        yield c


# -- negotiation and the tool model ------------------------------------------------------------

def test_the_extension_is_declared_with_our_mime_type_at_initialize():
    fake = app_server()
    with fake, Client(fake, plugins=Plugins(apps=True), protocol="legacy") as c:
        c.list_tools()
    assert fake.client_capabilities["extensions"] == {"io.modelcontextprotocol/ui": {"mimeTypes": [MIME]}}


def test_the_extension_is_declared_on_every_modern_request_next_to_tasks():
    handlers = Handlers(Seam((), [Apps()], reserved_requests=BUILTIN_REQUESTS, reserved_notifications=()))
    meta = modern.request_meta("2026-07-28", t.Implementation(name="c"), handlers.capabilities())
    extensions = meta["io.modelcontextprotocol/clientCapabilities"]["extensions"]
    assert extensions["io.modelcontextprotocol/ui"] == {"mimeTypes": [MIME]}
    assert "io.modelcontextprotocol/tasks" in extensions


def test_the_extension_is_not_declared_unless_asked():
    fake = app_server()
    with fake, Client(fake, protocol="legacy") as c:
        c.list_tools()
    assert "extensions" not in (fake.client_capabilities or {})


def test_meta_ui_is_read_into_the_tool_and_meta_kept(client):
    tools = {tool.name: tool for tool in client.list_tools()}
    assert tools["clock"].ui == t.ToolUI(resource_uri=URI, visibility=("model", "app"))
    assert tools["refresh"].ui == t.ToolUI(resource_uri=URI, visibility=("app",))
    assert tools["old"].ui == t.ToolUI(resource_uri=URI)  # the deprecated flat key
    assert tools["plain"].ui is None
    assert tools["refresh"].meta == {"ui": {"resourceUri": URI, "visibility": ["app"]}}


def test_the_view_is_read_once_per_connection_with_its_meta(client):
    view = client.read_ui_resource(URI)
    assert client.read_ui_resource(URI) is view
    assert view.html == VIEW and view.prefers_border is False
    assert view.csp == {"connectDomains": ("https://api.example.com",), "resourceDomains": (),
                        "frameDomains": (), "baseUriDomains": ()}


def test_a_blob_view_is_decoded():
    fake = app_server(blob=True)
    with fake, Client(fake, plugins=Plugins(apps=True)) as c:
        assert c.read_ui_resource(URI).html == VIEW


def test_a_resource_of_another_type_is_not_a_view():
    fake = app_server()
    fake.add_resource("ui://other", "<p>hi</p>", mime_type="text/html")
    with fake, Client(fake,
                      plugins=Plugins(apps=True)) as c, pytest.raises(mcpclient.ProtocolError, match="profile=mcp-app"):
        c.read_ui_resource("ui://other")


# -- the visibility rule ------------------------------------------------------------------------

def test_app_only_tools_are_never_offered_to_a_model(client):
    offered = [tool.name for tool in mcpclient.tools(client)]
    assert offered == ["clock", "secret", "old", "plain"]
    assert [tool["function"]["name"] for tool in openai.chat_tools(client)] == offered
    assert [tool["name"] for tool in openai.responses_tools(client)] == offered
    assert [tool["name"] for tool in anthropic.tools(client)] == offered
    assert client.call_tool("refresh").text == "12:01"  # from Python it still runs


def test_a_group_offers_no_app_only_tool():
    fake = app_server()
    with fake, ClientGroup({"a": fake}) as group:
        assert "a__refresh" in [tool.name for tool in group.list_tools()]
        assert "a__refresh" not in [tool.name for tool in group.tools()]


def test_visible_to_model_defaults_to_visible():
    assert visible_to_model(t.ToolDef(name="x"))
    assert not visible_to_model(t.ToolDef(name="x", ui=t.ToolUI(visibility=("app",))))


# -- CSP and permissions ------------------------------------------------------------------------

def resource(**meta) -> UIResource:
    return UIResource.from_contents(t.ResourceContents(uri=URI, mime_type=MIME, text=VIEW, meta={"ui": meta}))


def test_no_declared_csp_gives_the_specs_restrictive_default():
    policy = content_security_policy(resource())
    assert policy.startswith(RESTRICTIVE)
    assert "frame-src 'none'" in policy and "object-src 'none'" in policy


def test_declared_domains_widen_only_their_directives():
    policy = content_security_policy(resource(csp={
        "connectDomains": ["https://api.example.com", "wss://live.example.com"],
        "resourceDomains": ["https://*.cdn.example"],
    }))
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["connect-src"] == "https://api.example.com wss://live.example.com"
    assert directives["script-src"] == "'self' 'unsafe-inline' https://*.cdn.example"
    assert directives["img-src"] == "'self' data: https://*.cdn.example"
    assert directives["frame-src"] == "'none'" and directives["base-uri"] == "'self'"
    assert directives["default-src"] == "'none'"


def test_an_empty_csp_connects_nowhere():
    assert "connect-src 'none'" in content_security_policy(resource(csp={}))


@pytest.mark.parametrize("hostile", ["https://a.example; script-src *", "*", "'unsafe-eval'",
                                     "https://a.example 'unsafe-eval'", "javascript:alert(1)", 7])
def test_a_domain_that_is_not_one_origin_is_dropped(hostile):
    policy = content_security_policy(resource(csp={"connectDomains": [hostile, "https://ok.example"]}))
    assert "connect-src https://ok.example;" in policy
    assert "unsafe-eval" not in policy and "*;" not in policy and policy.count("script-src") == 1


def test_only_the_specs_permissions_reach_the_allow_attribute():
    res = resource(permissions={"camera": {}, "clipboardWrite": {}, "usb": {}, "microphone": True})
    assert allow_attribute(res) == "camera; clipboard-write"
    assert allow_attribute(resource()) == ""


@pytest.mark.parametrize("document", ["<!doctype html><script>fetch('x')</script>", "<p>x</p>",
                                      "\u00a0<!DOCTYPE html><p>x</p>", "<!-- c --><!doctype html>", ""])
def test_the_policy_comes_before_anything_of_the_document(document):
    # The browser half (hostile documents in Chromium) is tests/security/test_app_csp_browser.py.
    doc = with_csp(document, "default-src 'none'")
    assert doc == ('<!DOCTYPE html><meta http-equiv="Content-Security-Policy" '
                   'content="default-src &#x27;none&#x27;">' + document)
    assert "allow-same-origin" not in SANDBOX and "allow-scripts" in SANDBOX


@pytest.mark.parametrize("document", ['<p>x</p>', '"></iframe><script>parent.parent.x()</script>',
                                      "&quot; onload=&quot;x()", "<iframe srcdoc='a'></iframe>\u2028"])
def test_the_view_is_the_one_frame_of_a_proxy_under_the_same_policy(document):
    # The browser half (views leaving their page in Chromium) is tests/security/test_app_csp_browser.py.
    policy = "default-src 'none'; frame-src 'none'"
    proxy = framed(document, policy, allow='camera "x"', title="MCP App view ui://a")
    assert proxy.startswith(with_csp("", policy))  # the proxy's own policy, first
    seen = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            seen.append((tag, dict(attrs)))

    Parser().feed(proxy)
    assert [tag for tag, _ in seen] == ["meta", "style", "iframe", "script"]  # the view's markup is in srcdoc only
    frame = seen[2][1]
    assert frame == {"id": "view", "sandbox": SANDBOX, "allow": 'camera "x"', "csp": policy,
                     "title": "MCP App view ui://a", "srcdoc": with_csp(document, policy)}


# -- the view protocol --------------------------------------------------------------------------

class View:
    """The host side of one view, with what it posted and noted recorded; pool work runs
    when ``run_pending`` is called, so a test sees that nothing waited for it."""

    def __init__(self, client, tool="clock", arguments=None, layout=False):
        self.posted: list[dict] = []
        self.notes: list[tuple[str, str]] = []
        self.pending: list = []
        self.layouts: list[str] = []  # what the front end was told to lay out
        result = client.call_tool(tool, arguments or {})
        host = result.call.host  # the client's Apps extension
        self.bridge = Bridge(host, host.tool(tool), arguments or {}, result,
                             client.read_ui_resource(URI), self.posted.append,
                             lambda kind, text: self.notes.append((kind, text)), run=self.pending.append,
                             display=self.layouts.append if layout else None)

    def request(self, method, params=None, ident=1, run=True, env=None):
        """Send a request of the view's; by default with the person's gesture in the view (as a
        click on the view's button gives), which a display mode over the page needs."""
        self.bridge.receive({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}},
                            {"theme": "dark", "width": 640, "gesture": True} if env is None else env)
        if run:
            self.run_pending()
        return [m for m in self.posted if m.get("id") == ident][-1] if any(
            m.get("id") == ident for m in self.posted) else None

    def notify(self, method, params=None):
        self.bridge.receive({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def run_pending(self):
        while self.pending:
            self.pending.pop(0)()


def test_initialize_answers_with_host_context_and_capabilities(client):
    view = View(client, arguments={"zone": "UTC"})
    reply = view.request("ui/initialize", {"protocolVersion": "2026-01-26", "appInfo": {"name": "v"}})
    result = reply["result"]
    assert result["protocolVersion"] == "2026-01-26"
    assert result["hostInfo"]["name"] == "mcpclient"
    context = result["hostContext"]
    assert context["theme"] == "dark" and context["displayMode"] == "inline"
    assert context["containerDimensions"]["width"] == 640
    assert context["toolInfo"]["tool"]["name"] == "clock"
    caps = result["hostCapabilities"]
    assert {"openLinks", "serverTools", "serverResources", "logging"} <= set(caps)
    assert caps["sandbox"]["csp"] == {"connectDomains": ["https://api.example.com"]}


def test_notifications_are_held_until_the_view_is_initialized(client):
    view = View(client, arguments={"zone": "UTC"})
    view.request("ui/initialize")
    view.bridge.notify("ui/notifications/host-context-changed", {"theme": "light"})
    assert [m.get("method") for m in view.posted] == [None]  # only the initialize reply
    view.notify("ui/notifications/initialized")
    methods = [m.get("method") for m in view.posted[1:]]
    assert methods == ["ui/notifications/tool-input", "ui/notifications/tool-result",
                       "ui/notifications/host-context-changed"]
    assert view.posted[1]["params"] == {"arguments": {"zone": "UTC"}}
    assert view.posted[2]["params"]["content"] == [{"type": "text", "text": "12:00"}]
    view.bridge.notify("ui/notifications/host-context-changed", {"theme": "dark"})
    assert view.posted[-1]["params"] == {"theme": "dark"}  # sent at once from now on


def test_the_view_calls_an_app_tool_of_its_server(client):
    view = View(client)
    reply = view.request("tools/call", {"name": "refresh", "arguments": {}})
    assert reply["result"]["content"] == [{"type": "text", "text": "12:01"}]


def test_a_model_only_tool_is_refused_to_the_view(client):
    view = View(client)
    reply = view.request("tools/call", {"name": "secret", "arguments": {}})
    assert reply["error"]["code"] == DENIED and "visibility" in reply["error"]["message"]
    assert reply.get("result") is None


def test_a_tool_of_no_server_the_view_knows_is_refused(client):
    reply = View(client).request("tools/call", {"name": "elsewhere__clock", "arguments": {}})
    assert reply["error"]["code"] == -32602


def test_tool_calls_do_not_run_on_the_receiving_thread(client):
    view = View(client)
    assert view.request("tools/call", {"name": "refresh"}, ident=7, run=False) is None
    assert view.request("ping", ident=8, run=False)["result"] == {}  # answered meanwhile
    view.run_pending()
    assert "result" in [m for m in view.posted if m.get("id") == 7][0]


def test_a_slow_tool_does_not_hold_the_receiver():
    fake = app_server()
    release = threading.Event()
    fake.add_tool("slow", lambda: release.wait(5) and "done", meta={"ui": {"resourceUri": URI}})
    with fake, Client(fake, plugins=Plugins(apps=True)) as c:
        posted: list[dict] = []
        replied = threading.Event()

        def post(message):
            posted.append(message)
            if message.get("id") == 1:
                replied.set()

        result = c.call_tool("clock")
        bridge = Bridge(result.call.host, result.call.host.tool("clock"), {}, result, c.read_ui_resource(URI), post,
                        lambda *a: None)
        bridge.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}})
        assert not replied.is_set()  # receive returned while the tool still runs
        release.set()
        assert replied.wait(5)
        assert posted[-1]["result"]["content"][0]["text"] == "done"


def test_resources_read_goes_through_the_same_client(client):
    reply = View(client).request("resources/read", {"uri": URI})
    assert reply["result"]["contents"][0]["text"] == VIEW


def test_links_messages_and_context_are_shown_not_acted_on(client):
    view = View(client)
    assert view.request("ui/open-link", {"url": "https://example.com/x"}, ident=1)["result"] == {}
    assert view.request("ui/open-link", {"url": "javascript:alert(1)"}, ident=2)["error"]["code"] == DENIED
    view.request("ui/message", {"role": "user", "content": {"type": "text", "text": "hello"}}, ident=3)
    view.request("ui/update-model-context", {"content": [{"type": "text", "text": "first"}]}, ident=4)
    view.request("ui/update-model-context", {"content": [{"type": "text", "text": "second"}]}, ident=5)
    view.notify("notifications/message", {"level": "info", "data": "logged"})
    assert view.notes == [("link", "https://example.com/x"), ("message", "user: hello"),
                          ("context", "first"), ("context", "second"), ("log", "[info] logged")]
    assert view.bridge.model_context == {"content": [{"type": "text", "text": "second"}]}
    assert view.request("sampling/createMessage", ident=9)["error"]["code"] == -32601


def test_size_changes_are_recorded(client):
    view = View(client)
    view.notify("ui/notifications/size-changed", {"width": 300, "height": 420})
    assert view.bridge.size == {"width": 300, "height": 420}


def test_teardown_is_requested_when_the_client_closes():
    fake = app_server()
    with fake:
        c = Client(fake, plugins=Plugins(apps=True))
        c.initialize()
        view = View(c)
        view.request("ui/initialize")
        view.notify("ui/notifications/initialized")
        c.call_tool("clock").call.host.on_close(lambda: view.bridge.teardown("the MCP client was closed"))
        c.close()
    teardown = view.posted[-1]
    assert teardown["method"] == "ui/resource-teardown" and "id" in teardown
    assert view.request("ping", ident=99)["error"]["code"] == DENIED  # refused from then on


def test_malformed_messages_are_ignored(client):
    view = View(client)
    for junk in (None, "x", {"id": 1, "method": "ping"}, {"jsonrpc": "1.0", "id": 1, "method": "ping"}):
        view.bridge.receive(junk)
    assert view.posted == []


# -- display modes and host-context changes ----------------------------------------------------

#: McpUiHostContext's fields (SEP-1865, 2026-01-26) and what each must be.
MODES = ("inline", "fullscreen", "pip")
CONTEXT_FIELDS = {
    "toolInfo": lambda v: isinstance(v, dict) and isinstance(v.get("tool"), dict),
    "theme": lambda v: v in ("light", "dark"),
    "styles": lambda v: isinstance(v, dict),
    "displayMode": lambda v: v in MODES,
    "availableDisplayModes": lambda v: isinstance(v, list) and set(v) <= set(MODES),
    "containerDimensions": lambda v: isinstance(v, dict) and set(v) <= {"width", "maxWidth", "height", "maxHeight"}
    and not {"width", "maxWidth"} <= set(v) and not {"height", "maxHeight"} <= set(v)
    and all(isinstance(n, int) and n > 0 for n in v.values()),
    "locale": lambda v: isinstance(v, str), "timeZone": lambda v: isinstance(v, str),
    "userAgent": lambda v: isinstance(v, str), "platform": lambda v: v in ("web", "desktop", "mobile"),
    "deviceCapabilities": lambda v: isinstance(v, dict), "safeAreaInsets": lambda v: isinstance(v, dict),
}


def spec_context(context):
    """``context`` if every field is one of McpUiHostContext's, in its shape."""
    wrong = {k: v for k, v in context.items() if k not in CONTEXT_FIELDS or not CONTEXT_FIELDS[k](v)}
    assert not wrong, wrong
    return context


def changes(view):
    """The params of each host-context-changed sent, checked as notifications of the spec's shape."""
    sent = [m for m in view.posted if m.get("method") == "ui/notifications/host-context-changed"]
    for message in sent:
        assert set(message) == {"jsonrpc", "method", "params"} and message["jsonrpc"] == "2.0"
        spec_context(message["params"])
    return [m["params"] for m in sent]


def shown(client, modes=MODES, layout=True):
    """A view initialized (declaring ``modes``, unless None) and told it is."""
    view = View(client, layout=layout)
    capabilities = {} if modes is None else {"availableDisplayModes": list(modes)}
    view.request("ui/initialize", {"protocolVersion": "2026-01-26", "appInfo": {"name": "v", "version": "1"},
                                   "appCapabilities": capabilities}, ident="init")
    view.notify("ui/notifications/initialized")
    return view


def test_the_host_offers_fullscreen_and_pip_when_its_front_end_can_lay_them_out(client):
    reply = View(client, layout=True).request("ui/initialize", {"appCapabilities": {}})
    assert spec_context(reply["result"]["hostContext"])["availableDisplayModes"] == ["inline", "fullscreen", "pip"]
    reply = View(client).request("ui/initialize", {"appCapabilities": {}})
    assert spec_context(reply["result"]["hostContext"])["availableDisplayModes"] == ["inline"]


def test_a_granted_display_mode_lays_the_view_out_answers_and_notifies(client):
    view = shown(client)
    assert view.request("ui/request-display-mode", {"mode": "fullscreen"}, ident=3) == {
        "jsonrpc": "2.0", "id": 3, "result": {"mode": "fullscreen"}}
    assert view.layouts == ["fullscreen"]
    assert changes(view) == [{"displayMode": "fullscreen"}]
    assert view.posted[-1]["method"] == "ui/notifications/host-context-changed"  # after the answer
    assert view.request("ui/request-display-mode", {"mode": "pip"}, ident=4)["result"] == {"mode": "pip"}
    assert view.layouts == ["fullscreen", "pip"]
    assert view.bridge.host_context["displayMode"] == "pip"


@pytest.mark.parametrize("mode", ["fullscreen", "pip"])
@pytest.mark.parametrize("gesture", [False, None, "yes", 1])
def test_without_the_persons_gesture_a_mode_over_the_page_is_asked_of_the_person(client, mode, gesture):
    view = shown(client)
    env = {"theme": "dark", "width": 640} if gesture is None else {"theme": "dark", "width": 640, "gesture": gesture}
    assert view.request("ui/request-display-mode", {"mode": mode}, ident=3, env=env)["result"] == {"mode": "inline"}
    assert view.layouts == [] and changes(view) == [] and view.bridge.host_context["displayMode"] == "inline"
    assert view.notes == [("ask-display", mode)]  # the host's button, which the person may press
    view.bridge.context_changed({"theme": "dark", "width": 640, "height": 500, "displayMode": mode})  # pressed
    assert changes(view) == [{"displayMode": mode, "containerDimensions": {"width": 640, "height": 500}}]


def test_back_inline_needs_no_gesture(client):
    view = shown(client)
    view.request("ui/request-display-mode", {"mode": "fullscreen"}, ident=3)
    no_gesture = {"theme": "dark", "width": 640, "gesture": False}
    assert view.request("ui/request-display-mode", {"mode": "inline"}, ident=4, env=no_gesture)["result"] == {
        "mode": "inline"}
    assert view.layouts == ["fullscreen", "inline"] and view.notes == []


def test_asking_for_the_current_mode_changes_nothing(client):
    view = shown(client)
    assert view.request("ui/request-display-mode", {"mode": "inline"}, ident=3)["result"] == {"mode": "inline"}
    assert view.layouts == [] and changes(view) == []


def test_a_mode_the_view_did_not_declare_is_answered_with_the_current_one(client):
    view = shown(client, modes=("inline", "fullscreen"))
    assert view.request("ui/request-display-mode", {"mode": "pip"}, ident=3)["result"] == {"mode": "inline"}
    assert view.layouts == [] and changes(view) == []


@pytest.mark.parametrize("capabilities", ["all", ["pip"], None])
def test_malformed_app_capabilities_count_as_no_modes_declared(client, capabilities):
    view = View(client, layout=True)
    assert "result" in view.request("ui/initialize", {"appCapabilities": capabilities}, ident="init")
    view.notify("ui/notifications/initialized")
    assert view.request("ui/request-display-mode", {"mode": "pip"}, ident=3)["result"] == {"mode": "pip"}


def test_a_view_that_declares_no_modes_may_have_any_the_host_offers(client):
    view = shown(client, modes=None)
    assert view.request("ui/request-display-mode", {"mode": "pip"}, ident=3)["result"] == {"mode": "pip"}


def test_without_a_front_end_layout_only_inline_is_granted(client):
    view = shown(client, layout=False)
    assert view.request("ui/request-display-mode", {"mode": "fullscreen"}, ident=3)["result"] == {"mode": "inline"}
    assert changes(view) == []


@pytest.mark.parametrize("mode", ["maximized", None, 3])
def test_a_mode_the_spec_does_not_define_is_invalid_params(client, mode):
    view = shown(client)
    assert view.request("ui/request-display-mode", {"mode": mode}, ident=3)["error"]["code"] == -32602


def test_a_theme_switch_is_sent_alone(client):
    view = shown(client)  # initialized with the dark theme, 640 px wide
    assert view.bridge.context_changed({"theme": "dark", "width": 640, "height": 360, "displayMode": "inline"}) == {}
    view.bridge.context_changed({"theme": "light", "width": 640, "height": 360, "displayMode": "inline"})
    assert changes(view) == [{"theme": "light"}]


def test_an_inline_resize_sends_the_new_width_and_keeps_the_height_the_views(client):
    view = shown(client)
    view.bridge.context_changed({"theme": "dark", "width": 480, "height": 900, "displayMode": "inline"})
    assert changes(view) == [{"containerDimensions": {"width": 480, "maxHeight": 1200}}]


def test_full_screen_fixes_the_container_at_its_measured_size_and_inline_frees_it(client):
    view = shown(client)
    view.request("ui/request-display-mode", {"mode": "fullscreen"}, ident=3)
    view.bridge.context_changed({"theme": "dark", "width": 1200, "height": 960.4, "displayMode": "fullscreen"})
    view.bridge.context_changed({"theme": "dark", "width": 640, "height": 360, "displayMode": "inline"})  # the person
    assert changes(view) == [
        {"displayMode": "fullscreen"},
        {"containerDimensions": {"width": 1200, "height": 960}},
        {"displayMode": "inline", "containerDimensions": {"width": 640, "maxHeight": 1200}},
    ]


def test_the_front_end_cannot_switch_to_a_mode_the_view_did_not_declare(client):
    view = shown(client, modes=("inline",))
    assert view.bridge.context_changed({"displayMode": "pip", "width": 640}) == {}
    assert view.bridge.host_context["displayMode"] == "inline"


def test_changes_before_initialize_go_into_its_answer_not_a_notification(client):
    view = View(client, layout=True)
    view.bridge.context_changed({"theme": "dark", "width": 500, "height": 360, "displayMode": "inline"})
    assert view.posted == []
    context = view.request("ui/initialize", {}, env={})["result"]["hostContext"]
    assert context["theme"] == "dark" and context["containerDimensions"] == {"width": 500, "maxHeight": 1200}


def test_a_change_after_initialize_but_before_initialized_is_held(client):
    view = View(client, layout=True)
    view.request("ui/initialize", {})
    view.bridge.context_changed({"theme": "light"})
    assert [m.get("method") for m in view.posted] == [None]
    view.notify("ui/notifications/initialized")
    assert [m.get("method") for m in view.posted[1:]] == [
        "ui/notifications/tool-input", "ui/notifications/tool-result", "ui/notifications/host-context-changed"]


def test_a_torn_down_view_is_told_no_more_changes(client):
    view = shown(client)
    view.bridge.teardown("gone")
    view.bridge.context_changed({"theme": "light"})
    assert changes(view) == []


def test_the_host_sends_no_partial_input_and_no_cancel(client):
    """A notebook call's arguments come whole from Python and its view comes with its result."""
    view = shown(client)
    view.request("ui/request-display-mode", {"mode": "pip"}, ident=3)
    view.bridge.context_changed({"theme": "light", "width": 420, "height": 300, "displayMode": "pip"})
    sent = [m["method"] for m in view.posted if "method" in m]
    assert sent == ["ui/notifications/tool-input", "ui/notifications/tool-result",
                    "ui/notifications/host-context-changed", "ui/notifications/host-context-changed"]
