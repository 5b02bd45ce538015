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

A file inside the project (the checkout you are in, see ``mcpclient._trust.project``) is a project
file however it is named: found in the current directory, or named by ``MCPCLIENT_CONFIG``
(a relative value always), ``XDG_CONFIG_HOME``, ``mcpclient -c`` or ``load(path)``. Its
servers are listed but not opened, and its ``${VAR}`` references are not expanded from your
environment, until you consent: ``load(trust_project=True)`` (``--trust-project``) for one
run, or an approval remembered with ``mcpclient trust`` or ``approve(entry, remember=True)``,
which holds until the entry changes. The user's own files outrank a project's: a project
file may add servers but not redefine a name the user's files define. Otherwise a cloned
repository could start its command, or send ``Bearer ${GITHUB_TOKEN}`` to its own URL.
"""

from __future__ import annotations

import json
import logging
import ntpath
import os
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, Union

from attrs import field, frozen

from ._build.open import ServerEntry, open_client, opening
from ._core.exceptions import ConfigError
from ._core.text import clean
from ._trust.approvals import Approvals, entry_digest, store_path
from ._trust.project import Project, current_project, directory_from_environment
from .extensions import Extension
from .plugins._policy_config import policy_from_dict
from .plugins.transform import ToolTransforms

if TYPE_CHECKING:
    from ._client.client import Client
    from .plugins.policy import Approver, Policy

__all__ = ["ConfigError", "ServerConfig", "approve", "default_paths", "load", "load_file", "load_policy"]

log = logging.getLogger(__name__)

PathLike = Union[str, "os.PathLike[str]"]


def _names_only(values: Mapping[str, str]) -> str:
    """The repr of ``env`` and ``headers``: names only, since values are often tokens."""
    return "{" + ", ".join(f"{name!r}: '***'" for name in values) + "}"


@frozen(kw_only=True)
class ServerConfig(ServerEntry):
    """One server entry of a config file, with variables already expanded.

    Stdio servers have ``command`` (and ``args``, ``env``, ``cwd``); remote ones have ``url``
    (and ``headers``). ``transport`` is the entry's ``type``/``transport`` when given
    ("stdio", "http", "streamable-http", "sse"), else None. ``missing`` lists the variables
    the entry uses that are not set; ``source`` is the file it came from. ``project`` is
    whether that file lies in the project rather than being the user's. ``approved`` is
    whether you consented to a project entry (``trust_project=True``, or an approval remembered
    for exactly this entry); until then opening it raises ``ConfigError`` saying how to
    consent, and ``untrusted`` lists the variables left unexpanded. ``digest`` is the SHA-256
    of the entry as written, which a remembered approval names. ``tools`` holds the entry's
    tool transformations (its ``tools``, ``include_tags`` and ``exclude_tags``: see
    docs/config.md), applied by the client it opens; None when it has none.
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
    approved: bool = True
    digest: str | None = field(default=None, eq=False, repr=False)
    tools: ToolTransforms | None = None

    @property
    def is_stdio(self) -> bool:
        """Whether the server is a local command (rather than a URL)."""
        return self.url is None

    def target(self) -> list[str] | str:
        """The argv list, or the URL."""
        self.check()
        if self.url is not None:
            return self.url
        assert self.command is not None
        return [self.command, *self.args]

    def check(self) -> None:
        """Raise ``ConfigError`` if this entry cannot be opened as written."""
        where = f" (in {_shown(self.source)})" if self.source else ""
        if self.project and not self.approved:
            raise ConfigError(_consent_needed(self))
        if self.untrusted:  # approved by hand (attrs.evolve), its variables still as written
            raise ConfigError(f"server {self.name!r}{where} has variables left unexpanded "
                              f"({', '.join(map(_shown, self.untrusted))}): approve it with config.approve(entry)")
        if self.missing:
            names = ", ".join(map(_shown, self.missing))
            raise ConfigError(f"server {self.name!r}{where} uses {names}, which is not set in the environment")
        if self.url is None and not self.command:
            raise ConfigError(f"server {self.name!r}{where} has neither 'command' nor 'url'")

    def open(self, **options: Any) -> Client:
        """Start or reach the server and return an initialized ``Client``.

        ``options`` are ``connect``'s (``timeout``, ``handlers``, ``plugins``...); the entry's
        ``env``, ``headers`` and ``cwd`` go under the ``stdio`` and ``http`` given.
        Raises ``ConfigError`` for an unusable entry, or what opening the client raises.
        """
        return open_client(self, opening("ServerConfig.open()", options))

    def extensions(self) -> Sequence[Extension]:
        """A fresh ``TransformTools`` for the entry's tool transformations, if it has any."""
        return () if self.tools is None else (self.tools.extension(),)


