"""The ``%mcp`` line magic (``%load_ext mcpclient.notebook``).

::

    %mcp explore python server.py      # a command, a URL, a config name, or -- COMMAND
    %mcp explore --as weather weather  # the client is bound to a variable (default: client)
    %mcp explore client                # a Client you already have, by its variable's name
    %mcp explore                       # the explorer with an empty server box
    %mcp code                          # the explorer's "copy as code" cell, inserted below
    %mcp close                         # close the clients %mcp opened

A client ``%mcp`` opens is bound to a variable of the notebook (so the copied code runs as
written) and is closed by ``%mcp close`` or when the name is opened again. A name already in
use for something else is never overwritten. IPython is imported only when a magic runs.
"""

from __future__ import annotations

import shlex
import threading
from typing import Any

from .._client.client import Client
from .._core.source import is_name
from .explorer import explorer
from .targets import TargetError, open_words

__all__ = ["USAGE", "McpMagic", "register"]

USAGE = """\
%mcp explore [--as NAME] [SERVER]   explore a server's tools (SERVER: a command, a URL, a config name,
                                    -- COMMAND, or the name of a Client variable); the client is bound
                                    to NAME (default: client)
%mcp code                           insert the explorer's last "copy as code" cell below
%mcp close                          close the clients %mcp opened
"""


def _usage_error(message: str) -> Exception:
    from IPython.core.error import UsageError

    return UsageError(message)


class McpMagic:
    """The state of ``%mcp`` in one IPython shell: the clients it opened, the last explorer."""

    def __init__(self, ipython: Any) -> None:
        self.ipython = ipython
        self.opened: dict[str, Client] = {}
        self.last: Any = None
        self._lock = threading.Lock()

    def run(self, line: str) -> Any:
        """Run one ``%mcp`` line."""
        command, _, rest = line.strip().partition(" ")
        if command == "explore":
            return self.explore(rest.strip())
        if command == "code":
            return self.code()
        if command == "close":
            return self.close()
        if command in ("", "help"):
            from IPython.display import Pretty

            return Pretty(USAGE)  # type: ignore[no-untyped-call]
        raise _usage_error(f"unknown %mcp command {command!r}\n{USAGE}")

    def explore(self, rest: str) -> Any:
        """``%mcp explore [--as NAME] [SERVER]``: the explorer widget."""
        try:
            words = shlex.split(rest)
        except ValueError as exc:
            raise _usage_error(f"cannot read {rest!r}: {exc}") from None
        name = "client"
        if words[:1] == ["--as"]:
            if len(words) < 2:
                raise _usage_error("--as takes a variable name: %mcp explore --as NAME SERVER")
            name, words = words[1], words[2:]
        if not is_name(name):
            raise _usage_error(f"{name!r} is not a Python variable name")
        if len(words) == 1 and isinstance(self.ipython.user_ns.get(words[0]), Client):
            widget = explorer(self.ipython.user_ns[words[0]], name=words[0])
        else:
            self._check_free(name)

            def opener(text: str) -> tuple[Client, str]:
                return self._open(text, name)
            if words:
                try:
                    client, shown = opener(shlex.join(words))
                except TargetError as exc:
                    raise _usage_error(str(exc)) from None
                widget = explorer(client, name=name, server=shown, opener=opener, target=shlex.join(words))
            else:
                widget = explorer(None, name=name, opener=opener)
        self.last = widget
        return widget

    def _check_free(self, name: str) -> None:
        value = self.ipython.user_ns.get(name)
        if value is not None and value is not self.opened.get(name):
            raise _usage_error(f"{name!r} already holds a value of yours: pick another name with --as NAME")

    def _open(self, text: str, name: str) -> tuple[Client, str]:
        """Open ``text``'s server and bind it to ``name`` (closing the one ``%mcp`` bound there)."""
        client, shown = open_words(text)
        with self._lock:
            old = self.opened.pop(name, None)
            self.opened[name] = client
            self.ipython.user_ns[name] = client
        if old is not None:
            old.close()
        return client, shown

    def code(self) -> None:
        """``%mcp code``: the last explorer's copied cell, inserted as the next cell."""
        code = getattr(self.last, "code", "")
        if not code:
            raise _usage_error('no code yet: press "Copy as code" in an explorer first')
        self.ipython.set_next_input(code, replace=False)

    def close(self) -> None:
        """``%mcp close``: close every client ``%mcp`` opened and unbind its name."""
        with self._lock:
            opened, self.opened = self.opened, {}
        for name, client in opened.items():
            if self.ipython.user_ns.get(name) is client:
                del self.ipython.user_ns[name]
            client.close()


def register(ipython: Any) -> McpMagic:
    """Register ``%mcp`` in ``ipython``; the magic's state is returned."""
    magic = McpMagic(ipython)
    ipython.register_magic_function(magic.run, "line", "mcp")
    return magic
