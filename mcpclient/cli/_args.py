"""Turning command-line words into a server target and tool arguments."""

from __future__ import annotations

import functools
import json
import sys
from typing import Any, Mapping, Sequence

from .. import config as cfg
from .._build import targets

__all__ = ["UsageError", "parse_arguments", "read_headers", "resolve_target", "split_command"]


class UsageError(Exception):
    """The command line cannot be understood; exit code 2."""


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """Split at the first ``--``: our words, and the server command after it (or None)."""
    argv = list(argv)
    if "--" in argv:
        at = argv.index("--")
        command = argv[at + 1 :]
        if not command:
            raise UsageError("nothing follows '--': give the server command, e.g. -- npx -y @modelcontextprotocol/server-everything")
        return argv[:at], command
    return argv, None


def resolve_target(word: str | None, *, config_path: str | None, command: list[str] | None,
                   trust_project: bool = False, headers_given: bool = False) -> Any:
    """What to connect to: the ``--`` command, a URL, a ``.py`` script, or a config name
    (``mcpclient._build.targets.resolve_target``, with the config files at ``config_path``).

    ``trust_project`` (``--trust-project``) approves the project config files' servers for
    this run. Raises ``UsageError``.
    """
    try:
        return targets.resolve_target(
            word, load=functools.partial(cfg.load, config_path, trust_project=trust_project), command=command,
            headers_given=headers_given,
        )
    except targets.TargetError as exc:
        raise UsageError(str(exc)) from None


def read_headers(given: Sequence[str], from_env: Sequence[str], from_files: Sequence[str],
                 environ: Mapping[str, str]) -> dict[str, str]:
    """The HTTP headers of ``-H 'NAME: VALUE'``, ``--header-env NAME=VAR`` and ``--header-file PATH``.

    ``--header-env`` takes the value from the environment variable ``VAR`` and
    ``--header-file`` reads ``NAME: VALUE`` lines from a file (blank lines and ``#`` comments
    skipped), so a token need not stand on the command line, where every local user can read
    it in the process list. A header named twice, a variable unset or empty, and a value
    holding a line break are usage errors; no message shows a value read from the
    environment or a file.
    """
    headers: dict[str, str] = {}

    def add(name: str, value: str, where: str) -> None:
        name = name.strip()
        if not name or any(c in name for c in ":\r\n\0 ") or not name.isprintable():
            raise UsageError(f"{where}: {name!r} is not a header name")
        if any(c in value for c in "\r\n\0"):
            raise UsageError(f"{where}: the value of the header {name!r} holds a line break or NUL")
        if any(known.lower() == name.lower() for known in headers):
            raise UsageError(f"the header {name!r} is given twice (-H, --header-env, --header-file)")
        headers[name] = value

    for item in given:
        name, found, value = item.partition(":")
        if not found or not name.strip():
            raise UsageError(f"--header takes NAME: VALUE, got {item!r}")
        add(name, value.strip(), "--header")
    for path in from_files:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--header-file {path!r}: cannot read it ({type(exc).__name__})") from None
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, found, value = line.partition(":")
            if not found or not name.strip():
                raise UsageError(f"--header-file {path!r}, line {number}: expected NAME: VALUE")
            add(name, value.strip(), f"--header-file {path!r}, line {number}")
    for item in from_env:
        name, found, variable = item.partition("=")
        if not found or not name.strip() or not variable.strip():
            raise UsageError(f"--header-env takes NAME=VARIABLE, got {item!r}")
        found_value = environ.get(variable.strip())
        if not found_value:
            raise UsageError(f"--header-env {item!r}: the environment variable {variable.strip()!r} is not set or empty")
        add(name, found_value.strip(), f"--header-env {item!r}")
    return headers


def _coerce(key: str, value: str, schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind} if kind else set()
    if kinds == {"string"}:
        return value
    if kinds & {"integer", "number", "boolean", "array", "object", "null"} or not kinds:
        try:
            return json.loads(value)
        except ValueError:
            if kinds and "string" not in kinds:
                raise UsageError(f"{key}={value!r}: expected {' or '.join(sorted(kinds))} (JSON), use {key}:=JSON for raw JSON") from None
    return value


def parse_arguments(words: Sequence[str], schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``key=value`` words as a dict, typed by the tool's input ``schema`` when known.

    ``key:=json`` is always raw JSON. Without a schema, values that parse as JSON numbers,
    booleans, objects or arrays are taken as such; everything else stays a string.
    """
    properties = (schema or {}).get("properties") or {}
    arguments: dict[str, Any] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            hint = " (give a JSON object with --args-json '{...}')" if word.lstrip().startswith("{") else ""
            raise UsageError(f"expected key=value, got {word!r}{hint}")
        if key.endswith(":"):
            key = key[:-1]
            try:
                arguments[key] = json.loads(value)
            except ValueError as exc:
                raise UsageError(f"{key}:= takes JSON: {exc}") from None
            continue
        prop = properties.get(key)
        arguments[key] = _coerce(key, value, prop if isinstance(prop, dict) else {})
    return arguments


def parse_json_object(text: str) -> dict[str, Any]:
    """The ``--args-json '{...}'`` argument (``-`` reads it from standard input)."""
    if text == "-":
        text = sys.stdin.read()
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--args-json takes a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError("--args-json takes a JSON object, like '{\"a\": 1}'")
    return value