def _shown(text: str) -> str:
    """``text`` for a message, cleaned as all server and project text is (``_text.clean``): a
    project's file names its variables, and a project's path or tooling its name."""
    return clean(text, limit=None)


def _command_line(words: list[str]) -> str:
    """``words`` quoted for this system's shell, to be pasted there (never run by us)."""
    if sys.platform == "win32":
        import subprocess

        return subprocess.list2cmdline(words)
    return " ".join(shlex.quote(w) for w in words)


def _consent_needed(entry: ServerConfig) -> str:
    """The refusal of an unapproved project entry: what it is, and exactly how to consent."""
    source = os.path.abspath(entry.source) if entry.source else None
    reads = (f"; once approved it reads {', '.join(map(_shown, entry.untrusted))} from your environment"
             if entry.untrusted else "")
    words = [w for w in (source, entry.name) if w is not None]
    approve_with = ("run: mcpclient trust -c " + _command_line(words)
                    if all(w.isprintable() for w in words) else "run mcpclient trust in that project")
    return (f"server {entry.name!r} comes from the project file {_shown(source or '(unknown)')}, and mcpclient starts or "
            f"connects to a project's servers only with your consent. To approve it until its entry changes, "
            f"{approve_with} (or config.approve(entry, remember=True)); to trust the project for one run, "
            f"add --trust-project (config.load(trust_project=True) in Python){reads}")


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

    ``project`` marks an entry of a project file; with ``trusted=False`` it is not approved,
    and its variables (but ``${workspaceFolder}``) are left as written and listed in
    ``untrusted``.
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
        approved=trusted or not project,
        digest=entry_digest(raw),
        tools=ToolTransforms.from_entry(raw, where=f"server {name!r}" + (f" (in {_shown(source)})" if source else "")),
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
              trust_project: bool = False) -> dict[str, ServerConfig]:
    """The servers of one config file, by name, in file order.

    Reads ``mcpServers`` (Claude Desktop, Cursor, Claude Code, Windsurf), ``servers`` (VS Code
    ``mcp.json``) or ``mcp.servers`` (VS Code ``settings.json``). Raises ``ConfigError`` if
    the file cannot be read or is not such a file. A file inside the project is a project
    file, as in ``load``: its entries are approved only with ``trust_project`` or a
    remembered approval.
    """
    project = current_project().contains(path)
    approvals = _approvals(environ) if project and not trust_project else None
    return _read_file(Path(path), environ=environ, project=project,
                      trusted=True if approvals is None else approvals.approved)


def _approvals(environ: Mapping[str, str] | None, project: Project | None = None) -> Approvals:
    return Approvals(store_path(os.environ if environ is None else environ, project or current_project()))


