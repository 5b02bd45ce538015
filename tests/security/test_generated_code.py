"""Generated code holds recorded and server text only as literals (issue 44, item 4).

``mcpclient record --pytest`` once put a recording header's ``kind``, its target and the file's
name inside the generated module's docstring: a ``\"\"\"`` in any of them ended it and what
followed ran when pytest imported the test. Here a real session with the official SDK server
(its echo tool given text full of quotes, backslashes, ``\\N{...}``, line separators, NUL,
braces and non-BMP characters) is recorded, then shared in hostile forms: its header's
``kind``, its target (a string, a list) and the file's name hold code that would touch a
marker file. Each generated test must import without running anything (no marker) and still
pass against its recording, in one pytest run, as must the test of a session whose server
sent lone surrogates (which the recorder once could not write: the connection died). A header whose fields have the wrong types is
refused, by ``record --pytest`` and by the replay.

Hypothesis then feeds hostile strings to every generator: ``record --pytest``
(``pytest_source``), ``mcpclient stubs`` (``generate``) and the notebook's copy as code
(``call_code``); the code each writes parses, is ASCII, has only the statements and calls
of its template, and gives back the values as literals. The classes ``ToolResult.data``
makes (attrs and cattrs generate their code from the names) take any property name.
"""

from __future__ import annotations

import ast
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpclient._client.seam import CLIENT_OWNED
from mcpclient._core.typed import typed_view
from mcpclient.cli import main
from mcpclient.devtools.stubs import generate
from mcpclient.notebook.results import call_code
from mcpclient.testing import recorded
from mcpclient.testing._generate import pytest_source
from tests.cli.test_record import OFFLINE  # the replay must need neither a process nor a socket
from tests.conftest import SDK_SERVER
from tests.helpers import require_mcp_sdk

require_mcp_sdk()

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
SURROGATE_SERVER = Path(__file__).with_name("surrogate_stdio.py")
#: Code that leaves a trace where it runs (the generated tests run in their own folder).
TOUCH = "__import__('pathlib').Path('PWNED').touch()"
#: What a recorded string may hold to break out of a string literal or a comment.
PAYLOADS = [
    f'x"""\n{TOUCH}\n"""',  # ends a """ docstring
    f"x'''\n{TOUCH}\n'''",  # ends a ''' one
    f'x\\"""\n{TOUCH}\n"""',  # a backslash to eat the escape of the quote
    f'x\\\n"""; {TOUCH}; """',  # a line continuation
    '\\N{no such character} \\N{BULLET} \\x \\u12',  # escapes Python would read
    f'\r"""\r{TOUCH}\r"""',  # carriage returns, which end a comment line
    f'\u2028"""\u2028{TOUCH}\u2028\x85"""',  # what str.splitlines takes for line breaks
    "nul \x00 byte",  # Python source cannot hold one
    "{} {0} {kind} {{ }} %s %(kind)s",  # format fields
    "non-BMP \U0001f600 \U000e0041 and RTL \u202e",
    f"# -*- coding: utf-7 -*-\n+ACIAIgAi-\n{TOUCH}",  # an encoding declaration
]
#: The echo tool's argument, a recorded value in params and result alike.
HOSTILE_TEXT = "".join(PAYLOADS)
def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> list[str]:
    """A real session's lines: the official SDK server's echo of ``HOSTILE_TEXT``."""
    recording = tmp_path_factory.mktemp("recorded") / "sdk.jsonl"
    call = "echo " + json.dumps({"text": HOSTILE_TEXT})
    code, _, err = run("record", "--file", str(recording), "--call", call, "--", *SDK_SERVER)
    assert code == 0, err
    return recording.read_text(encoding="utf-8").split("\n")


@pytest.fixture(scope="module")
def surrogates(tmp_path_factory) -> Path:
    """A session with a server whose tool list holds lone surrogates (JSON ``\\ud800`` escapes)."""
    recording = tmp_path_factory.mktemp("recorded") / "surrogates.jsonl"
    code, _, err = run("record", "--file", str(recording), "--", sys.executable, str(SURROGATE_SERVER))
    assert code == 0 and "failed" not in err, err  # the recorder wrote what UTF-8 cannot encode raw
    return recording


def with_header(lines: list[str], **fields: Any) -> str:
    header = {**json.loads(lines[0]), **fields}
    return "\n".join([json.dumps(header, ensure_ascii=False), *lines[1:]])


