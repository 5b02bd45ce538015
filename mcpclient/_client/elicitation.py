"""Elicitation beyond the basic form: answer checking, URL mode and its completion notices.

* Form answers are checked against the requested schema (the restricted, flat JSON Schema
  subset of the spec: string, number, integer, boolean, single- and multi-select enums) before
  they leave the client. An accepted answer that does not match is never sent: the server gets
  ``cancel`` (the user made no valid choice) and a warning is logged with what was wrong.
* URL mode: the handler receives the full URL and decides, with the user, whether to open
  it; mcpclient itself never fetches it. ``notifications/elicitation/complete`` reaches the
  handler set with ``set_elicitation_complete_handler`` for elicitations this client has seen.
* The -32042 error (URL elicitation required, 2025-11-25) becomes ``URLElicitationRequired``
  carrying the elicitations to present before retrying.
"""

from __future__ import annotations

import collections
import logging
import threading
from typing import Any, Callable

from .. import types as t
from .._core import bounded as _bounded
from .._core.exceptions import ProtocolError, RPCError, URLElicitationRequired
from .._protocol.wire import structure

__all__ = [
    "Elicitation",
    "PendingElicitations",
    "check_form_answer",
    "form_answer_problems",
    "url_elicitation_error",
]

log = logging.getLogger("mcpclient")

URL_ELICITATION_REQUIRED = URLElicitationRequired.CODE
#: How many open URL elicitations are remembered; the oldest are forgotten first.
MAX_PENDING = 1024


class PendingElicitations:
    """The URL elicitation ids this client has seen and not yet seen complete; thread-safe."""

    def __init__(self, limit: int = MAX_PENDING) -> None:
        self._ids: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._limit = limit

    def expect(self, elicitation_id: str) -> None:
        with self._lock:
            self._ids[elicitation_id] = None
            self._ids.move_to_end(elicitation_id)
            while len(self._ids) > self._limit:
                self._ids.popitem(last=False)

    def complete(self, elicitation_id: str) -> bool:
        """Forget ``elicitation_id``; return whether it was pending (else: ignore the notice)."""
        with self._lock:
            if elicitation_id not in self._ids:
                return False
            del self._ids[elicitation_id]
            return True


def url_elicitation_error(exc: RPCError, pending: PendingElicitations | None = None) -> RPCError:
    """``exc`` as a ``URLElicitationRequired`` if it is a -32042 error, else ``exc`` itself."""
    if exc.code != URL_ELICITATION_REQUIRED or isinstance(exc, URLElicitationRequired):
        return exc
    error = URLElicitationRequired(
        exc.code, exc.message, exc.data, method=exc.method, request_id=exc.request_id,
        elicitations=url_elicitations(exc.data),
    )
    if pending is not None:
        for request in error.elicitations:
            if request.elicitation_id:
                pending.expect(request.elicitation_id)
    return error


def url_elicitations(data: Any) -> list[t.ElicitationRequest]:
    """The URL elicitations a -32042 error's ``data`` lists; a malformed entry is dropped."""
    items = data.get("elicitations") if isinstance(data, dict) else None
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            try:
                found.append(structure({"mode": "url", **item}, t.ElicitationRequest))
            except ProtocolError:
                continue  # the rest are still usable
    return found


# -- form answers ---------------------------------------------------------------------------


def check_form_answer(schema: Any, result: dict[str, Any], message: str = "") -> dict[str, Any]:
    """The answer to send for a form elicitation: ``result``, or ``cancel`` if it breaks ``schema``.

    Sending content the server did not ask for would fail there in ways the user cannot see;
    ``cancel`` is the honest answer, and the warning names each field and what is wrong with it
    (the server only learns that the user cancelled).
    """
    if result.get("action") != "accept":
        return result
    problems = form_answer_problems(schema, result.get("content"))
    if not problems:
        return result
    log.warning(
        "the elicitation handler's answer to %r does not match the requested schema: %s; "
        "sending 'cancel' instead (the server will report that the user cancelled)",
        message[:80], "; ".join(problems),
    )
    return {"action": "cancel"}


def form_answer_problems(schema: Any, content: Any) -> list[str]:
    """What is wrong with ``content`` as an answer to ``schema`` (empty when it matches).

    Checks required fields, types (a bool is not a number), enums, string lengths and formats,
    number bounds and multi-select sizes. Fields the schema does not declare are allowed, as
    in JSON Schema; a property of a type this client does not know is not checked.
    """
    if not isinstance(schema, dict):
        return []
    if content is None:
        content = {}
    if not isinstance(content, dict):
        return [f"content must be an object, got {type(content).__name__}"]
    properties: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
    problems = [f"field {name!r} is required and missing" for name in required
                if isinstance(name, str) and name not in content]
    for name, value in content.items():
        prop = properties.get(name)
        if isinstance(prop, dict):
            problems.extend(f"field {name!r} {problem}" for problem in _value_problems(prop, value))
    return problems


