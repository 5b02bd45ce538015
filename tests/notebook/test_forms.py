"""The explorer's form: a tool's inputSchema as fields, and typed text read back as arguments."""

from __future__ import annotations

import pytest

from mcpclient._core.text import is_clean
from mcpclient.notebook.forms import fields_of, read_form

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "Where"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 3},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
        "words": {"type": "array", "items": {"type": "string"}},
        "detailed": {"type": "boolean"},
        "where": {"type": "object", "properties": {"lat": {"type": "number"}}},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "scores": {"type": "array", "items": {"type": "number"}},
    },
    "required": ["city"],
}


def kinds(schema):
    return {f.name: f.kind for f in fields_of(schema)}


def test_each_property_becomes_a_field_of_the_kind_that_reads_it():
    assert kinds(SCHEMA) == {"city": "text", "days": "number", "units": "choice", "tags": "multi",
                             "words": "list", "detailed": "boolean", "where": "json", "note": "text",
                             "scores": "json"}


def test_the_spec_carries_title_hint_default_required_and_options():
    spec = {f.name: f.spec() for f in fields_of(SCHEMA)}
    assert spec["city"]["required"] is True and spec["city"]["description"] == "Where"
    assert spec["days"]["default"] == "3" and spec["days"]["hint"] == "an integer from 1 to 7"
    assert spec["units"]["options"] == ["metric", "imperial"]
    assert spec["note"]["default"] == ""  # a null default is an empty box


def test_typed_text_becomes_arguments_and_empty_boxes_are_left_out():
    arguments, problems = read_form(fields_of(SCHEMA), {
        "city": " Oslo ", "days": "", "units": "2", "tags": "1,3", "words": "x, y", "detailed": "y",
        "where": '{"lat": 59.9}', "note": "", "scores": "[1, 2.5]"})
    assert problems == {}
    assert arguments == {"city": "Oslo", "units": "imperial", "tags": ["a", "c"], "words": ["x", "y"],
                         "detailed": True, "where": {"lat": 59.9}, "scores": [1, 2.5]}


def test_problems_are_given_per_field_and_nothing_is_sent():
    _, problems = read_form(fields_of(SCHEMA), {"days": "9", "where": "{oops", "detailed": "maybe"})
    assert problems["city"] == "required"
    assert "at most 7" in problems["days"]
    assert problems["where"].startswith("not JSON")
    assert "y or n" in problems["detailed"]


@pytest.mark.parametrize("schema", [None, [], {"properties": []}, {"properties": {"x": "not a dict"}}])
def test_a_malformed_schema_gives_no_or_json_fields_never_an_error(schema):
    for field in fields_of(schema):
        assert field.kind == "json"
        field.spec()


HOSTILE = "<img src=x onerror=alert(1)>\x1b]52;c;aGk=\x07\u202eevil\nforged line"


def test_server_strings_in_the_spec_are_cleaned_of_controls():
    schema = {"properties": {HOSTILE: {"type": "string", "title": HOSTILE, "description": HOSTILE,
                                       "enum": [HOSTILE, "b"], "default": HOSTILE}}}
    spec = fields_of(schema)[0].spec()
    for key in ("name", "title", "description", "default", "hint"):
        assert is_clean(spec[key]), key
        assert "\n" not in spec[key] and "\u202e" not in spec[key]
    assert all(is_clean(option) for option in spec["options"])
    # the page names the field by its cleaned name; the argument sent keeps the schema's own
    arguments, problems = read_form(fields_of(schema), {spec["name"]: "2"})
    assert problems == {} and arguments == {HOSTILE: "b"}


def test_names_that_clean_to_the_same_text_stay_distinct_fields():
    schema = {"properties": {"a\n": {"type": "string"}, "a\\n": {"type": "string"}}}
    keys = [f.key for f in fields_of(schema)]
    assert keys == ["a\\n", "a\\n (2)"]
    arguments, _ = read_form(fields_of(schema), {"a\\n": "x", "a\\n (2)": "y"})
    assert arguments == {"a\n": "x", "a\\n": "y"}


def test_a_list_box_says_to_separate_words_by_commas():
    spec = {f.name: f.spec() for f in fields_of(SCHEMA)}
    assert spec["words"]["hint"] == "words separated by commas"
    assert spec["where"]["hint"] == "JSON"