def hostile_recordings(lines: list[str]) -> dict[str, str]:
    """File name -> the recording as shared by someone else: hostile kinds, targets and names."""
    shared = {}
    for number, payload in enumerate(PAYLOADS):
        shared[f"kind{number}.jsonl"] = with_header(lines, kind=payload)
        shared[f"list{number}.jsonl"] = with_header(lines, target=["python", payload])
        shared[f"url{number}.jsonl"] = with_header(lines, kind="http", target=f"http://127.0.0.1/{payload}")
        name = payload.replace("/", "").replace("\x00", "")  # what a file name can hold
        shared[f"{name}{number}.jsonl"] = with_header(lines, kind=payload)
    return shared


def test_hostile_recordings_make_tests_that_run_nothing_on_import_and_pass(session, surrogates, tmp_path):
    assert sum("PWNED" in line for line in session) == 2  # the call and its echo were recorded
    shared, suite = tmp_path / "shared", tmp_path / "suite"
    shared.mkdir()
    suite.mkdir()
    (suite / "conftest.py").write_text(OFFLINE)
    made = []
    for number, (name, text) in enumerate(hostile_recordings(session).items()):
        path = shared / name
        path.write_text(text, encoding="utf-8")
        code, source, err = run("record", "--pytest", str(path))
        assert code == 0, f"{name!r}: {err}"
        assert source.isascii() and "PWNED" not in ast.get_docstring(ast.parse(source))
        (suite / f"test_hostile_{number}.py").write_text(source, encoding="utf-8")
        made.append(name)
    code, source, err = run("record", "--pytest", str(surrogates))
    assert code == 0, err
    (suite / "test_surrogates.py").write_text(source, encoding="utf-8")
    made.append(surrogates.name)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                             "-p", "no:xdist", str(suite)], cwd=suite, env=env, capture_output=True, text=True,
                            timeout=240)
    assert not (suite / "PWNED").exists(), "a recorded string ran as code"
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert f"{len(made)} passed" in result.stdout


BAD_HEADERS = [
    ({"kind": 5}, "'kind' must be a string (it is a int)"),
    ({"kind": None}, "'kind' must be a string (it is a NoneType)"),
    ({"kind": ["stdio"]}, "'kind' must be a string (it is a list)"),
    ({"target": {"command": "python"}}, "'target' must be a string or a list of strings (it is a dict)"),
    ({"target": ["python", 1]}, "'target' must be a string or a list of strings (it is a list)"),
    ({"target": 3.5}, "'target' must be a string or a list of strings (it is a float)"),
    ({"mcpclient_recording": True}, "is not an mcpclient recording"),
    ({"mcpclient_recording": 1.0}, "is not an mcpclient recording"),
    ({"mcpclient_recording": "1"}, "is not an mcpclient recording"),
]


@pytest.mark.parametrize(("fields", "said"), BAD_HEADERS)
def test_a_header_of_the_wrong_types_is_refused(session, tmp_path, fields, said):
    path = tmp_path / "bad.jsonl"
    path.write_text(with_header(session, **fields), encoding="utf-8")
    code, out, err = run("record", "--pytest", str(path))
    assert (code, out) == (2, "")
    assert "cannot make a test of" in err and said in err
    with pytest.raises(ValueError, match=said.replace("(", r"\(").replace(")", r"\)")):
        recorded(path, mode="none")


@pytest.mark.parametrize(("text", "said"), [
    ('{"kind": "stdio", "target": "x"}\n', "is not an mcpclient recording"),
    ('{"mcpclient_recording": 1, "target": "x"}\n', "'kind' must be a string (it is missing)"),
    ('[1]\n', "is not an mcpclient recording"),
    ('{"mcpclient_recording": 1, "kind": "stdio", "target": "x"}\n{"dir": "sideways", "message": {}}\n',
     "line 2 is no event"),
    ('{"mcpclient_recording": 1, "kind": "stdio", "target": "x"}\n{"dir": "recv", "message": [1]}\n',
     "line 2 is no event"),
    ('{"mcpclient_recording": 1, "kind": "stdio", "target": "x"}\n\n{"dir": "recv", "message": \n',
     "line 3 is not JSON"),
    ('{"mcpclient_recording": 1, "kind": "stdio", "target": "x"}\n' + "[" * 100_000 + "\n", "line 2 is not JSON"),
])
def test_a_file_that_is_no_recording_is_refused_with_the_reason(tmp_path, text, said):
    path = tmp_path / "odd.jsonl"
    path.write_text(text, encoding="utf-8")
    code, out, err = run("record", "--pytest", str(path))
    assert (code, out) == (2, "") and said in err
    with pytest.raises(ValueError, match=said.replace("(", r"\(").replace(")", r"\)")):
        recorded(path, mode="none")


