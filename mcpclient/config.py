"""Server config files: the ``mcpServers`` JSON of Claude Desktop, Cursor and friends, and
VS Code's ``servers`` form.

    >>> from mcpclient import config
    >>> servers = config.load()                  # the usual files, merged
    >>> servers = config.load("mcp.json")        # one file
    >>> with servers["github"].open() as client:
    ...     print(client.list_tools())

A file looks like either of these (comments and trailing commas are accepted, as VS Code
does)::

    {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-fs", "${HOME}"],
                           "env": {"TOKEN": "${env:MY_TOKEN}"}},
                    "web": {"url": "https://example.org/mcp", "headers": {"Authorization": "Bearer ${KEY}"}}}}

    {"servers": {"fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs"]}}}

``${VAR}``, ``${env:VAR}`` and ``${VAR:-default}`` are replaced from the environment,
``${userHome}`` by the home directory and ``${workspaceFolder}`` by the project directory. A
variable that is not set is remembered on the entry: opening it raises ``ConfigError``
naming the variable, while the other servers of the file stay usable.

The user's own files (in the home directory, or named by ``MCPCLIENT_CONFIG``) outrank a
project's (in the current directory): a cloned repository's ``.mcp.json`` may add servers but
not redefine a name the user's files define, and its ``${VAR}`` references are not expanded
from the user's environment unless ``load(trust_project=True)`` (``--trust-project`` on the
command line). Otherwise such a project could send ``Bearer ${GITHUB_TOKEN}`` to its own URL.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

from attrs import field, frozen

from ._exceptions import ConfigError

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["ConfigError", "ServerConfig", "default_paths", "load", "load_file"]

log = logging.getLogger(__name__)

PathLike = Union[str, "os.PathLike[str]"]


def _names_only(values: Mapping[str, str]) -> str:
    """The repr of ``env`` and ``headers``: names only, since values are often tokens."""
    return "{" + ", ".join(f"{name!r}: '***'" for name in values) + "}"


@frozen(kw_only=True)
class ServerConfig:
    """One server entry of a config file, with variables already expanded.

    Stdio servers have ``command`` (and ``args``, ``env``, ``cwd``); remote ones have ``url``
    (and ``headers``). ``transport`` is the entry's ``type``/``transport`` when given
    ("stdio", "http", "streamable-http", "sse"), else None. ``missing`` lists the variables
    the entry uses that are not set; ``source`` is the file it came from. ``project`` is
    whether that file is a project's (the current directory's) rather than the user's, and
    ``untrusted`` lists the variables of a project file that were left unexpanded because the
    project is not trusted (see ``load``); opening such an entry raises ``ConfigError``.
    """

    name: str
    command: str | None = None
    args: list[str] = field(factory=list)
    env: dict[str, str] = field(factory=dict, repr=_names_only)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(factory=dict, repr=_names_only)
    transport: str | None = None
    disabled: bool = False
    missing: tuple[str, ...] = ()
    source: str | None = None
    project: bool = False
    untrusted: tuple[str, ...] = ()

    @property
    def is_stdio(self) -> bool:
        """Whether the server is a local command (rather than a URL)."""
        return self.url is None

    def target(self) -> list[str] | str:
        """What ``mcpclient.connect`` takes: the argv list, or the URL."""
        self.check()
        if self.url is not None:
            return self.url
        assert self.command is not None
        return [self.command, *self.args]

    def check(self) -> None:
        """Raise ``ConfigError`` if this entry cannot be opened as written."""
        where = f" (in {self.source})" if self.source else ""
        if self.untrusted:
            names = ", ".join(self.untrusted)
            raise ConfigError(
                f"server {self.name!r}{where} is from a project file and uses {names}; variables of a project's "
                "config file are not read from your environment unless you trust the project "
                "(config.load(trust_project=True), or mcpclient --trust-project)"
            )
        if self.missing:
            names = ", ".join(self.missing)
            raise ConfigError(f"server {self.name!r}{where} uses {names}, which is not set in the environment")
        if self.url is None and not self.command:
            raise ConfigError(f"server {self.name!r}{where} has neither 'command' nor 'url'")

    def open(self, *, timeout: float | None = None, **kwargs: Any) -> Client:
        """Start or reach the server and return an initialized ``Client``.

        ``timeout`` bounds the handshake; other keyword arguments go to the transport.
        Raises ``ConfigError`` for an unusable entry, or what opening the client raises.
        """
        from ._open import open_target

        self.check()
        return open_target(self.target(), env=self.env or None, headers=self.headers or None,
                           cwd=self.cwd, transport=self.transport, timeout=timeout, **kwargs)


_VAR = re.compile(r"\$\{([^}]*)\}")


#: The one variable an untrusted project file may use: its own folder, which reveals nothing.
_PROJECT_SAFE = ("workspaceFolder",)


def _expand(value: str, environ: Mapping[str, str], extra: Mapping[str, str], missing: list[str],
            untrusted: list[str] | None = None) -> str:
    """Replace the ``${...}`` references; with ``untrusted`` (a list), leave every one that
    would read the environment or the home directory as written, and record it there."""
    def replace(match: re.Match[str]) -> str:
        expr = match.group(1)
        name, sep, default = expr.partition(":-")
        if name.startswith("env:"):
            name = name[4:]
        if untrusted is not None and name not in _PROJECT_SAFE and not name.startswith("input:"):
            untrusted.append(f"${{{expr}}}")
            return match.group(0)
        if name in extra:
            return extra[name]
        if name in environ:
            return environ[name]
        if sep:
            return default
        if name.startswith("input:"):
            missing.append(f"${{{expr}}} (a VS Code input, not supported)")
        else:
            missing.append(f"${{{expr}}}")
        return ""

    return _VAR.sub(replace, value)


def _strings(value: Any, what: str, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise ConfigError(f"server {name!r}: {what} must be a list of strings")
    return [str(v) for v in value]


def _mapping(value: Any, what: str, name: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"server {name!r}: {what} must be an object of strings")
    return {str(k): str(v) for k, v in value.items()}


def parse_entry(name: str, raw: Mapping[str, Any], *, source: str | None = None,
                environ: Mapping[str, str] | None = None, workspace: str | None = None,
                project: bool = False, trusted: bool = True) -> ServerConfig:
    """Build a ``ServerConfig`` from one JSON entry, expanding variables.

    ``project`` marks an entry of a project file; with ``trusted=False`` its variables (but
    ``${workspaceFolder}``) are left as written and listed in ``untrusted``.
    """
    if not isinstance(raw, Mapping):
        raise ConfigError(f"server {name!r}: the entry must be an object")
    env_source = os.environ if environ is None else environ
    extra = {"userHome": str(Path.home()), "workspaceFolder": workspace or os.getcwd()}
    missing: list[str] = []
    untrusted: list[str] | None = None if trusted else []

    def x(value: str) -> str:
        return _expand(value, env_source, extra, missing, untrusted)

    url = raw.get("url") or raw.get("serverUrl")
    transport = raw.get("type") or raw.get("transport")
    command = raw.get("command")
    entry = ServerConfig(
        name=name,
        command=x(str(command)) if command else None,
        args=[x(a) for a in _strings(raw.get("args"), "args", name)],
        env={k: x(v) for k, v in _mapping(raw.get("env"), "env", name).items()},
        cwd=x(str(raw["cwd"])) if raw.get("cwd") else None,
        url=x(str(url)) if url else None,
        headers={k: x(v) for k, v in _mapping(raw.get("headers"), "headers", name).items()},
        transport=str(transport) if transport else None,
        disabled=bool(raw.get("disabled", False)),
        missing=tuple(dict.fromkeys(missing)),
        source=source,
        project=project,
        untrusted=tuple(dict.fromkeys(untrusted or ())),
    )
    return entry


def _strip_jsonc(text: str) -> str:
    """Remove // and /* */ comments and trailing commas, leaving strings alone."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(ch)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def load_file(path: PathLike, *, environ: Mapping[str, str] | None = None,
              project: bool = False, trusted: bool = True) -> dict[str, ServerConfig]:
    """The servers of one config file, by name, in file order.

    Reads ``mcpServers`` (Claude Desktop, Cursor, Claude Code, Windsurf), ``servers`` (VS Code
    ``mcp.json``) or ``mcp.servers`` (VS Code ``settings.json``). Raises ``ConfigError`` if
    the file cannot be read or is not such a file. A file named here is the caller's choice,
    so its variables are expanded; ``load`` passes ``project`` and ``trusted`` for the
    project files it finds on its own.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read the config file {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = json.loads(_strip_jsonc(text))
        except ValueError as exc:
            raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    servers = _servers_of(data)
    if servers is None:
        raise ConfigError(f"{path} has no 'mcpServers' or 'servers' object")
    workspace = str(path.resolve().parent.parent if path.parent.name in (".vscode", ".cursor") else path.resolve().parent)
    return {
        str(name): parse_entry(str(name), raw, source=str(path), environ=environ, workspace=workspace,
                               project=project, trusted=trusted)
        for name, raw in servers.items()
    }


def _servers_of(data: Any) -> dict[str, Any] | None:
    if not isinstance(data, dict):
        return None
    for holder in (data, data.get("mcp")):
        if isinstance(holder, dict):
            for key in ("mcpServers", "servers"):
                if isinstance(holder.get(key), dict):
                    return holder[key]  # type: ignore[no-any-return]
    return None


def default_paths(cwd: PathLike | None = None, *, home: PathLike | None = None,
                  platform: str | None = None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where config files are usually found: the user's first, then the project's.

    ``MCPCLIENT_CONFIG`` when set; ``~/.cursor/mcp.json``, Windsurf's
    ``~/.codeium/windsurf/mcp_config.json`` and Claude Desktop's ``claude_desktop_config.json``
    (per operating system); then the project's ``mcp.json``, ``.mcp.json``,
    ``.cursor/mcp.json`` and ``.vscode/mcp.json``. Existing or not: ``load()`` skips the
    missing ones.
    """
    return [path for path, _ in _sources(cwd, home=home, platform=platform, environ=environ)]


