"""Output validation as a built-in extension: a tool's structured output checked against its
``outputSchema`` (JSON Schema 2020-12), and the schema handed to the result for its typed
view (``ToolResult.data``).

``OutputValidation`` (every Client has one; ``output_validation=`` is its mode) learns the
schemas from each whole ``list_tools()`` and checks each ``call_tool()`` result, in its
``result`` hook, before the extensions after it (MCP Apps) see the result; a task's result
is checked through the ``ToolOutputs`` interface it implements (``mcpclient._client.features``).

Validation needs the optional ``jsonschema`` package (``pip install mcpclient[validation]``);
without it results are passed through unchecked, and the first tool result that would have
been checked logs one warning per process saying so (a web app that opens a client per request
is told once, not per request). References are
resolved only inside the schema: a ``$ref`` to anything else fails validation, and nothing
is ever fetched from the network.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Mapping, Sequence

import attrs

from .. import types as t
from .._client.features import ToolOutputs
from .._core.exceptions import OutputValidationError
from .._core.text import clean
from ..extensions import Call, Extension, Session

__all__ = ["OUTPUT_VALIDATION", "OutputValidation", "OutputValidationError", "OutputValidator", "output_validation"]

log = logging.getLogger("mcpclient")

#: What ``Plugins(output_validation=...)`` accepts.
OUTPUT_VALIDATION = ("strict", "lenient", "off")

_missing_library_warned = threading.Event()  # one warning per process, whatever the number of clients


def _refuse_retrieval(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs-made __init__


class OutputValidator:
    """Validates results of tools whose schemas the client has listed; thread-safe."""

    def __init__(self, mode: str) -> None:
        if mode not in OUTPUT_VALIDATION:
            raise ValueError(f"output_validation must be one of {OUTPUT_VALIDATION}, got {mode!r}")
        self.mode = mode
        self._lock = threading.Lock()
        self._schemas: dict[str, dict[str, Any]] = {}
        self._validators: dict[str, Any] = {}

    def learn(self, tools: list[t.ToolDef]) -> bool:
        """Remember the output schemas of a fresh tool list (forgetting stale ones); whether
        any tool has one."""
        with self._lock:
            self._schemas = {tool.name: tool.output_schema for tool in tools if isinstance(tool.output_schema, dict)}
            self._validators.clear()
            return bool(self._schemas)

    def check(self, tool: str, result: t.ToolResult) -> t.ToolResult:
        """Check ``result`` against the tool's listed schema (per the mode) and return it with
        ``output_schema`` set, so ``ToolResult.data`` can build its typed view."""
        schema = self._schemas.get(tool)  # no lock: learn() swaps in a whole new dict
        if schema is None:
            return result
        result = attrs.evolve(result, output_schema=schema)
        if self.mode == "off" or result.is_error:
            return result  # a failed tool run carries no structured promise
        if result.structured_content is None:
            errors = ["the tool declares an outputSchema but returned no structuredContent"]
        else:
            validator = self._validator(tool, schema)
            if validator is None:
                return result
            try:
                errors = [_describe(e) for e in validator.iter_errors(result.structured_content)]
            except Exception as exc:  # an unresolvable $ref, a broken schema: jsonschema's own errors
                errors = [f"the outputSchema cannot be applied: {exc}"]
        if not errors:
            return result
        message = f"the output of tool {tool!r} does not match its outputSchema: " + "; ".join(errors[:5])
        if self.mode == "strict":
            raise OutputValidationError(message, tool=tool, result=result, errors=errors)
        log.warning("%s", clean(message))  # the server's names and values: inert
        return result

    def _validator(self, tool: str, schema: dict[str, Any]) -> Any:
        with self._lock:
            validator = self._validators.get(tool)
        if validator is not None:
            return validator
        try:
            from jsonschema.validators import validator_for
            from referencing import Registry
        except ImportError:
            if not _missing_library_warned.is_set():
                _missing_library_warned.set()
                log.warning(
                    "output_validation=%r checks nothing: the jsonschema package is missing, so structured"
                    " tool output is passed through unchecked (pip install 'mcpclient[validation]' to check it,"
                    " or output_validation='off' to say you do not want it)",
                    self.mode,
                )
            return None
        cls = validator_for(schema, default=_draft_2020_12())
        validator = cls(schema, registry=Registry(retrieve=_refuse_retrieval))  # type: ignore[call-arg]
        with self._lock:
            self._validators[tool] = validator
        return validator


class OutputValidation(Extension, ToolOutputs):
    """The built-in extension of ``Plugins(output_validation=...)``: "strict" raises
    ``OutputValidationError`` from ``call_tool``, "lenient" logs a warning, "off" checks
    nothing (the listed schema still reaches ``ToolResult.data``).

    It takes the tool lists' results, and ``call_tool``'s only once a listed tool has
    declared an ``outputSchema`` (``Session.want_results``): until then there is nothing to
    check, and a tool call builds nothing for it."""

    result_methods = frozenset({"tools/list"})

    def __init__(self, mode: str = "strict") -> None:
        self.validator = OutputValidator(mode)
        self._session: Session | None = None

    def bind(self, session: Session) -> None:
        self._session = session

    def result(self, call: Call, value: Any) -> Any:
        if call.method == "tools/call" and call.name is not None and isinstance(value, t.ToolResult):
            return self.validator.check(call.name, value)
        if call.method == "tools/list" and isinstance(value, list):
            if self.validator.learn(value) and self._session is not None:
                self._session.want_results(self, ("tools/call",))
        return value

    def check(self, tool: str, result: t.ToolResult) -> t.ToolResult:
        return self.validator.check(tool, result)


def output_validation(options: Mapping[str, Any], gathered: Sequence[Extension]) -> Sequence[Extension]:
    """``output_validation=`` ("strict", "lenient", "off"): every client has the extension."""
    return (OutputValidation(options.get("output_validation", "strict")),)


def _draft_2020_12() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"at {where}: {error.message}"