# -- every generator, fed by hypothesis -------------------------------------------------------------

#: Pieces a hostile string is built of: quotes, escapes, line breaks Python or splitlines sees,
#: comment and format characters, NUL, a lone surrogate, non-BMP and bidi characters.
PIECES = ['"""', "'''", '"', "'", "\\", "\\N{BULLET}", "\\N{nope}", "\\x", "\n", "\r", "\r\n", "\u2028", "\x85",
          "\x0c", "#", "{", "}", "{0}", "%s", "\x00", "\ud800", "\U0001f600", "\u202e", "\x1b[2J", "-*- coding: utf-7 -*-",
          "+ACI-", " ", "import os", ")", "]", "\t"]
hostile = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=8).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | hostile,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile, inner, max_size=3), max_leaves=12)


def evaluate(node: ast.expr) -> Any:
    """A generated literal's value (``json.loads(...)`` and ``float('nan')`` are literals too)."""
    return eval(compile(ast.Expression(node), "<literal>", "eval"), {"__builtins__": {}, "json": json, "float": float})


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def calls(tree: ast.AST) -> set[str]:
    return {ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}


def file_name(text: str) -> str:
    """``text`` as much as a file name can hold of it (no ``/``, NUL or lone surrogate, 200 bytes)."""
    name = text.replace("/", "").replace("\x00", "").encode("utf-8", "ignore")[:200].decode("utf-8", "ignore")
    return name if name not in ("", ".", "..") else "x"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=hostile, target=st.one_of(hostile, st.lists(hostile, max_size=3)), name=hostile,
       method=hostile.filter(lambda m: m not in CLIENT_OWNED), params=json_values, result=json_values, code=json_values, message=json_values,
       raw=st.booleans())
def test_record_pytest_writes_recorded_values_only_as_literals(kind, target, name, method, params, result, code,
                                                                message, raw):
    header = {"mcpclient_recording": 1, "kind": kind, "target": target}
    events = [
        {"dir": "send", "t": 0, "message": {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}},
        {"dir": "recv", "t": 0, "message": {"jsonrpc": "2.0", "id": 1, "result": result}},
        {"dir": "send", "t": 0, "message": {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {}}},
        {"dir": "recv", "t": 0, "message": {"jsonrpc": "2.0", "id": "b", "error": {"code": code, "message": message}}},
    ]
    lines = [json.dumps(entry, ensure_ascii=not raw) for entry in [header, *events]]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / (file_name(name) + ".jsonl")
        try:
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        except UnicodeEncodeError:  # a lone surrogate written raw: no UTF-8 file holds it
            return
        source = pytest_source(path)
    assert source.isascii()
    tree = ast.parse(source, feature_version=(3, 10))
    compile(tree, "generated", "exec")
    kinds = [type(node).__name__ for node in tree.body]
    assert kinds in (["Expr", "Import", "ImportFrom", "ImportFrom", "Assign", "Assign", "FunctionDef"],
                     ["Expr", "Import", "Import", "ImportFrom", "ImportFrom", "Assign", "Assign", "FunctionDef"])
    assert (ast.get_docstring(tree) or "").startswith("Replays a recording offline and asserts")
    assigned = {node.targets[0].id: node.value for node in tree.body if isinstance(node, ast.Assign)}
    assert evaluate(assigned["RECORDED_FROM"]) == {"file": path.name, "kind": kind, "target": target}
    assert evaluate(assigned["RECORDING"]) == "".join(line + "\n" for line in lines)
    test = tree.body[-1]
    assert isinstance(test, ast.FunctionDef) and test.name.startswith("test_replay_") and test.name.isascii()
    assert calls(tree) <= {"client.request", "pytest.raises", "Client", "recorded", "path.write_text",
                           "replay.verify", "json.loads", "float"}
    requests = [node for node in ast.walk(test) if isinstance(node, ast.Call) and ast.unparse(node.func) == "client.request"]
    assert [evaluate(node.args[0]) for node in requests] == [method, "tools/call"]
    assert same(evaluate(requests[0].args[1]), params)
    compared = [node for node in ast.walk(test) if isinstance(node, ast.Compare)]
    assert same(evaluate(compared[0].comparators[0]), result)
    assert same([evaluate(e) for e in compared[1].comparators[0].elts], [code, message])


