"""``mcpclient stubs`` and ``mcpclient doctor``: thin commands over ``mcpclient.devtools``."""

from __future__ import annotations

import json
from typing import Any, Mapping, TextIO

from .._core.exceptions import ConfigError
from .._core.text import inert_json
from ..devtools.doctor import diagnose
from ..devtools.stubs import stubs_for

__all__ = ["EXIT_DOCTOR", "doctor_command", "stubs_command"]

#: ``mcpclient doctor``'s exit code when the report has an error (the CLI's table names it).
EXIT_DOCTOR = 7


def doctor_command(target: Any, options: dict[str, Any], *, cancel_call: tuple[str, Mapping[str, Any]] | None,
                   output_call: tuple[str, Mapping[str, Any]] | None, as_json: bool, out: TextIO) -> int:
    """Diagnose ``target`` and print the report (cleaned text, or inert JSON); the exit code."""
    timeout = options.pop("timeout", None) or 30.0
    report = diagnose(target, timeout=timeout, cancel_call=cancel_call, output_call=output_call, **options)
    out.write((inert_json(json.dumps(report.to_json(), indent=2, ensure_ascii=False)) if as_json else report.text())
              + "\n")
    return EXIT_DOCTOR if report.errors else 0


def stubs_command(client: Any, *, class_name: str | None, path: str | None, out: TextIO, err: TextIO) -> int:
    """Write the stub module of ``client``'s server to ``path`` (or ``out``); the exit code."""
    source = stubs_for(client, class_name=class_name)
    if path is None:
        out.write(source)
        return 0
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(source)
    except OSError as exc:
        raise ConfigError(f"cannot write the stub module {path}: {exc.strerror or exc}") from exc
    err.write(f"mcpclient: wrote {path}\n")
    return 0
