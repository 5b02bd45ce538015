"""``mcpclient stubs``: typed modules generated from real servers pass ``mypy --strict``, call
the real tools, notice a server that changed, and stay inert and valid for hostile servers."""

from __future__ import annotations

import ast
import importlib.util
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from mcpclient import Client, connect
from mcpclient._core.text import is_clean
from mcpclient.cli import main
from mcpclient.devtools import StubOutOfDate
from mcpclient.devtools.stubs import Stub, generate, list_tools_raw, stubs_for
from mcpclient.testing import FakeServer
from tests.node_tools import NODE_DIR, everything_server_cmd

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
SDK_SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_server.py")]


def everything() -> list[str]:
    try:
        return everything_server_cmd("stdio")
    except FileNotFoundError as exc:  # CI installs them; locally: `npm ci` in tests/node
        pytest.skip(f"server-everything needs Node 22 and {NODE_DIR}/node_modules: {exc}")


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory) -> Path:
    """One mypy cache for the module's runs: mcpclient is analysed once, not per run."""
    return tmp_path_factory.mktemp("mypy-cache")


def run_mypy(folder: Path, cache: Path, *files: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(ROOT)}  # the editable install is not found by mypy alone
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--cache-dir", str(cache), *files],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=170)


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_stub_of_server_everything_passes_mypy_strict_and_calls_its_tools(tmp_path, mypy_cache):
    with connect(everything()) as client:
        (tmp_path / "everything_api.py").write_text(stubs_for(client), encoding="utf-8")
        (tmp_path / "program.py").write_text(
            "from mcpclient import Client, ToolResult\n"
            "from everything_api import EverythingApi, GetStructuredContentOutput\n\n\n"
            "def run(client: Client) -> float:\n"
            "    api = EverythingApi(client)\n"
            "    echoed: ToolResult = api.echo(message='hi')\n"
            "    weather: GetStructuredContentOutput = api.get_structured_content(location='Chicago')\n"
            "    api.get_annotated_message(messageType='success', includeImage=False)\n"
            "    return weather['temperature'] + len(echoed.text)\n",
            encoding="utf-8",
        )
        checked = run_mypy(tmp_path, mypy_cache, "program.py", "everything_api.py")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        api = load(tmp_path / "everything_api.py").EverythingApi(client)
        assert api.echo(message="hi").text == "Echo: hi"
        weather = api.get_structured_content(location="Chicago")
        assert isinstance(weather["temperature"], (int, float)) and isinstance(weather["conditions"], str)
        links = api.get_resource_links(count=2)  # an optional argument, typed float by the schema
        assert [part.type for part in links.content].count("resource_link") == 2


def test_a_stub_of_an_official_sdk_server_types_nested_and_wrapped_output(tmp_path, mypy_cache):
    with connect(SDK_SERVER) as client:
        source = stubs_for(client, class_name="Weather")
        (tmp_path / "weather_api.py").write_text(source, encoding="utf-8")
        (tmp_path / "program.py").write_text(
            "from mcpclient import Client, SharedClient\n"
            "from weather_api import Weather\n\n\n"
            "def run(client: Client) -> int:\n"
            "    api = Weather(client)\n"
            "    report = api.forecast(city='Oslo')\n"
            "    total: int = api.add(a=1, b=2)\n"
            "    return total + report['days'][0]['high'] + len(report['place']['name'])\n"
            "\n\ndef shared(client: SharedClient) -> int:\n"
            "    return Weather(client).add(a=1, b=2)  # a SharedClient fits the stub too\n",
            encoding="utf-8",
        )
        checked = run_mypy(tmp_path, mypy_cache, "program.py", "weather_api.py")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        api = load(tmp_path / "weather_api.py").Weather(client)
        assert api.add(a=2, b=3) == 5  # the SDK's {"result": 5}, unwrapped
        report = api.forecast(city="Oslo")
        assert report["place"]["name"] == "Oslo" and report["days"][0]["sky"] in ("sun", "cloud", "rain")
        assert api.echo(text="x").text == "x"


def test_a_wrong_call_is_a_mypy_error(tmp_path, mypy_cache):
    """The types are there to catch mistakes: a missing required argument and a value outside
    an enum are reported."""
    with connect(SDK_SERVER) as client:
        (tmp_path / "weather_api.py").write_text(stubs_for(client, class_name="Weather"), encoding="utf-8")
    (tmp_path / "program.py").write_text(
        "from mcpclient import Client\nfrom weather_api import Weather\n\n\n"
        "def run(client: Client) -> None:\n"
        "    Weather(client).forecast()\n"
        "    Weather(client).add(a='1', b=2)\n",
        encoding="utf-8",
    )
    checked = run_mypy(tmp_path, mypy_cache, "program.py")
    assert checked.returncode == 1
    assert 'Missing named argument "city"' in checked.stdout
    assert 'Argument "a" to "add" of "Weather" has incompatible type "str"' in checked.stdout


