"""``mcpclient record``: record a session with a server to a file, or turn one into a pytest file."""

from __future__ import annotations

import json
from typing import Any, Sequence, TextIO

from .._build.open import ServerEntry, entry_options, open_client
from .._client.settings import HTTP, Stdio
from .._core.exceptions import ConfigError, MCPError
from .._core.text import clean
from ..testing._generate import pytest_source
from ..testing._replay import recorded
from ._args import UsageError, parse_json_object

__all__ = ["pytest_command", "record_command"]

def _named_call(text: str, option: str) -> tuple[str, dict[str, Any]]:
    """``NAME`` or ``NAME {"json": "object"}`` (``--call``, ``--prompt``)."""
    name, _, rest = text.strip().partition(" ")
    if not name:
        raise UsageError(f"{option} takes NAME or 'NAME {{JSON object}}', got {text!r}")
    return name, parse_json_object(rest) if rest.strip() else {}


def record_command(target: Any, options: dict[str, Any], *, path: str, calls: Sequence[str], reads: Sequence[str],
                   prompts: Sequence[str], err: TextIO) -> int:
    """Record one session with ``target`` to ``path``: the handshake, the listings the server
    declares, then each ``--call``, ``--read`` and ``--prompt``; the exit code (0: a failed
    request is part of the session, and is said on ``err``)."""
    tool_calls = [_named_call(text, "--call") for text in calls]
    prompt_gets = [_named_call(text, "--prompt") for text in prompts]
    options.pop("handlers", None)  # a recording asks nobody
    if isinstance(target, ServerEntry):
        target.check()
        if target.transport not in (None, "stdio", "http", "streamable-http", "streamableHttp"):
            raise ConfigError(f"mcpclient record takes stdio and Streamable HTTP servers; {target.name!r} is "
                              f"{target.transport!r}")
        target, options = target.target(), entry_options(target, options)
    # The transport made as open_client would make it (stderr None: the CLI's quiet).
    http, stdio = options.pop("http", None) or HTTP(), options.pop("stdio", None) or Stdio()
    made: dict[str, Any] = ({"headers": http.headers} if isinstance(target, str)
                            else {"env": stdio.env, "cwd": stdio.cwd, "stderr": stdio.stderr})
    transport = recorded(path, target, mode="all", **made)
    requests = 0
    with open_client(transport, options) as client:
        capabilities = client.server_capabilities
        steps: list[tuple[str, Any]] = [("tools/list", client.list_tools)] if "tools" in capabilities else []
        if "resources" in capabilities:
            steps.append(("resources/list", client.list_resources))
        if "prompts" in capabilities:
            steps.append(("prompts/list", client.list_prompts))
        steps += [(f"call {name}", lambda n=name, a=arguments: client.call_tool(n, a)) for name, arguments in tool_calls]
        steps += [(f"read {uri}", lambda u=uri: client.read_resource(u)) for uri in reads]
        steps += [(f"prompt {name}", lambda n=name, a=arguments: client.get_prompt(n, {k: v if isinstance(v, str)
                                                                                       else json.dumps(v)
                                                                                       for k, v in a.items()}))
                  for name, arguments in prompt_gets]
        for what, step in steps:
            requests += 1
            try:
                step()
            except MCPError as exc:
                err.write(f"mcpclient: {clean(what, 200)} failed (recorded): {clean(str(exc), 300)}\n")
    err.write(f"mcpclient: recorded the handshake and {requests} request(s) to {path}; make it a test with: "
              f"mcpclient record --pytest {path} > test_{_stem(path)}.py\n")
    return 0


def _stem(path: str) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(c if c.isalnum() else "_" for c in name.rsplit(".", 1)[0]) or "session"


def pytest_command(path: str, *, out: TextIO) -> int:
    """Print the pytest module replaying the recording at ``path``."""
    try:
        out.write(pytest_source(path))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot make a test of {path}: {exc}") from exc
    return 0
