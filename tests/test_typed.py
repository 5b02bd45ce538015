"""Typed views of structured tool output: classes made from outputSchema, and a user's own class."""

from __future__ import annotations

import builtins
import dataclasses
import keyword
import subprocess
import sys

import attrs
import pytest

from mcpclient import Client, MCPError, Plugins, StructuredOutputError, ToolResult
from mcpclient._core.typed import MAX_DEPTH
from tests.doubles import ScriptedServer

PLACE = {
    "type": "object", "title": "Place",
    "properties": {"name": {"type": "string"}, "lat": {"type": "number"}},
    "required": ["name", "lat"],
}
SCHEMA = {
    "type": "object", "title": "Report",
    "$defs": {"Place": PLACE},
    "properties": {
        "where": {"$ref": "#/$defs/Place"},
        "also": {"type": "array", "items": {"$ref": "#/$defs/Place"}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "level": {"enum": ["low", "high"]},
        "at": {"type": "string", "format": "date-time"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "count": {"type": ["integer", "null"], "default": 3},
        "extra": {"type": "object"},
        "first-name": {"type": "string"},
        "class": {"type": "string"},
    },
    "required": ["where", "tags"],
}


def view(schema, value):
    return ToolResult(structured_content=value, output_schema=schema).data


def test_nested_objects_arrays_and_refs_become_classes():
    data = view(SCHEMA, {
        "where": {"name": "Oslo", "lat": 59}, "also": [{"name": "Bergen", "lat": 60.4}], "tags": ["a"],
        "level": "high", "at": "2026-01-01T00:00:00Z", "extra": {"any": [1, {"x": 2}]},
        "first-name": "Ada", "class": "c", "undeclared": 1,
    })
    assert type(data).__name__ == "Report" and attrs.has(type(data))
    assert data.where.name == "Oslo" and data.where.lat == 59.0 and isinstance(data.where.lat, float)
    assert type(data.also[0]) is type(data.where)  # one $ref target, one class
    assert data.tags == ["a"] and data.level == "high" and data.at == "2026-01-01T00:00:00Z"
    assert data.extra == {"any": [1, {"x": 2}]}  # an object without properties stays a dict
    assert (data.first_name, data.class_) == ("Ada", "c")
    assert not hasattr(data, "undeclared")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        data.tags = []


@pytest.mark.parametrize("required", [True, False])
def test_any_property_name_a_server_picks_makes_a_working_class(required):
    names = list(dict.fromkeys([
        "self", "cl", "converter", "NOTHING", "attr_dict", "_setattr", "__attrs_attrs__", "__init__",
        "a b", "1x", "", "_", "__", "class", "match", "é", *dir(builtins), *keyword.kwlist,
    ]))
    schema = {"type": "object", "title": "Odd", "properties": {name: {"type": "string"} for name in names},
              "required": names if required else []}
    data = view(schema, {name: f"v{i}" for i, name in enumerate(names)})
    values = [getattr(data, field.name) for field in attrs.fields(type(data))]
    assert sorted(values) == sorted(f"v{i}" for i in range(len(names)))
    assert data == data and repr(data)


def test_optional_fields_take_none_or_the_schema_default():
    data = view(SCHEMA, {"where": {"name": "Oslo", "lat": 1}, "tags": []})
    assert (data.also, data.note, data.count, data.level) == (None, None, 3, None)
    assert view(SCHEMA, {"where": {"name": "x", "lat": 1}, "tags": [], "note": "n", "count": None}).count is None


def test_classes_are_made_once_per_schema():
    one = view(SCHEMA, {"where": {"name": "x", "lat": 1}, "tags": []})
    two = view(dict(SCHEMA), {"where": {"name": "y", "lat": 2}, "tags": []})
    assert type(one) is type(two) and one != two


@pytest.mark.parametrize("schema", [
    {"type": "object", "title": "addOutput", "properties": {"result": {"type": "integer"}}, "required": ["result"]},
    {"type": "object", "x-fastmcp-wrap-result": True, "properties": {"result": {"type": "integer"}}, "required": ["result"]},
])
def test_a_wrapped_result_is_unwrapped(schema):
    result = ToolResult(structured_content={"result": 5}, output_schema=schema)
    assert result.data == 5 and result.structured(int) == 5


def test_a_single_result_property_without_the_wrapping_marks_is_an_object():
    schema = {"type": "object", "title": "Answer", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    assert view(schema, {"result": 5}).result == 5


def test_a_wrapped_ref_is_resolved_against_the_whole_schema():
    schema = {"type": "object", "title": "fOutput", "$defs": {"Place": PLACE},
              "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Place"}}}, "required": ["result"]}
    assert [p.name for p in view(schema, {"result": [{"name": "a", "lat": 1}]})] == ["a"]


def test_without_a_schema_or_for_a_failed_tool_the_content_is_as_sent():
    assert ToolResult(structured_content={"result": 5}).data == {"result": 5}
    assert ToolResult(structured_content={"why": 1}, is_error=True, output_schema=SCHEMA).data == {"why": 1}
    assert ToolResult(output_schema=SCHEMA).data is None


def test_output_that_does_not_fit_the_schema_names_the_path():
    with pytest.raises(StructuredOutputError) as info:
        view(SCHEMA, {"where": {"name": "x", "lat": "north"}, "tags": [1]})
    assert isinstance(info.value, MCPError) and isinstance(info.value, ValueError)
    assert info.value.path == "$.where.lat"
    assert any(error.endswith("$.tags[0]") for error in info.value.errors)