def test_the_same_tools_give_the_same_bytes_in_any_order():
    with connect(SDK_SERVER) as client:
        tools = list_tools_raw(client)
        first = stubs_for(client)
        again = stubs_for(client)
    shuffled = list(tools)
    random.Random(7).shuffle(shuffled)
    assert first == again
    assert generate(shuffled, class_name="SdkTestServerApi", server_name="sdk-test-server",
                    server_version="1.0.0") == first


def test_a_stub_refuses_a_server_whose_tools_changed(tmp_path):
    with connect(SDK_SERVER) as client:
        tools = list_tools_raw(client)
        old = [dict(tool, description="what echo did before") if tool["name"] == "echo" else tool for tool in tools]
        old.append({"name": "retired", "inputSchema": {"type": "object"}})
        path = tmp_path / "old_api.py"
        path.write_text(generate(old, class_name="OldApi"), encoding="utf-8")
        stub = load(path).OldApi
        with pytest.raises(StubOutOfDate) as caught:
            stub(client)
        assert caught.value.changed == ("echo",) and caught.value.missing == ("retired",)
        assert "generate it again with mcpclient stubs" in str(caught.value)
        assert stub(client, check=False).echo(text="still").text == "still"
        current = tmp_path / "current_api.py"
        current.write_text(generate(tools, class_name="CurrentApi"), encoding="utf-8")
        load(current).CurrentApi(client)  # matches: no error


def test_the_stub_hashes_are_the_lockfile_hashes(tmp_path):
    """``mcpclient lock`` and the stub agree on what a tool is: the same hash of it."""
    from mcpclient.plugins.lock import entry_for

    with connect(SDK_SERVER) as client:
        locked = entry_for(lambda m, p: client.request(m, p), {}, None)["tools"]
        path = tmp_path / "api.py"
        path.write_text(stubs_for(client, class_name="Api"), encoding="utf-8")
    assert load(path).Api.TOOLS == {name: entry["hash"] for name, entry in locked.items()}


def test_the_command_writes_the_stub_to_a_file(tmp_path, capsys):
    target = tmp_path / "demo_api.py"
    code = main(["stubs", "--class", "Demo", "--file", str(target), "--",
                 sys.executable, str(ROOT / "examples" / "servers" / "demo_server.py")])
    assert code == 0
    assert "class Demo(Stub):" in target.read_text(encoding="utf-8")
    assert f"wrote {target}" in capsys.readouterr().err


# -- hostile servers: the double ------------------------------------------------------------------

INJECTION = 'x"""\nimport os\nos.system("echo pwned")\n"""'
HOSTILE_TOOLS = [
    {"name": INJECTION, "description": 'ends the docstring """ and \\ then \x1b[31mred\u202e\nimport os',
     "inputSchema": {"type": "object", "properties": {
         "'])\nimport os#": {"type": "string", "description": '"""\x07'},
         "self": {"type": "integer"}, "class": {"type": "boolean"}, "1st": {"type": "string"},
         "": {"type": "string"}, "str": {"type": "string"}, "_cast": {"type": "number"},
         "choice": {"enum": ["a'\"", "\x1b]52;c;x\x07", 3, None, True]},
         "floaty": {"enum": [1.5, 2.5]},
         "nested": {"type": "object", "required": ["deep"], "description": "a comment?\nimport os\r\u2028os.exit()",
                    "properties": {
             "deep": {"type": "array", "items": {"$ref": "#/$defs/loop"}},
             "key with \"quotes\"": {"type": ["string", "null"]}}},
     }, "required": ["self"], "$defs": {"loop": {"type": "object", "properties": {
         "again": {"$ref": "#/$defs/loop"}}}}},
     "outputSchema": {"type": "object", "properties": {"from": {"type": "string"}, "é": {"type": "integer"}}}},
    {"name": "a-b", "inputSchema": {"type": "object"}},
    {"name": "a.b", "inputSchema": {"type": "object"}},
    {"name": "a_b", "inputSchema": {"type": "object"}},
    {"name": "class", "inputSchema": {"type": "object"}},
    {"name": "match", "inputSchema": {"type": "object"}},
    {"name": "print", "inputSchema": {"type": "object"}},
    {"name": "check_tools", "inputSchema": {"type": "object"}},
    {"name": "_call", "inputSchema": {"type": "object"}},
    {"name": "Any", "inputSchema": {"type": "object"}},
    {"name": "9lives", "inputSchema": {"type": "object"}},
    {"name": "\u0430dd", "inputSchema": {"type": "object"}},  # a Cyrillic "a"
    {"name": "odd-required", "inputSchema": {"type": "object", "required": [{"x": 1}, ["y"], "a"],
                                             "properties": {"a": {"type": "string"}, "b": True, "c": []}}},
    {"name": "deep", "inputSchema": {"type": "object"}},
]
node: dict = HOSTILE_TOOLS[-1]["inputSchema"]  # "deep"
for _ in range(100):  # nested far past MAX_DEPTH
    node["properties"] = {"x": {"type": "object"}}
    node = node["properties"]["x"]


