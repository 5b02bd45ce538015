"""A file server (official MCP Python SDK, ``MCPServer``) that reads paths as lenient servers
do, for the policy gate's path rules: what the gate cannot judge must not reach a file.

Tools:

* ``read_text(path)``: the text of one file. ``path`` is a string, a list of path parts
  (joined), or an object ``{"dir": ..., "name": ...}``. A string is read as many servers read
  it: surrounding blanks stripped, cut at its first NUL (as a server in C reads it), ``~``
  and ``$VARIABLES`` expanded (this process's ``HOME`` and environment), a relative path
  taken from this process's working directory, a ``file://`` URI as its path.
* ``read_many(paths)``: the text of each file, one a line.
* ``read_default(path=DEFAULT)``: the text of one file, by default ``--default-path``'s
  (its input schema gives the default; a call may leave ``path`` out);
* ``read_count(path, lines)``: the first ``lines`` lines of a file, all of them for ``0``
  (``lines`` an integer, which the SDK also takes as ``"0"``, ``0.0`` or ``false``).

Every file opened is appended, resolved, as a line to ``--record FILE``: what this process
read, seen from outside it (a test checks there, not only in what the client got back).

``python tests/servers/sdk_file_server.py --record FILE [--default-path PATH]`` serves stdio;
``--port 0`` serves Streamable HTTP on 127.0.0.1 and prints ``LISTENING http://...`` once
ready (as tests/servers/sdk_server.py does).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from urllib.parse import unquote, urlsplit

import anyio
import mcp.types as types
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.servers.sdk_server import run_http  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)

READ_ONLY = types.ToolAnnotations(readOnlyHint=True)
#: Where each file opened is written (``--record``); None: nowhere.
RECORD: str | None = None


class FileRef(BaseModel):
    dir: str
    name: str


def where(path: str | list[str] | FileRef) -> str:
    """The file ``path`` names, read leniently (see the module docstring)."""
    if isinstance(path, FileRef):
        return os.path.join(path.dir, path.name)
    if isinstance(path, list):
        return os.path.join(*path) if path else "."
    text = path.strip().split("\x00", 1)[0]
    if text.lower().startswith("file:"):
        text = unquote(urlsplit(text).path)
    return os.path.expandvars(os.path.expanduser(text))


def read(path: str | list[str] | FileRef) -> str:
    name = where(path)
    if RECORD is not None:
        with open(RECORD, "a", encoding="utf-8") as record:
            record.write(os.path.realpath(name) + "\n")
    with open(name, encoding="utf-8") as file:
        return file.read()


def build_server(default_path: str = "notes.txt") -> MCPServer:
    mcp = MCPServer("file-server", version="1.0.0")

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def read_text(path: str | list[str] | FileRef) -> str:
        """Read a text file."""
        return read(path)

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def read_many(paths: list[str]) -> str:
        """Read several text files."""
        return "\n".join(read(path) for path in paths)

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def read_default(path: str = default_path) -> str:
        """Read a text file (by default, the server's own)."""
        return read(path)

    @mcp.tool(annotations=READ_ONLY, structured_output=False)
    def read_count(path: str, lines: int) -> str:
        """Read the first lines of a text file."""
        text = read(path).splitlines()
        return "\n".join(text[:lines] if lines > 0 else text)

    return mcp


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", default=None)
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--default-path", default="notes.txt")
    options = parser.parse_args()
    RECORD = options.record
    if options.port is None:
        build_server(options.default_path).run("stdio")
    else:
        args = argparse.Namespace(transport="streamable-http", legacy_only=False, json_response=False,
                                  stateless=False, event_store=False, port=options.port)
        anyio.run(run_http, build_server(options.default_path), args)
