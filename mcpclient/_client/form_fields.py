"""One form-elicitation field asked of a person: how it is shown, how a typed line becomes a value.

Only the reading of text is here. Whether a value is acceptable (type, enum, length, format,
bounds, item counts) is decided by ``form_answer_problems``, the same check every handler's
answer goes through, so a person and a program are held to one reading of the schema.
"""

from __future__ import annotations

import json
import math
from typing import Any

import attrs

from .._core.text import clean
from .elicitation import form_answer_problems

__all__ = ["Field", "Invalid"]

_YES = ("y", "yes", "true", "t", "1", "on")
_NO = ("n", "no", "false", "f", "0", "off")


class Invalid(ValueError):
    """The typed line is not a value for the field; the message says why (shown, then re-asked)."""


@attrs.frozen
class Option:
    value: Any
    label: str


def _options(prop: Any, list_key: str) -> list[Option] | None:
    """The choices of an enum: ``enum`` (titled by legacy ``enumNames``), or ``oneOf``/``anyOf``
    entries with ``const`` and ``title``."""
    if not isinstance(prop, dict):
        return None
    if isinstance(prop.get("enum"), list):
        labels = prop.get("enumNames")
        labels = labels if isinstance(labels, list) and len(labels) == len(prop["enum"]) else None
        return [Option(v, clean(labels[i]) if labels else clean(v)) for i, v in enumerate(prop["enum"])]
    entries = prop.get(list_key)
    if isinstance(entries, list):
        return [Option(e.get("const"), clean(e.get("title") or e.get("const")))
                for e in entries if isinstance(e, dict) and "const" in e]
    return None


@attrs.define
class Field:
    """A property of the requested schema, ready to be asked."""

    name: str
    prop: dict[str, Any]
    required: bool

    @property
    def kind(self) -> str:
        kind = self.prop.get("type")
        return kind if isinstance(kind, str) else "json"

    @property
    def options(self) -> list[Option] | None:
        if self.kind == "array":
            return _options(self.prop.get("items"), "anyOf")
        return _options(self.prop, "oneOf")

    @property
    def title(self) -> str:
        return clean(self.prop.get("title") or self.name, 200)

    @property
    def has_default(self) -> bool:
        return "default" in self.prop

    def describe(self) -> list[str]:
        """The lines shown before the prompt: title, description, what to type, the choices."""
        head = self.title
        if self.prop.get("description"):
            head += " - " + clean(self.prop["description"])
        hints = [self.type_hint()]
        if self.has_default:
            hints.append(f"Enter takes the default: {self.show(self.prop['default'])}")
        elif self.required:
            hints.append("required")
        else:
            hints.append("optional, Enter skips")
        lines = [head, "  (" + "; ".join(h for h in hints if h) + ")"]
        for i, option in enumerate(self.options or [], 1):
            lines.append(f"  {i}) {option.label}")
        return lines

    def type_hint(self) -> str:
        """What to type, in a few words: "an integer from 1 to 5", "y or n", "text"..."""
        p, kind = self.prop, self.kind
        if self.options is not None:
            return "several numbers or values, separated by commas" if kind == "array" else "a number or a value"
        if kind in ("integer", "number"):
            low, high = p.get("minimum"), p.get("maximum")
            word = "an integer" if kind == "integer" else "a number"
            if low is not None and high is not None:
                return f"{word} from {low} to {high}"
            if low is not None:
                return f"{word}, at least {low}"
            return f"{word}, at most {high}" if high is not None else word
        if kind == "boolean":
            return "y or n"
        if kind == "string":
            fmt = {"email": "an email address", "uri": "a URI", "date": "a date, YYYY-MM-DD",
                   "date-time": "a date and time, YYYY-MM-DDTHH:MM:SS+00:00"}.get(str(p.get("format")), "text")
            sizes = [f"at least {p['minLength']} characters" if isinstance(p.get("minLength"), int) else "",
                     f"at most {p['maxLength']} characters" if isinstance(p.get("maxLength"), int) else ""]
            return ", ".join([fmt, *filter(None, sizes)])
        return "JSON"

    def show(self, value: Any) -> str:
        """A value as the person knows it: the choice's label, yes/no, or the text."""
        labels = {json.dumps(o.value): o.label for o in self.options or []}
        if isinstance(value, list):
            return ", ".join(labels.get(json.dumps(v), clean(v)) for v in value) or "(none)"
        if isinstance(value, bool):
            return "yes" if value else "no"
        return labels.get(json.dumps(value), clean(value if isinstance(value, str) else json.dumps(value)))

    def parse(self, text: str) -> Any:
        """The typed ``text`` as this field's value; raises ``Invalid`` with the reason."""
        text = text.strip()
        value = self._read(text)
        problems = form_answer_problems({"properties": {self.name: self.prop}}, {self.name: value})
        prefix = f"field {self.name!r} "
        if problems:
            raise Invalid("; ".join(p[len(prefix):] if p.startswith(prefix) else p for p in problems))
        return value

    def _read(self, text: str) -> Any:
        options = self.options
        if self.kind == "array":
            words = [w.strip() for w in text.split(",") if w.strip()]
            if options is None:
                return words
            picked: list[Any] = []
            for word in words:
                value = _pick(options, word)
                if value not in picked:
                    picked.append(value)
            return picked
        if options is not None:
            return _pick(options, text)
        if self.kind == "boolean":
            if text.lower() in _YES:
                return True
            if text.lower() in _NO:
                return False
            raise Invalid("answer y or n")
        if self.kind in ("integer", "number"):
            return _number(text, integer=self.kind == "integer")
        if self.kind == "string":
            return text
        try:
            return json.loads(text)
        except ValueError as exc:
            raise Invalid(f"not JSON: {exc}") from None


def _pick(options: list[Option], word: str) -> Any:
    """The option ``word`` names: by its number, its exact value, or its label (any case)."""
    if word.isdigit() and 1 <= int(word) <= len(options):
        return options[int(word) - 1].value
    for option in options:
        if isinstance(option.value, str) and option.value == word:
            return option.value
    for option in options:
        if word.lower() in (option.label.lower(), str(option.value).lower()):
            return option.value
    raise Invalid(f"{word!r} is not one of the choices: type a number from 1 to {len(options)}")


def _number(text: str, *, integer: bool) -> int | float:
    try:
        value = float(text) if not integer else int(text)
    except ValueError:
        try:
            as_float = float(text)
        except ValueError:
            raise Invalid(f"must be {'an integer' if integer else 'a number'}, got {text!r}") from None
        if not as_float.is_integer():
            raise Invalid(f"must be an integer, got {text!r}") from None
        value = int(as_float)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Invalid(f"must be a finite number, got {text!r}")
        if value.is_integer() and "." not in text and "e" not in text.lower():
            return int(value)
    return value
