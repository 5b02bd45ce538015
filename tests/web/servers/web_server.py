"""The demo server plus the tools the web tests need (standard library only).

* ``whoami`` -> this server's pid, so a test can tell which server answered;
* ``lookup`` (annotated ``readOnlyHint``) and ``write`` (no annotations): each takes a
  ``marker`` path; the first call that finds no file there creates it and exits the server
  without replying (a server dying mid-call), later calls answer ``"ok <pid>"``;
* ``sleep`` (``seconds``) -> "slept", after sleeping.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "servers"))

import demo_server  # noqa: E402


def _die_once(args: dict) -> str:
    marker = Path(args["marker"])
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(3)
    return f"ok {os.getpid()}"


def _sleep(args: dict) -> str:
    time.sleep(float(args.get("seconds", 0)))
    return "slept"


_MARKER = {"type": "object", "properties": {"marker": {"type": "string"}}, "required": ["marker"]}
demo_server.TOOLS += [
    {"name": "whoami", "description": "The server's pid.", "inputSchema": {"type": "object"}},
    {"name": "lookup", "description": "Read-only; dies once.", "inputSchema": _MARKER,
     "annotations": {"readOnlyHint": True}},
    {"name": "write", "description": "Changes something; dies once.", "inputSchema": _MARKER},
    {"name": "sleep", "description": "Sleeps.", "inputSchema": {"type": "object"}},
]
demo_server.TOOL_FUNCTIONS.update(
    whoami=lambda args: str(os.getpid()), lookup=_die_once, write=_die_once, sleep=_sleep
)

if __name__ == "__main__":
    try:
        demo_server.serve()
    except (KeyboardInterrupt, BrokenPipeError):
        pass