def hostile_source(class_name: str = "1 class\n") -> str:
    return generate(HOSTILE_TOOLS, class_name=class_name, server_name='evil"""\n\x1b[2J', server_version="6.6.6")


def test_a_hostile_server_cannot_inject_code():
    source = hostile_source()
    tree = ast.parse(source, feature_version=(3, 10))  # the oldest Python mcpclient runs on
    assert "#: a comment?\n#: import os\n#:\n#: os.exit()\n" in source  # each line of it a comment
    for statement in tree.body:
        assert isinstance(statement, (ast.Expr, ast.ImportFrom, ast.Assign, ast.ClassDef)), ast.dump(statement)
        if isinstance(statement, ast.ImportFrom):
            assert statement.module in ("__future__", "typing", "typing_extensions", "mcpclient",
                                        "mcpclient.devtools.stubs")
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "os" not in names
    calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert calls <= {"TypedDict", "_cast", "self._call", "self._structured"}
    assert all(ord(c) >= 0x20 or c == "\n" for c in source)  # no control character at all
    assert is_clean(source.replace("\n", ""))  # no bidi control nor format character either


def test_hostile_names_become_distinct_valid_identifiers_in_a_stable_way():
    source = hostile_source()
    cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef))
    methods = [n.name for n in cls.body if isinstance(n, ast.FunctionDef)]
    assert cls.name == "Server_1_class_"
    assert methods[:6] == ["tool_9lives", "Any_", "call", "a_b", "a_b_2", "a_b_3"]  # sorted by the original
    for name in methods:
        assert name.isidentifier() and name.isascii() and not name.startswith("_")
    assert {"class_", "match_", "print_", "check_tools_2", "dd"} <= set(methods)
    odd = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "odd_required")
    assert ast.unparse(odd.args) == "self, *, a: str, b: Any=None, c: Any=None"
    assert source == hostile_source()
    hostile = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name.startswith("x_"))
    params = [a.arg for a in hostile.args.kwonlyargs]
    assert params[0] == "self_"  # the required one first
    assert {"class_", "arg_1st", "arg", "str_", "cast", "import_os_"} <= set(params)
    assert len(set(methods)) == len(methods) == len(HOSTILE_TOOLS) and len(set(params)) == len(params)


def test_hostile_descriptions_are_inert_docstrings():
    cls = next(n for n in ast.parse(hostile_source()).body if isinstance(n, ast.ClassDef))
    hostile = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name.startswith("x_"))
    doc = ast.get_docstring(hostile) or ""
    assert 'ends the docstring """ and \\ then \\x1b[31mred\\u202e' in doc
    assert "\x1b" not in doc and "\u202e" not in doc
    assert doc.splitlines()[1] == "import os"  # a line of the text, inside the docstring


def test_a_hostile_stub_passes_mypy_strict_and_calls_the_tool_by_its_wire_name(tmp_path, mypy_cache):
    path = tmp_path / "hostile_api.py"
    path.write_text(hostile_source("Hostile"), encoding="utf-8")
    checked = run_mypy(tmp_path, mypy_cache, "hostile_api.py")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    fake = FakeServer(strict=False)
    seen = []
    for tool in (HOSTILE_TOOLS[0], HOSTILE_TOOLS[1]):
        fake.add_tool(tool["name"], lambda **kw: seen.append(kw) or "ok", input_schema=tool["inputSchema"],
                      description=tool.get("description"))
    api = load(path).Hostile(Client(fake).__enter__(), check=False)
    try:
        assert api.a_b().text == "ok"
        Stub._call(api, INJECTION, {"self": 1, "'])\nimport os#": "v", "nested": None})
        assert seen[-1] == {"self": 1, "'])\nimport os#": "v"}  # None left out, keys as sent
    finally:
        api.client.close()