def _sources(cwd: PathLike | None = None, *, home: PathLike | None = None, platform: str | None = None,
             environ: Mapping[str, str] | None = None) -> list[tuple[Path, bool]]:
    """``default_paths`` with, for each, whether it is a project file.

    The current directory's files are the project's, except when that directory is the home
    directory itself: then they are the user's own.
    """
    environ = os.environ if environ is None else environ
    project = Path(cwd) if cwd is not None else Path.cwd()
    home_dir = Path(home) if home is not None else Path.home()
    platform = platform or sys.platform
    user: list[Path] = []
    if environ.get("MCPCLIENT_CONFIG"):
        user.append(Path(environ["MCPCLIENT_CONFIG"]))
    user += [home_dir / ".cursor" / "mcp.json", home_dir / ".codeium" / "windsurf" / "mcp_config.json"]
    if platform == "darwin":
        claude = home_dir / "Library" / "Application Support" / "Claude"
    elif platform.startswith("win"):
        appdata = environ.get("APPDATA")
        claude = (Path(appdata) if appdata else home_dir / "AppData" / "Roaming") / "Claude"
    else:
        xdg = environ.get("XDG_CONFIG_HOME")
        claude = (Path(xdg) if xdg else home_dir / ".config") / "Claude"
    user.append(claude / "claude_desktop_config.json")
    in_home = _same_directory(project, home_dir)
    projects = [project / "mcp.json", project / ".mcp.json", project / ".cursor" / "mcp.json",
                project / ".vscode" / "mcp.json"]
    return [(p, False) for p in user] + [(p, not in_home) for p in projects]