tool_names = hostile.filter(bool)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(tool_names, min_size=1, max_size=3, unique=True), description=hostile, key=hostile,
       key_text=hostile, enum=st.lists(st.one_of(hostile, st.integers(), st.none(), st.booleans()), min_size=1, max_size=3),
       server=hostile, version=hostile, class_name=hostile)
def test_stubs_write_server_values_only_as_literals(names, description, key, key_text, enum, server, version, class_name):
    tools = [{"name": name, "description": description,
              "inputSchema": {"type": "object", "required": [key], "description": description, "properties": {
                  key: {"enum": enum, "description": key_text},
                  "nested": {"type": "object", "description": description, "properties": {key: {"type": "string"}}}}},
              "outputSchema": {"type": "object", "description": description, "properties": {key: {"const": enum[0]}}}}
             for name in names]
    source = generate(tools, class_name=class_name, server_name=server, server_version=version)
    tree = ast.parse(source, feature_version=(3, 10))
    assert all(isinstance(node, (ast.Expr, ast.ImportFrom, ast.Assign, ast.ClassDef)) for node in tree.body)
    assert [n for n in tree.body if isinstance(n, ast.Expr)] == [tree.body[0]]  # the docstring, nothing else
    assert calls(tree) <= {"TypedDict", "_cast", "self._call", "self._structured"}
    assert all(ord(c) >= 0x20 or c == "\n" for c in source)
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    wire = {evaluate(node.args[0]) for node in ast.walk(cls) if isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("self._call", "self._structured")}
    assert wire == set(names)
    tools_map = next(n.value for n in cls.body if isinstance(n, ast.Assign) and n.targets[0].id == "TOOLS")
    assert set(evaluate(tools_map)) == set(names)
    server_value = next(n.value for n in cls.body if isinstance(n, ast.Assign) and n.targets[0].id == "SERVER")
    assert evaluate(server_value) == server


@settings(max_examples=200, deadline=None)
@given(tool=hostile, arguments=st.dictionaries(hostile, json_values | st.floats(), max_size=4),
       deep=st.integers(0, 120))
def test_the_copied_call_writes_names_and_arguments_only_as_literals(tool, arguments, deep):
    nested: Any = "bottom"
    for _ in range(deep):
        nested = [nested]
    arguments = {**arguments, "deep": nested}
    code = call_code("client", tool, arguments)
    assert code.isascii()
    tree = ast.parse(code, feature_version=(3, 10))
    statements = [ast.unparse(node) for node in tree.body]
    assert statements[-1] == "result" and statements[:-2] in ([], ["import json"])
    call = tree.body[-2].value
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == "client.call_tool"
    assert evaluate(call.args[0]) == tool and same(evaluate(call.args[1]), arguments)


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(hostile | st.sampled_from(["x\u00b2", "\uff46\uff4f\uff4f", "foo", "\u0300x", "a\u0300b", "self",
                                               "cl", "converter", "_", "1st", "class", "\u210c"]),
                     min_size=1, max_size=5, unique=True))
def test_typed_results_name_server_properties_as_identifiers_python_reads_back(keys):
    """``ToolResult.data`` makes attrs classes of an output schema: attrs and cattrs write each
    property's attribute name into the code they generate (a ``x²`` was a SyntaxError, a
    full-width ``ｆｏｏ`` a NameError, both escaping as such from ``.data``)."""
    schema = {"type": "object", "properties": {key: {"type": "string"} for key in keys}, "required": keys}
    made = typed_view(schema, {key: f"value {number}" for number, key in enumerate(keys)})
    assert list(attrs.astuple(made)) == [f"value {number}" for number in range(len(keys))]
    for field in attrs.fields(type(made)):
        assert field.name.isidentifier() and unicodedata.normalize("NFKC", field.name) == field.name


@pytest.mark.parametrize("name", ["client.x", "import", "a b", "x;import os", "", "1x"])
def test_the_copied_call_needs_a_variable_name(name):
    with pytest.raises(ValueError, match="is not a Python variable name"):
        call_code(name, "echo", {})