def test_a_recursive_schema_is_refused_with_a_clear_error():
    schema = {"type": "object", "title": "Tree", "$defs": {"Node": {
        "type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
        "properties": {"root": {"$ref": "#/$defs/Node"}}}
    with pytest.raises(StructuredOutputError, match="recursive"):
        view(schema, {"root": {"children": []}})


def test_a_schema_nested_too_deep_is_refused_never_a_recursion_error():
    schema: dict = {"type": "string"}
    for _ in range(5000):
        schema = {"type": "object", "properties": {"a": schema}}
    with pytest.raises(StructuredOutputError, match=f"deeper than {MAX_DEPTH}") as info:
        view(schema, {"a": {}})
    assert info.value.path.startswith("$.a.a.a")


def test_a_schema_just_within_the_depth_limit_works():
    schema: dict = {"type": "integer"}
    value: object = 7
    for _ in range(MAX_DEPTH):
        schema, value = {"type": "object", "properties": {"a": schema}, "required": ["a"]}, {"a": value}
    data = view(schema, value)
    for _ in range(MAX_DEPTH):
        data = data.a
    assert data == 7


def test_refs_are_json_pointers_with_escapes_and_list_indices():
    schema = {"type": "object", "$defs": {"a/b~c": PLACE, "list": [PLACE]},
              "properties": {"p": {"$ref": "#/$defs/a~1b~0c"}, "n": {"$ref": "#/$defs/list/0"},
                             "gone": {"$ref": "#/$defs/missing"}}}
    data = view(schema, {"p": {"name": "x", "lat": 1}, "n": {"name": "y", "lat": 2}, "gone": {"k": 1}})
    assert (data.p.name, data.n.name, data.gone) == ("x", "y", {"k": 1})


def test_unions_and_outside_refs_stay_as_sent():
    schema = {"type": "object", "properties": {
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "far": {"$ref": "https://example.invalid/x.json"},
        "open": {}}}
    data = view(schema, {"either": 3, "far": {"k": 1}, "open": [1]})
    assert (data.either, data.far, data.open) == (3, {"k": 1}, [1])


@attrs.frozen
class Place:
    name: str
    lat: float


@dataclasses.dataclass
class Report:
    where: Place
    tags: list[str]
    note: str | None = None


def test_structured_fills_a_users_attrs_class_or_dataclass():
    result = ToolResult(structured_content={"where": {"name": "Oslo", "lat": 59}, "tags": ["a"], "more": 1},
                        output_schema=SCHEMA)
    assert result.structured(Report) == Report(where=Place(name="Oslo", lat=59.0), tags=["a"])


def test_structured_never_coerces_scalars_and_names_the_path():
    result = ToolResult(structured_content={"where": {"name": 5, "lat": 1}, "tags": "abc"})
    with pytest.raises(StructuredOutputError) as info:
        result.structured(Report)
    assert info.value.path == "$.where.name" and "Report" in str(info.value)
    assert len(info.value.errors) == 2
    with pytest.raises(StructuredOutputError, match="required field missing @ \\$.tags"):
        ToolResult(structured_content={"where": {"name": "x", "lat": 1}}).structured(Report)
    with pytest.raises(StructuredOutputError):
        ToolResult(structured_content=True).structured(int)  # a bool is not an int


@dataclasses.dataclass
class Node:
    children: list[Node]


def test_structured_into_a_recursive_class_of_very_deep_output_is_a_clear_error_never_a_recursion_error():
    value: dict = {"children": []}
    for _ in range(sys.getrecursionlimit()):
        value = {"children": [value]}
    with pytest.raises(StructuredOutputError) as info:
        ToolResult(structured_content=value).structured(Node)
    assert len(str(info.value)) < 1000 and info.value.path.startswith("$.children[0].children[0]")
    assert ToolResult(structured_content={"children": [{"children": []}]}).structured(Node) == Node([Node([])])


def test_structured_of_something_that_is_not_an_object_is_a_clear_error():
    with pytest.raises(StructuredOutputError):
        ToolResult(structured_content=[1, 2]).structured(Report)
    with pytest.raises(StructuredOutputError, match="no structured content"):
        ToolResult().structured(int)


class Plain:
    def __init__(self, a: int) -> None:
        self.a = a


def test_structured_into_a_class_cattrs_cannot_build_is_our_error_not_cattrs():
    with pytest.raises(StructuredOutputError, match="cannot build Plain: give an attrs class") as info:
        ToolResult(structured_content={"a": 1}).structured(Plain)
    assert isinstance(info.value.__cause__, Exception)


def test_the_client_attaches_the_listed_schema_even_with_validation_off(transport):
    tools = [{"name": "typed", "inputSchema": {"type": "object"}, "outputSchema": SCHEMA}]
    result = {"content": [], "structuredContent": {"where": {"name": "x", "lat": 1}, "tags": []}}
    server = ScriptedServer(transport, {"tools/list": lambda p, m: {"tools": tools},
                                        "tools/call": lambda p, m: result})
    with Client(transport, timeout=5, plugins=Plugins(output_validation="off")) as client:
        assert client.call_tool("typed").output_schema is None  # not listed yet: nothing known
        client.list_tools()
        typed = client.call_tool("typed")
        assert typed.output_schema == SCHEMA and typed.data.where.name == "x"
    server.stop()


def test_import_mcpclient_does_not_load_the_class_builder():
    code = "import sys, mcpclient; print('mcpclient._core.typed' in sys.modules, 'cattrs.preconf.json' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "False"]