def _read_file(path: Path, *, environ: Mapping[str, str] | None, project: bool,
               trusted: bool | Callable[[str, str, str], bool]) -> dict[str, ServerConfig]:
    """``load_file``'s work; ``trusted`` is a bool, or asked ``(file, name, digest)`` per entry."""
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

    def trust(name: str, raw: Any) -> bool:
        return trusted if isinstance(trusted, bool) else trusted(str(path), name, entry_digest(raw))

    return {
        str(name): parse_entry(str(name), raw, source=str(path), environ=environ, workspace=workspace,
                               project=project, trusted=not project or trust(str(name), raw))
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


def _policy_of(data: Any, path: Path) -> Any:
    """The ``"policy"`` beside the servers: at the top, or in VS Code's ``settings.json``
    beside ``mcp.servers`` (``mcp.policy``); ``ConfigError`` when a file has both."""
    if not isinstance(data, dict):
        return None
    nested = data.get("mcp")
    beside = nested.get("policy") if isinstance(nested, dict) else None
    top = data.get("policy")
    if top is not None and beside is not None:
        raise ConfigError(f"{path} has two policies, \"policy\" and \"mcp.policy\": keep one")
    return beside if beside is not None else top


def default_paths(cwd: PathLike | None = None, *, home: PathLike | None = None,
                  platform: str | None = None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where config files are usually found, in the order ``load()`` reads them: the user's
    first, then the project's.

    ``MCPCLIENT_CONFIG`` when set; ``~/.cursor/mcp.json``, Windsurf's
    ``~/.codeium/windsurf/mcp_config.json`` and Claude Desktop's ``claude_desktop_config.json``
    (per operating system); then the current directory's ``mcp.json``, ``.mcp.json``,
    ``.cursor/mcp.json`` and ``.vscode/mcp.json``. A ``MCPCLIENT_CONFIG``, ``XDG_CONFIG_HOME``
    or ``APPDATA`` that names a place in the project (a relative ``MCPCLIENT_CONFIG``
    always) makes that file a project file, listed with them. Existing or not: ``load()``
    skips the missing ones.
    """
    return [path for path, _ in _sources(cwd, home=home, platform=platform, environ=environ)]


def _sources(cwd: PathLike | None = None, *, home: PathLike | None = None, platform: str | None = None,
             environ: Mapping[str, str] | None = None) -> list[tuple[Path, bool]]:
    """``default_paths`` with, for each, whether it is a project file.

    The current directory's files are the project's, except when that directory is the home
    directory (or above it): then there is no project, and they are the user's own.
    """
    environ = os.environ if environ is None else environ
    here = Path(cwd) if cwd is not None else Path.cwd()
    home_dir = Path(home) if home is not None else Path.home()
    project = current_project(here, home=home_dir)
    platform = platform or sys.platform
    sources: list[tuple[Path, bool]] = []
    named = environ.get("MCPCLIENT_CONFIG")
    if named:  # project tooling (.env loaders, direnv) can set it: judged by where it points
        sources.append((Path(named), not os.path.isabs(named) or project.contains(named)))
    sources += [(home_dir / ".cursor" / "mcp.json", False),
                (home_dir / ".codeium" / "windsurf" / "mcp_config.json", False)]
    if platform == "darwin":
        claude, from_env = home_dir / "Library" / "Application Support", False
    elif platform.startswith("win"):
        claude, from_env = directory_from_environment(environ.get("APPDATA"), home_dir / "AppData" / "Roaming",
                                                      absolute=ntpath.isabs)
    else:
        claude, from_env = directory_from_environment(environ.get("XDG_CONFIG_HOME"), home_dir / ".config")
    desktop = claude / "Claude" / "claude_desktop_config.json"
    sources.append((desktop, from_env and project.contains(desktop)))
    local = project.root is not None
    sources += [(here / "mcp.json", local), (here / ".mcp.json", local), (here / ".cursor" / "mcp.json", local),
                (here / ".vscode" / "mcp.json", local)]
    return _users_first(sources)


def _users_first(sources: list[tuple[Path, bool]]) -> list[tuple[Path, bool]]:
    """The user's files, then the project's, each in the order given: a project file never
    outranks a user file, however it was named."""
    return [s for s in sources if not s[1]] + [s for s in sources if s[1]]


def load(path: PathLike | Sequence[PathLike] | None = None, *, environ: Mapping[str, str] | None = None,
         include_disabled: bool = False, trust_project: bool = False) -> dict[str, ServerConfig]:
    """Servers by name from ``path`` (a file, or a list merged in order) or the usual files.

    When several files name the same server, the first one wins, except that the user's
    files come before the project's (files in the project, however named: see the module
    docstring), and a project file cannot redefine a name a user file defines, even as a
    disabled entry: it is skipped with a warning naming both files. A project file's entries
    are not approved (opening one raises ``ConfigError`` saying how to consent) and their
    variables are left unexpanded (``ServerConfig.untrusted``), unless ``trust_project`` or
    an approval remembered for that very entry (``mcpclient trust``, ``approve``).

    Entries marked ``"disabled": true`` are left out unless ``include_disabled``. A path given
    explicitly must exist; the usual files are skipped when missing or unreadable (with a log
    line).
    """
    explicit = path is not None
    project = current_project()
    if path is None:
        sources = _sources(environ=environ)
    else:
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        sources = _users_first([(Path(p), project.contains(p)) for p in paths])
    approvals: Approvals | None = None
    merged: dict[str, ServerConfig] = {}
    user_names: dict[str, str] = {}  # a name a user file defines (disabled or not) -> that file
    for candidate, in_project in sources:
        if not explicit and not candidate.is_file():
            continue
        trusted: bool | Callable[[str, str, str], bool] = True
        if in_project and not trust_project:
            approvals = approvals or _approvals(environ, project)
            trusted = approvals.approved
        try:
            servers = _read_file(candidate, environ=environ, project=in_project, trusted=trusted)
        except ConfigError:
            if explicit:
                raise
            log.warning("skipping the config file %s", candidate, exc_info=True)
            continue
        for name, entry in servers.items():
            if in_project and name in user_names:
                log.warning("ignoring server %r of the project file %s: your own config file %s defines it",
                            name, candidate, user_names[name])
                continue
            if not in_project:
                user_names.setdefault(name, str(candidate))
            if entry.disabled and not include_disabled:
                continue
            merged.setdefault(name, entry)
    return merged


def approve(entry: ServerConfig, *, remember: bool = False,
            environ: Mapping[str, str] | None = None) -> ServerConfig:
    """``entry`` with your consent: read again from its file, its variables expanded.

    For an entry that is not a project's, or already approved, that is ``entry`` itself.
    With ``remember``, the approval is stored (as ``mcpclient trust`` does) so that later
    loads approve this entry without asking, until it changes. Raises ``ConfigError`` if the
    entry changed in its file since it was read (look at it again), or cannot be stored.
    """
    if entry.project and (entry.source is None or entry.digest is None):
        raise ConfigError(f"server {entry.name!r} was not read from a config file: there is nothing to approve")
    if entry.project and not entry.approved:
        fresh = _read_file(Path(entry.source or ""), environ=environ, project=True,
                           trusted=lambda _file, name, digest: name == entry.name and digest == entry.digest)
        again = fresh.get(entry.name)
        if again is None or not again.approved:
            raise ConfigError(f"server {entry.name!r} has changed in {entry.source} since it was read: "
                              "look at it again (mcpclient servers) before approving it")
        entry = again
    if remember and entry.project:
        _approvals(environ).add(entry.source or "", {entry.name: entry.digest or ""})
    return entry


def load_policy(path: PathLike | Sequence[PathLike] | None = None, *, approver: Approver | None = None,
                environ: Mapping[str, str] | None = None, trust_project: bool = False) -> Policy | None:
    """The ``"policy"`` object beside the servers (see docs/policy.md), or None when no file has one.

    Beside the servers means at the top of the file, or ``mcp.policy`` in a VS Code
    ``settings.json`` whose servers are ``mcp.servers``.

    Read from ``path`` (a file or a list) or the usual files, in ``load``'s order; the first
    file with a policy gives it. A project file's policy (not approved: ``trust_project``)
    keeps only its ``deny`` and ``ask`` rules and no audit file: a checkout may make calls
    stricter, never looser. A relative ``audit`` path is taken from the file's directory.
    Raises ``ConfigError`` for a policy that is not well formed.
    """
    project = current_project()
    if path is None:
        sources = _sources(environ=environ)
    else:
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        sources = _users_first([(Path(p), project.contains(p)) for p in paths])
    for candidate, in_project in sources:
        if path is None and not candidate.is_file():
            continue
        try:
            data = json.loads(_strip_jsonc(candidate.read_text(encoding="utf-8-sig")))
        except (OSError, ValueError) as exc:
            if path is not None:
                raise ConfigError(f"cannot read the config file {candidate}: {exc}") from exc
            continue
        raw = _policy_of(data, candidate)
        if raw is None:
            continue
        policy = policy_from_dict(raw, approver=approver, where=f"the policy of {candidate}",
                                  allow_rules=not in_project or trust_project)
        if policy.audit is not None and not os.path.isabs(policy.audit):
            policy.audit = str(candidate.resolve().parent / policy.audit)
        return policy
    return None
