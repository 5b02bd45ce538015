"""``mcpclient``: talk to an MCP server from the shell."""

from __future__ import annotations

import argparse
import difflib
import io
import json
import logging
import os
import re
import shlex
import sys
import time
import warnings
from typing import Any, Callable, Sequence, TextIO

import attrs

from .. import config as cfg
from .._build.open import open_client
from .._client.settings import HTTP, Handlers, Plugins, Stdio
from .._client.conversation import PROTOCOLS
from .._core.exceptions import (
    CapabilityError,
    ConnectionClosed,
    MCPError,
    RequestTimeout,
    ResourceNotFound,
    RPCError,
    ToolCallDenied,
    TransportError,
)
from .._core.text import CleanFormatter, clean
from .._core.version import __version__
from ..types import CompletionRef
from . import _format as fmt
from ._args import UsageError, parse_arguments, parse_json_object, read_headers, resolve_target, split_command
from ._ask import CtrlC, TerminalIO, _isatty, interactive, terminal_prompter
from ._cache import cache_store
from ._devtools import EXIT_DOCTOR, doctor_command, stubs_command
from ._lock import lock_command
from ._progress import Progress, supports_progress
from ._record import pytest_command, record_command
from ._trust import ask_consent, trust_command

__all__ = ["EXIT_CODES", "main"]

#: Exit codes; documented in ``mcpclient --help`` and docs/cli.md.
EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3
EXIT_SERVER_ERROR = 4
EXIT_TIMEOUT = 5
EXIT_DRIFT = 6
EXIT_DENIED = 8
EXIT_INTERRUPTED = 130

EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_TOOL_ERROR: "the tool ran and reported an error (isError)",
    EXIT_USAGE: "bad command line, config file or server name",
    EXIT_CONNECTION: "the server could not be started or reached, or went away",
    EXIT_SERVER_ERROR: "the server answered with an error, or broke the protocol",
    EXIT_TIMEOUT: "no answer in time (--timeout)",
    EXIT_DRIFT: "mcpclient lock --check: a server's tools differ from the lockfile",
    EXIT_DOCTOR: "mcpclient doctor: the server broke a rule (an error in the report)",
    EXIT_DENIED: "the config file's policy refused the tool call; it was not sent",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}