def _same_directory(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def load(path: PathLike | Sequence[PathLike] | None = None, *, environ: Mapping[str, str] | None = None,
         include_disabled: bool = False, trust_project: bool = False) -> dict[str, ServerConfig]:
    """Servers by name from ``path`` (a file, or a list merged in order) or the usual files.

    When several files name the same server, the first one wins. Of the usual files the
    user's come first, and a project file (in the current directory) cannot redefine a name
    a user file defines, even as a disabled entry: it is skipped with a warning naming both
    files. A project file's variables are left unexpanded (``ServerConfig.untrusted``; opening
    the entry raises ``ConfigError``) unless ``trust_project``. Files given as ``path`` are
    the caller's choice and are read as trusted.

    Entries marked ``"disabled": true`` are left out unless ``include_disabled``. A path given
    explicitly must exist; the usual files are skipped when missing or unreadable (with a log
    line).
    """
    explicit = path is not None
    if path is None:
        sources = _sources(environ=environ)
    elif isinstance(path, (str, os.PathLike)):
        sources = [(Path(path), False)]
    else:
        sources = [(Path(p), False) for p in path]
    merged: dict[str, ServerConfig] = {}
    user_names: dict[str, str] = {}  # a name a user file defines (disabled or not) -> that file
    for candidate, project in sources:
        if not explicit and not candidate.is_file():
            continue
        try:
            servers = load_file(candidate, environ=environ, project=project, trusted=trust_project or not project)
        except ConfigError:
            if explicit:
                raise
            log.warning("skipping the config file %s", candidate, exc_info=True)
            continue
        for name, entry in servers.items():
            if project and name in user_names:
                log.warning("ignoring server %r of the project file %s: your own config file %s defines it",
                            name, candidate, user_names[name])
                continue
            if not project:
                user_names.setdefault(name, str(candidate))
            if entry.disabled and not include_disabled:
                continue
            merged.setdefault(name, entry)
    return merged