def _value_problems(prop: dict[str, Any], value: Any) -> list[str]:
    kind = prop.get("type")
    if kind == "string":
        return _string_problems(prop, value)
    if kind in ("number", "integer"):
        return _number_problems(prop, value, integer=kind == "integer")
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"must be a boolean, got {_bounded.excerpt(value, 60)}"]
    if kind == "array":
        return _array_problems(prop, value)
    return []


def _choices(prop: Any, list_key: str) -> list[Any] | None:
    """The allowed values of an enum property: ``enum``, or the ``const`` of each option."""
    if not isinstance(prop, dict):
        return None
    if isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    options = prop.get(list_key)
    if isinstance(options, list):
        return [option.get("const") for option in options if isinstance(option, dict)]
    return None


def _string_problems(prop: dict[str, Any], value: Any) -> list[str]:
    if not isinstance(value, str):
        return [f"must be a string, got {_bounded.excerpt(value, 60)}"]
    problems: list[str] = []
    choices = _choices(prop, "oneOf")
    if choices is not None and value not in choices:
        problems.append(f"must be one of {_bounded.excerpt(choices, 200)}, got {_bounded.excerpt(value, 60)}")
    if isinstance(prop.get("minLength"), int) and len(value) < prop["minLength"]:
        problems.append(f"must have at least {prop['minLength']} characters")
    if isinstance(prop.get("maxLength"), int) and len(value) > prop["maxLength"]:
        problems.append(f"must have at most {prop['maxLength']} characters")
    checker = _FORMATS.get(prop.get("format"))
    if checker is not None and not checker(value):
        problems.append(f"must be a valid {prop['format']}, got {_bounded.excerpt(value, 60)}")
    return problems


def _number_problems(prop: dict[str, Any], value: Any, *, integer: bool) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return [f"must be {'an integer' if integer else 'a number'}, got {_bounded.excerpt(value, 60)}"]
    if integer and not (isinstance(value, int) or value.is_integer()):
        return [f"must be an integer, got {value!r}"]
    problems: list[str] = []
    low, high = prop.get("minimum"), prop.get("maximum")
    if isinstance(low, (int, float)) and value < low:
        problems.append(f"must be at least {low}, got {value!r}")
    if isinstance(high, (int, float)) and value > high:
        problems.append(f"must be at most {high}, got {value!r}")
    return problems


def _array_problems(prop: dict[str, Any], value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"must be a list, got {_bounded.excerpt(value, 60)}"]
    problems: list[str] = []
    choices = _choices(prop.get("items"), "anyOf")
    if choices is not None:
        problems.extend(f"has {_bounded.excerpt(item, 60)}, which is not one of {_bounded.excerpt(choices, 200)}" for item in value if item not in choices)
    if isinstance(prop.get("minItems"), int) and len(value) < prop["minItems"]:
        problems.append(f"must have at least {prop['minItems']} items")
    if isinstance(prop.get("maxItems"), int) and len(value) > prop["maxItems"]:
        problems.append(f"must have at most {prop['maxItems']} items")
    return problems


def _is_email(value: str) -> bool:
    local, _, domain = value.rpartition("@")
    return bool(local) and "." in domain and not domain.startswith(".") and " " not in value


def _is_uri(value: str) -> bool:
    from urllib.parse import urlsplit  # here: only a form with a uri field needs it, and it costs import time

    parts = urlsplit(value)
    return bool(parts.scheme) and bool(parts.netloc or parts.path)


def _parses(kind: str) -> Callable[[str], bool]:
    """A check that ``datetime``'s ``kind`` (``date``, ``datetime``) reads the value in ISO form."""

    def check(value: str) -> bool:
        import datetime  # here: only a form with a date field needs it, and it costs import time

        try:
            getattr(datetime, kind).fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return False
        return True

    return check


_FORMATS: dict[Any, Callable[[str], bool]] = {
    "email": _is_email,
    "uri": _is_uri,
    "date": _parses("date"),
    "date-time": _parses("datetime"),
}


# -- the Client side ------------------------------------------------------------------------


class Elicitation:
    """URL elicitation completion notices, reported once each for the ids this client saw."""

    def __init__(self, pending: PendingElicitations) -> None:
        self._pending = pending
        #: The user's callback for notifications/elicitation/complete.
        self._complete: Callable[[str], None] | None = None

    def set_complete_handler(self, handler: Callable[[str], None] | None) -> None:
        if handler is not None and not callable(handler):
            raise TypeError(f"a handler must be callable, got {handler!r}")
        self._complete = handler

    def on_complete(self, params: dict[str, Any]) -> None:
        elicitation_id = params.get("elicitationId")
        if not isinstance(elicitation_id, str) or not self._pending.complete(elicitation_id):
            log.debug("ignoring elicitation/complete for an unknown elicitation: %r", elicitation_id)
            return
        handler = self._complete
        if handler is not None:
            handler(elicitation_id)