EPILOG = """\
targets:
  SERVER is a name from your config files (Claude Desktop, Cursor, VS Code, ./mcp.json;
  see 'mcpclient servers'), an http(s) URL, or a .py file. Or put the server's command
  after '--' and leave SERVER out. With one configured server, SERVER may be left out.
  A config file inside the project you are in (however it is named, -c included) may name
  servers, but mcpclient starts them, and reads their ${VAR} from your environment, only
  with your consent: it asks at a terminal, 'mcpclient trust' approves them until their
  entries change, --trust-project trusts the project for one run. Your own files win.
  Options may go anywhere after COMMAND, before '--'.

examples (run from a checkout of mcpclient; examples/mcp.json names 'math' and 'text'):
  mcpclient tools -c examples/mcp.json math
  mcpclient call add a=1 b=2 -- python examples/servers/demo_server.py   # the command goes last
  mcpclient call -c examples/mcp.json math add a=1 b=2 -t 5
  mcpclient call -c examples/mcp.json math add --args-json '{"a": 1, "b": 2}'
  mcpclient call -c examples/mcp.json text shout text=hi --json       # the result as JSON
  mcpclient call shout text:='"raw JSON"' -- python examples/servers/demo_server.py
  mcpclient read -c examples/mcp.json math demo://readme > /dev/null
  mcpclient prompt -c examples/mcp.json math review code='print(1)'
  mcpclient complete -c examples/mcp.json math review code pri   # prompt 'review', argument 'code'
  mcpclient info --protocol legacy -c examples/mcp.json math
  mcpclient tools -c examples/mcp.json math -o json | jq '.[].name'

exit codes:
""" + "\n".join(f"  {code:<4}{meaning}" for code, meaning in EXIT_CODES.items())


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that remembers its option strings, to name the ones that stood
    after ``--`` and so went to the server (see ``_misplaced``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.own_options: set[str] = set()  # before __init__, which adds -h
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.own_options.update(action.option_strings)
        return action


def _common(parser: argparse.ArgumentParser) -> None:
    s = argparse.SUPPRESS
    parser.add_argument("-c", "--config", metavar="PATH", default=s, help="read servers from this config file")
    parser.add_argument("-t", "--timeout", metavar="SECONDS", type=float, default=s,
                        help="give up after this long (default 60)")
    parser.add_argument("-e", "--env", metavar="KEY=VALUE", action="append", default=s,
                        help="environment variable for a server command (repeatable)")
    parser.add_argument("-H", "--header", metavar="'NAME: VALUE'", action="append", default=s,
                        help="HTTP header for a URL server (repeatable); for a secret use --header-env "
                        "or --header-file, since the command line shows in the process list")
    parser.add_argument("--header-env", metavar="NAME=VAR", action="append", default=s,
                        help="HTTP header NAME with the value of the environment variable VAR (repeatable)")
    parser.add_argument("--header-file", metavar="PATH", action="append", default=s,
                        help="HTTP headers from a file, one 'NAME: VALUE' a line (repeatable)")
    parser.add_argument("-o", "--output", choices=("text", "json"), default=s, help="output format")
    parser.add_argument("--json", dest="output", action="store_const", const="json", default=s,
                        help="print JSON (the same as -o json)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default=s,
                        help="protocol era: auto (default: probe, then fall back), legacy (initialize "
                        "handshake) or 2026-07-28")
    parser.add_argument("--cache", metavar="DIR", default=s,
                        help="keep what the server says may be kept (its era, fresh lists and reads) in this "
                        "directory, so the next run reuses it")
    parser.add_argument("-v", "--verbose", action="store_true", default=s,
                        help="show the server's stderr and debug logs")
    parser.add_argument("--no-input", action="store_true", default=s,
                        help="never ask: decline the server's elicitations and sampling requests "
                        "(the default without a terminal)")
    parser.add_argument("--trust-project", action="store_true", default=s,
                        help="consent, for this run, to the project's config files: start their servers and "
                        "expand their ${VAR} from your environment")


def _build() -> tuple[argparse.ArgumentParser, dict[str, _Parser]]:
    """The top-level parser, and each command's own parser by name.

    Each command's words are parsed by its own parser with ``parse_intermixed_args``, so
    options may stand anywhere between the command name and ``--`` (argparse cannot intermix
    through subparsers, so ``main`` picks the command's parser itself).
    """
    parser = _Parser(
        prog="mcpclient",
        description="Talk to a Model Context Protocol server: list and call its tools, read its "
        "resources, render its prompts.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mcpclient {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    commands: dict[str, _Parser] = {}

    def add(name: str, help: str, usage_args: str) -> _Parser:
        p: _Parser = sub.add_parser(name, help=help, description=help, epilog=EPILOG,
                           usage=f"mcpclient {name} {usage_args} [options] [-- COMMAND ...]",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        _common(p)
        p.add_argument("words", nargs="*", help=argparse.SUPPRESS)
        p.set_defaults(command=name)
        commands[name] = p
        return p

    add("tools", "list the server's tools", "[SERVER]").add_argument(
        "-l", "--long", action="store_true", help="full descriptions")
    call = add("call", "call a tool with key=value arguments", "[SERVER] TOOL [key=value ...] [key:=JSON ...]")
    call.add_argument("--no-progress", action="store_true", help="no progress bar")
    call.add_argument("--args-json", metavar="OBJECT", default=None,
                      help="the tool arguments as one JSON object ('-' reads stdin); key=value words "
                      "are merged over it")
    add("resources", "list resources and resource templates", "[SERVER]")
    add("read", "read a resource (binary goes to stdout when redirected)", "[SERVER] URI")
    add("prompts", "list prompts", "[SERVER]")
    add("prompt", "render a prompt with key=value arguments", "[SERVER] NAME [key=value ...]")
    add("complete", "complete an argument of a prompt (or resource template URI)", "[SERVER] REF ARGUMENT [VALUE]")
    add("ping", "check that the server answers", "[SERVER]")
    add("info", "server name, version, protocol version and capabilities", "[SERVER]")
    add("servers", "list the servers in your config files", "")
    trust = add("trust", "approve the project's servers (asked again when an entry changes)", "[SERVER ...]")
    trust.add_argument("--yes", action="store_true", help="approve what is listed without asking")
    trust.add_argument("--list", dest="list_only", action="store_true", help="show every remembered approval")
    trust.add_argument("--forget", action="store_true", help="forget the approvals of this project's servers")
    lock = add("lock", "write mcp.lock: what the servers offer, to notice when it changes", "[SERVER ...]")
    lock.add_argument("--check", action="store_true", help="compare with the lockfile instead; exit 6 on drift")
    lock.add_argument("--file", dest="lock_file", default="mcp.lock", help="the lockfile (default: mcp.lock)")
    doctor = add("doctor", "check a server from the client side and report what it breaks (see docs/doctor.md)",
                 "[SERVER]")
    doctor.add_argument("--cancel-tool", metavar="NAME", default=None,
                        help="a tool that takes a while, to cancel in flight (default: cancel a tools/list)")
    doctor.add_argument("--cancel-args", metavar="OBJECT", default="{}",
                        help="the --cancel-tool's arguments as a JSON object")
    doctor.add_argument("--check-tool", metavar="NAME", default=None,
                        help="a tool with an outputSchema, called to check its result against it")
    doctor.add_argument("--check-args", metavar="OBJECT", default="{}",
                        help="the --check-tool's arguments as a JSON object")
    stubs = add("stubs", "write a typed Python module with a method per tool (see docs/stubs.md)", "[SERVER]")
    stubs.add_argument("--class", dest="class_name", metavar="NAME", default=None,
                       help="the class name (default: from the server's name)")
    stubs.add_argument("--file", dest="stub_file", metavar="PATH", default=None,
                       help="write the module to PATH instead of standard output")
    record = add("record", "record a session with the server to a file, or (--pytest) make a recording a pytest "
                 "file (see docs/testing.md)", "[SERVER] [--file PATH] [--call 'TOOL {JSON}' ...] | --pytest RECORDING")
    record.add_argument("--file", dest="record_file", metavar="PATH", default="session.jsonl",
                        help="where to write the recording (default: session.jsonl)")
    record.add_argument("--call", dest="record_calls", metavar="'TOOL {JSON}'", action="append", default=[],
                        help="call a tool in the session, with its arguments as a JSON object (repeatable)")
    record.add_argument("--read", dest="record_reads", metavar="URI", action="append", default=[],
                        help="read a resource in the session (repeatable)")
    record.add_argument("--prompt", dest="record_prompts", metavar="'NAME {JSON}'", action="append", default=[],
                        help="get a prompt in the session, with its arguments as a JSON object (repeatable)")
    record.add_argument("--pytest", dest="pytest_of", metavar="RECORDING", default=None,
                        help="print a pytest file that replays RECORDING offline and asserts its answers "
                        "(no server is started)")
    return parser, commands


def parse_words(words: Sequence[str]) -> argparse.Namespace:
    """Our words (before ``--``) as a Namespace; raises SystemExit like argparse."""
    parser, commands = _build()
    if words and words[0] in commands:
        return commands[words[0]].parse_intermixed_args(words[1:])
    return parser.parse_args(words)  # --help, --version, or a usage error


class _Run:
    """One command: its options, its target, its output streams."""

    def __init__(self, args: argparse.Namespace, command: list[str] | None, out: TextIO, err: TextIO) -> None:
        self.args = args
        self.server_command = command
        self.out = out
        self.err = err
        self.config_path: str | None = getattr(args, "config", None)
        self.timeout: float = getattr(args, "timeout", 60.0)
        self.verbose: bool = getattr(args, "verbose", False)
        self.trust_project: bool = getattr(args, "trust_project", False)
        self.json_args: str | None = getattr(args, "args_json", None)
        self.as_json = getattr(args, "output", "text") == "json"
        self.protocol: str | None = getattr(args, "protocol", None)
        self.cache_dir: str | None = getattr(args, "cache", None)
        self.words: list[str] = list(args.words)
        #: The word that named the server (see take_target), when one did.
        self.target_word: str | None = None
        #: The person at the terminal, when there is one to ask (see _ask.py).
        self.terminal: TerminalIO | None = None
        #: Whether the connection opened (its handshake done): a failure before is the opening's.
        self.opened = False
        self._handlers: Handlers | None = None
        #: Who approves a call the policy says to ask about: the person, else nobody (denied).
        self.approver: Callable[[Any], bool] | None = None
        if interactive(getattr(args, "no_input", False), sys.stdin, err):
            prompter, self.terminal = terminal_prompter(sys.stdin, err)
            self.approver = prompter.approve_tool
            self._handlers = Handlers(elicitation=prompter.elicit, elicitation_modes=("form", "url"),
                                      sampling=prompter.sample)

    def take_target(self, first_word_is_target: bool) -> Any:
        """The target: the ``--`` command, else the first word if it names one, else the
        default (``MCPCLIENT_SERVER`` or the only configured server)."""
        if self.server_command is not None:
            return resolve_target(None, config_path=self.config_path, command=self.server_command)
        word = self.words.pop(0) if first_word_is_target and self.words else None
        self.target_word = word
        return resolve_target(word, config_path=self.config_path, command=None, trust_project=self.trust_project,
                              headers_given=any(getattr(self.args, name, None)
                                                for name in ("header", "header_env", "header_file")))

    def again(self, command: str) -> str:
        """The command line of mcpclient's ``command`` for the same server (for a hint)."""
        words = ["mcpclient", command]
        if self.config_path is not None:
            words += ["-c", self.config_path]
        if self.target_word is not None:
            words.append(self.target_word)
        if self.server_command is not None:
            words += ["--", *self.server_command]
        return shlex.join(words)

    def open(self, target: Any) -> Any:
        target, options = self.prepare(target)
        if self.cache_dir is not None:  # not for the doctor, which must ask the server itself
            options["plugins"] = attrs.evolve(options["plugins"], cache=cache_store(self.cache_dir))
        client = open_client(target, options)
        self.opened = True
        return client

    def prepare(self, target: Any) -> tuple[Any, dict[str, Any]]:
        """The target (consented to, when a project's entry and there is a terminal to ask)
        and the options to open it with."""
        env = dict(_pairs(getattr(self.args, "env", []) or [], "=", "--env"))
        headers = read_headers(getattr(self.args, "header", []) or [], getattr(self.args, "header_env", []) or [],
                               getattr(self.args, "header_file", []) or [], os.environ)
        options: dict[str, Any] = {"timeout": self.timeout, "http": HTTP(headers=headers or None),
                                   "stdio": Stdio(env=env or None, stderr=self.err if self.verbose else None),
                                   "handlers": self._handlers}
        if self.protocol is not None:
            options["protocol"] = self.protocol
        if isinstance(target, cfg.ServerConfig) and not target.approved and self.terminal is not None:
            target = ask_consent(target, self.terminal)  # without a terminal, opening it says how to consent
        # The "policy" of the config files (docs/policy.md), bound to the server's configured name:
        # the one beside the server in its own file (one of yours), else the first file's.
        policy = None
        if isinstance(target, cfg.ServerConfig) and target.source and not target.project:
            policy = cfg.load_policy(target.source, approver=self.approver, trust_project=self.trust_project)
        if policy is None:
            policy = cfg.load_policy(self.config_path, approver=self.approver, trust_project=self.trust_project)
        if policy is not None and isinstance(target, cfg.ServerConfig):
            policy = policy.for_server(target.name)
        options["plugins"] = Plugins(policy=policy)
        return target, options

    def print(self, text: str) -> None:
        self.out.write(text if text.endswith("\n") else text + "\n")

    @property
    def to_terminal(self) -> bool:
        """Whether standard output is a terminal: content is then shown cleaned (see _format)."""
        return _isatty(self.out)

    def emit(self, value: Any, text: Callable[[], str]) -> None:
        self.print(fmt.dumps(value) if self.as_json else text())


def _misplaced(command: str, server_command: Sequence[str], said: str) -> list[str]:
    """The words after ``--`` that are options of mcpclient's ``command`` (``--json``,
    ``-t 5``, ``--timeout=5``, ``-t5``) and that the server's last words (``said``, its
    stderr) name: it failed of them, so they were likely meant for mcpclient."""
    parser = _build()[1].get(command)
    if parser is None:
        return []
    # What the server named: "unrecognized arguments: --json -t5", "unknown option '--json'",
    # Go's "flag provided but not defined: -json".
    named = set(re.findall(r"(?<![\w-])-{1,2}\w[\w-]*", said))
    found = []
    for word in server_command[1:]:  # the first is the program
        if not word.startswith("-") or word == "-":
            continue
        name = word.partition("=")[0]
        short = word[:2] if not word.startswith("--") else name
        if name not in parser.own_options and short not in parser.own_options:
            continue
        if {word, name, short, "-" + name.lstrip("-")} & named:
            found.append(word)
    return found


def _pairs(items: Sequence[str], sep: str, option: str) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise UsageError(f"{option} takes {'KEY=VALUE' if sep == '=' else 'NAME: VALUE'}, got {item!r}")
        pairs.append((key.strip(), value.strip() if sep == ":" else value))
    return pairs


def _run_command(run: _Run) -> int:
    name = run.args.command
    if name == "servers":
        servers = cfg.load(run.config_path, trust_project=run.trust_project)
        if run.as_json:
            run.print(json.dumps({n: {"target": _safe_target(s), "source": s.source, "project": s.project,
                                      "approved": s.approved, "unexpanded": list(s.untrusted)}
                                  for n, s in servers.items()}, indent=2))
        else:
            run.print("\n".join(clean(f"{n}  {_describe(s)}  ({_origin(s)})") for n, s in servers.items())
                      or "(no servers configured)")
        return EXIT_OK
    if name == "trust":
        return trust_command(run.words, config_path=run.config_path, yes=run.args.yes, list_only=run.args.list_only,
                             forget=run.args.forget, terminal=run.terminal, out=run.out)
    if name == "lock":
        options: dict[str, Any] = {"timeout": run.timeout}
        if run.protocol is not None:
            options["protocol"] = run.protocol
        fine = lock_command(run.words, config_path=run.config_path, trust_project=run.trust_project,
                            path=run.args.lock_file, check_only=run.args.check, out=run.out, options=options)
        return EXIT_OK if fine else EXIT_DRIFT
    if name == "record" and run.args.pytest_of is not None:
        return pytest_command(run.args.pytest_of, out=run.out)
    target = run.take_target(_has_target_word(run, name))
    if name == "record":
        target, options = run.prepare(target)
        return record_command(target, options, path=run.args.record_file, calls=run.args.record_calls,
                              reads=run.args.record_reads, prompts=run.args.record_prompts, err=run.err)
    if name == "doctor":
        target, options = run.prepare(target)
        cancel = (run.args.cancel_tool, parse_json_object(run.args.cancel_args)) if run.args.cancel_tool else None
        check = (run.args.check_tool, parse_json_object(run.args.check_args)) if run.args.check_tool else None
        return doctor_command(target, options, cancel_call=cancel, output_call=check, as_json=run.as_json, out=run.out)
    if name == "complete" and len(run.words) not in (2, 3):
        raise UsageError("complete takes REF ARGUMENT [VALUE]")
    if name in ("read", "call", "prompt") and not run.words:
        raise UsageError(f"{name} needs a {'URI' if name == 'read' else 'name'}")
    with run.open(target) as client:
        if run.terminal is None:
            return _COMMANDS[name](run, client)
        with CtrlC(run.terminal):
            return _COMMANDS[name](run, client)


def _has_target_word(run: _Run, command: str) -> bool:
    """Whether the first word is SERVER, from how many words the command takes."""
    if run.server_command is not None:
        return False
    words = run.words
    if command in ("call", "prompt"):  # [SERVER] NAME [k=v ...]
        leading = 0
        while leading < len(words) and ("=" not in words[leading]
                                        or words[leading].lower().startswith(("http://", "https://"))):
            leading += 1  # a URL is no k=v, whatever its query holds (?api_key=...)
        return leading >= 2
    if command == "read":  # [SERVER] URI
        return len(words) >= 2
    if command == "complete":  # [SERVER] REF ARGUMENT [VALUE]
        if len(words) != 3:
            return len(words) >= 4
        first = words[0]
        return first.lower().startswith(("http://", "https://")) or first.endswith(".py") or \
            first in cfg.load(run.config_path, trust_project=run.trust_project)
    return len(words) >= 1


def _safe_target(entry: cfg.ServerConfig) -> Any:
    return entry.url if entry.url is not None else [entry.command or "", *entry.args]


def _origin(entry: cfg.ServerConfig) -> str:
    """Where an entry came from: its file, marked when it is a project's."""
    if not entry.project:
        return f"from {entry.source}"
    note = "approved" if entry.approved else "not approved: mcpclient trust, or --trust-project"
    return f"from {entry.source}, a project file, {note}"


def _describe(entry: cfg.ServerConfig) -> str:
    if entry.url is not None:
        return entry.url
    return " ".join([entry.command or "?", *entry.args])


def _listing(run: _Run, capability: str, fetch: Callable[[], list[Any]]) -> list[Any]:
    """What ``fetch`` lists; nothing, with a note on stderr, when the server does not declare
    ``capability`` (nothing was sent: a server without resources has none to list)."""
    try:
        return fetch()
    except CapabilityError as exc:
        if exc.capability != capability:
            raise
        _say(run.err, f"note: the server does not declare the {capability!r} capability: it has no {capability} to list")
        return []


def _tools(run: _Run, client: Any) -> int:
    items = _listing(run, "tools", client.list_tools)
    run.emit(items, lambda: fmt.tools(items, long=run.args.long))
    return EXIT_OK


def _call(run: _Run, client: Any) -> int:
    tool, *pairs = run.words
    schema = None
    if pairs:
        try:
            schema = next((t.input_schema for t in client.list_tools() if t.name == tool), None)
        except MCPError:
            schema = None
    arguments = parse_json_object(run.json_args) if run.json_args is not None else {}
    arguments.update(parse_arguments(pairs, schema))
    show_bar = not run.args.no_progress and not run.as_json and run.err.isatty()
    try:
        if supports_progress(client.call_tool) and show_bar:
            with Progress(tool, run.err) as bar:
                result = client.call_tool(tool, arguments, on_progress=bar.callback)
        else:
            result = client.call_tool(tool, arguments)
    except RPCError:
        if _say_unknown_tool(run, client, tool):
            return EXIT_SERVER_ERROR
        raise
    if result.is_error and _say_unknown_tool(run, client, tool):
        return EXIT_TOOL_ERROR
    if run.as_json:
        run.print(fmt.dumps(result))
    else:
        text = fmt.tool_result(result, terminal=run.to_terminal)
        if result.is_error:
            _say(run.err, f"tool {tool!r} reported an error: {fmt.tool_result(result) or '(no text)'}")
        elif text:
            run.print(text)
    return EXIT_TOOL_ERROR if result.is_error else EXIT_OK


#: How many pages of tools the unknown-tool hint reads at most.
_HINT_PAGES = 20


def _say_unknown_tool(run: _Run, client: Any, tool: str) -> bool:
    """After a failed call: when the server has no tool named ``tool``, say so, with the ones
    it has and how to list them, and return True. Only a failure asks for the list (page by
    page: a hint, so no warning about the listing and no cache of it)."""
    names: list[str] = []
    cursor = None
    try:
        for _ in range(_HINT_PAGES):
            page = client.list_tools(cursor=cursor)
            names += [t.name for t in page.items]
            cursor = page.next_cursor
            if cursor is None:
                break
    except MCPError:
        return False
    if tool in names or cursor is not None:  # there, or more pages than a hint reads
        return False
    close = difflib.get_close_matches(tool, names, n=3, cutoff=0.75)
    hint = f"; did you mean {' or '.join(repr(n) for n in close)}?" if close else ""
    _say(run.err, f"error: the server has no tool {tool!r}{hint} ({len(names)} tool{'' if len(names) == 1 else 's'}; "
                  f"list them with: {run.again('tools')})")
    return True


def _resources(run: _Run, client: Any) -> int:
    items = _listing(run, "resources", client.list_resources)
    try:
        templates = client.list_resource_templates()
    except MCPError:  # CapabilityError included: the note above said it
        templates = []
    if run.as_json:
        run.print(fmt.dumps({"resources": items, "resourceTemplates": templates}))
    else:
        run.print(fmt.resources(items, templates))
    return EXIT_OK


def _read(run: _Run, client: Any) -> int:
    contents = client.read_resource(run.words[0])
    if run.as_json:
        run.print(fmt.dumps(contents))
        return EXIT_OK
    for item in contents:
        if item.blob is not None:
            if run.out.isatty():
                run.print(f"[{clean(item.mime_type or 'binary', 200)}, {len(item.blob)} bytes: redirect to a file to save it]")
            else:
                run.out.flush()
                buffer = getattr(run.out, "buffer", None)
                if buffer is not None:
                    buffer.write(item.blob)
                    buffer.flush()
                else:
                    run.out.write(item.blob.decode("latin-1"))
        elif run.to_terminal:
            run.print(fmt.content(item.text or "", terminal=True))
        else:
            run.out.write(item.text or "")
    return EXIT_OK


def _prompts(run: _Run, client: Any) -> int:
    items = _listing(run, "prompts", client.list_prompts)
    run.emit(items, lambda: fmt.prompts(items))
    return EXIT_OK


def _prompt(run: _Run, client: Any) -> int:
    name, *pairs = run.words
    as_strings = {"properties": {w.partition("=")[0]: {"type": "string"} for w in pairs}}
    arguments = {k: v if isinstance(v, str) else json.dumps(v) for k, v in parse_arguments(pairs, as_strings).items()}
    description, messages = client.get_prompt(name, arguments)
    run.emit({"description": description, "messages": messages},
             lambda: fmt.prompt_messages(description, messages, terminal=run.to_terminal))
    return EXIT_OK


def _complete(run: _Run, client: Any) -> int:
    ref, argument, *rest = run.words
    completion_ref = CompletionRef.resource(ref) if "://" in ref or "{" in ref else CompletionRef.prompt(ref)
    completion = client.complete(completion_ref, argument, rest[0] if rest else "")
    run.emit(completion, lambda: "\n".join(clean(value) for value in completion.values) or "(no suggestions)")
    return EXIT_OK


def _ping(run: _Run, client: Any) -> int:
    start = time.perf_counter()
    client.ping()
    elapsed = (time.perf_counter() - start) * 1000
    run.emit({"ok": True, "ms": round(elapsed, 2)}, lambda: f"pong ({elapsed:.1f} ms)")
    return EXIT_OK


def _info(run: _Run, client: Any) -> int:
    run.emit(fmt.info_json(client), lambda: fmt.info(client))
    return EXIT_OK


_COMMANDS: dict[str, Callable[[_Run, Any], int]] = {
    "tools": _tools, "call": _call, "resources": _resources, "read": _read, "prompts": _prompts,
    "prompt": _prompt, "complete": _complete, "ping": _ping, "info": _info,
    "stubs": lambda run, client: stubs_command(client, class_name=run.args.class_name, path=run.args.stub_file,
                                               out=run.out, err=run.err),
}


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _lenient(stream: TextIO) -> TextIO:
    """``stream``, writing what its encoding cannot (a lone surrogate from a JSON ``\\ud800``
    escape) as a backslash escape instead of failing; such an escape is valid in JSON output."""
    if isinstance(stream, io.TextIOWrapper):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (ValueError, OSError):  # closed, or not reconfigurable
            pass
    return stream


def _say(err: TextIO, text: str) -> None:
    """One ``mcpclient: ...`` line on stderr; server text in it is cleaned (see _text)."""
    err.write(f"mcpclient: {clean(text, None)}\n")


def _note_misplaced(err: TextIO, command: str, server_command: Sequence[str], error: ConnectionClosed) -> None:
    """After a server that failed during the opening and named mcpclient's options it was
    given (its stderr): say that they went to the server."""
    if error.exit_code == 0:  # it ended of its own accord: nothing it was given failed it
        return
    words = _misplaced(command, server_command, error.stderr_tail)
    if words:
        shown = ", ".join(repr(w) for w in words)
        one = len(words) == 1
        it, option = ("it", "option") if one else ("they", "options")
        _say(err, f"note: the server exited at once; {shown} came after '--', so {it} went to the server, "
                  f"not to mcpclient: if you meant mcpclient's {option}, put {'it' if one else 'them'} before '--'")


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    out = stdout or _lenient(sys.stdout)
    err = stderr or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        words, command = split_command(argv)
    except UsageError as exc:
        _say(err, f"error: {exc}")
        return EXIT_USAGE
    try:
        args = parse_words(words)
    except SystemExit as exc:  # --help, --version, or argparse's own usage error
        return int(exc.code or 0)
    # The library's warnings are the application's to show (mcpclient's logger has only a
    # NullHandler); at the command line the user is the application: warnings are shown, and
    # with -v everything.
    shown = logging.StreamHandler(err)
    if getattr(args, "verbose", False):
        shown.setFormatter(CleanFormatter("%(name)s: %(message)s"))
        logging.basicConfig(level=logging.DEBUG, handlers=[shown])
    else:
        shown.setLevel(logging.WARNING)
        shown.setFormatter(CleanFormatter("mcpclient: warning: %(message)s"))
        logging.getLogger("mcpclient").addHandler(shown)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning(err, warnings.showwarning)
            return _run(_Run(args, command, out, err))
    finally:
        logging.getLogger("mcpclient").removeHandler(shown)


def _show_warning(err: TextIO, others: Callable[..., None]) -> Callable[..., None]:
    """Python's ``showwarning`` for a run: mcpclient's own warnings (plain http to another
    host, say) as ``mcpclient: warning: ...`` lines, like its log's; others as Python shows them."""
    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:
        text = str(message)
        if not text.startswith("mcpclient: "):
            others(message, category, filename, lineno, file, line)
            return
        _say(err, f"warning: {text.removeprefix('mcpclient: ')}")

    return show


def _run(run: _Run) -> int:
    """Run the command; each failure is one line on stderr and its exit code."""
    err = run.err
    try:
        return _run_command(run)
    except UsageError as exc:
        _say(err, f"error: {exc}")
        return EXIT_USAGE
    except cfg.ConfigError as exc:
        _say(err, f"error: {_one_line(exc)}")
        return EXIT_USAGE
    except RequestTimeout as exc:
        _say(err, f"timeout: {_one_line(exc)}")
        return EXIT_TIMEOUT
    except ToolCallDenied as exc:
        _say(err, f"denied: {_one_line(exc)}")
        return EXIT_DENIED
    except TransportError as exc:
        reason = f"connection closed: {exc.reason}" if isinstance(exc, ConnectionClosed) else _one_line(exc)
        _say(err, f"connection error: {reason}")
        tail = exc.stderr_tail if isinstance(exc, ConnectionClosed) else ""
        if tail and not run.verbose:
            _say(err, f"the server's last stderr line: {tail.strip().splitlines()[-1]}")
        if isinstance(exc, ConnectionClosed) and not run.opened and run.server_command is not None:
            _note_misplaced(err, run.args.command, run.server_command, exc)
        return EXIT_CONNECTION
    except ResourceNotFound as exc:
        _say(err, f"not found: {_one_line(exc)}")
        return EXIT_SERVER_ERROR
    except CapabilityError as exc:
        _say(err, f"error: {_one_line(exc)}")
        return EXIT_SERVER_ERROR
    except RPCError as exc:  # its text says "server error -32602: ..." already
        _say(err, _one_line(exc))
        return EXIT_SERVER_ERROR
    except MCPError as exc:
        _say(err, f"server error: {_one_line(exc)}")
        return EXIT_SERVER_ERROR
    except KeyboardInterrupt:
        err.write("mcpclient: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `mcpclient tools | head`
        return EXIT_OK
