"""A tool's ``inputSchema`` as a form: the fields to draw, and the typed text read back as arguments.

Each top-level property becomes one ``FormField``, read by the elicitation form's ``Field``
(``mcpclient._client.form_fields``), so a number, a choice, a yes/no and a list are read and
checked here exactly as when a server asks a person. What an elicitation schema cannot hold
(objects, arrays of objects or numbers, a property without a type) is a JSON field. An optional
property written as ``anyOf: [X, {"type": "null"}]`` (what pydantic makes) is read as ``X``.

Every string that comes from the server (names, titles, descriptions, labels, defaults) is
passed through ``clean`` before it is put in a spec, and the front end shows specs as text,
never as markup.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import attrs

from .._client.elicitation import form_answer_problems
from .._client.form_fields import Field, Invalid
from .._core.text import clean

__all__ = ["FormField", "fields_of", "read_form"]

#: How a field is drawn: a text box, a number box, a checkbox, a drop-down, a multi-select,
#: a comma-separated list, or a JSON text area.
KINDS = ("text", "number", "boolean", "choice", "multi", "list", "json")


#: What to type where the elicitation field's hint is not what the box takes.
_HINTS = {"list": "words separated by commas", "json": "JSON", "choice": "", "multi": ""}


def _unwrap(prop: Any) -> dict[str, Any]:
    """``prop`` as a dict, an ``anyOf`` of one type and null read as that type."""
    if not isinstance(prop, dict):
        return {}
    variants = prop.get("anyOf")
    if "type" not in prop and isinstance(variants, list):
        real = [v for v in variants if isinstance(v, dict) and v.get("type") != "null"]
        if len(real) == 1 and len(real) < len(variants):
            merged = {**real[0], **{k: v for k, v in prop.items() if k != "anyOf"}}
            if merged.get("default", "") is None:
                del merged["default"]  # null means "leave it out", which an empty box says
            return merged
    return prop


@attrs.frozen
class FormField:
    """One property of a tool's ``inputSchema``, ready to be drawn and read."""

    field: Field
    kind: str
    #: The name the page shows and sends back: the property's name cleaned (made distinct).
    key: str

    @property
    def name(self) -> str:
        """The property's own name, the argument's."""
        return self.field.name

    def spec(self) -> dict[str, Any]:
        """What the front end draws: plain JSON, every server string cleaned."""
        prop = self.field.prop
        default = prop.get("default")
        return {
            "name": self.key,
            "title": self.field.title,
            "description": clean(prop.get("description") or "", 1000),
            "kind": self.kind,
            "required": self.field.required,
            "default": "" if not self.field.has_default else _as_text(self, default),
            "options": [o.label for o in self.field.options or []] if self.kind in ("choice", "multi") else [],
            "hint": clean(_HINTS[self.kind] if self.kind in _HINTS else self.field.type_hint(), 200),
        }

    def read(self, text: str) -> Any:
        """``text`` as this field's value; raises ``Invalid`` with the reason."""
        if self.kind != "json":
            return self.field.parse(text)
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise Invalid(f"not JSON: {exc}") from None
        problems = form_answer_problems({"properties": {self.name: self.field.prop}}, {self.name: value})
        if problems:
            raise Invalid("; ".join(problems))
        return value


def _as_text(form_field: FormField, value: Any) -> str:
    """A default as the person would type it."""
    if form_field.kind == "json":
        return clean(json.dumps(value, ensure_ascii=False))
    if form_field.kind == "boolean":
        return "y" if value else "n"
    return form_field.field.show(value)


def _kind(field: Field) -> str:
    kind = field.kind
    if field.options is not None:
        return "multi" if kind == "array" else "choice"
    if kind == "array":
        items = field.prop.get("items")
        plain = not isinstance(items, dict) or items.get("type") in (None, "string")
        return "list" if plain and not (isinstance(items, dict) and len(items) > 1) else "json"
    return {"string": "text", "integer": "number", "number": "number", "boolean": "boolean"}.get(kind, "json")


def fields_of(schema: Any) -> list[FormField]:
    """The fields of a tool's ``inputSchema`` (an object schema), in the schema's order."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return []
    required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
    found: list[FormField] = []
    keys: set[str] = set()
    for name, raw in schema["properties"].items():
        if not isinstance(name, str):
            continue
        key = base = clean(name, 200)
        count = 1
        while key in keys:
            count += 1
            key = f"{base} ({count})"
        keys.add(key)
        field = Field(name, _unwrap(raw), name in required)
        found.append(FormField(field, _kind(field), key))
    return found


def read_form(fields: list[FormField], texts: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The arguments the typed ``texts`` (by each field's ``key``) make, and a problem per key.

    A box left empty leaves its argument out (the server applies its default); a required
    field left empty is a problem. For a checkbox the front end sends ``"y"`` or ``"n"``;
    for a choice the number of the option, for a multi-select the numbers joined by commas.
    """
    arguments: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for form_field in fields:
        text = texts.get(form_field.key)
        text = text.strip() if isinstance(text, str) else ""
        if not text:
            if form_field.field.required:
                problems[form_field.key] = "required"
            continue
        try:
            arguments[form_field.name] = form_field.read(text)
        except Invalid as exc:
            problems[form_field.key] = clean(str(exc), 500)
    return arguments, problems
