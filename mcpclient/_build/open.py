"""Opening a client: ``connect`` and ``open_client``, the one path from a target to an open ``Client``.

A target is a command (an argv list), an http(s) URL, a ready ``Transport`` or a config entry
(``ServerEntry``). ``connect``, ``SharedClient``, ``ClientGroup``, ``SharedGroup``, config
entries, the command line and the notebook all open their clients through ``open_client``,
with ``connect``'s keywords (``options``, the groups of ``_client.settings`` among them).
"""

from __future__ import annotations

import abc
import functools
import inspect
import ipaddress
import logging
import os
import urllib.parse
import warnings
from typing import Any, Callable, Collection, Mapping, Sequence, Union

import attrs

from .. import types as t
from .._client.client import DEFAULT, DEFAULT_TIMEOUT, Client
from .._client.settings import HTTP, OLD_KEYWORDS, Handlers, Plugins, Stdio, respell
from .._core.call_checks import first_frame_outside
from .._core.credentials import Credentials
from .._core.exceptions import HTTPStatusError, MCPError, RPCError
from .._core.retry import Retry
from .._core.text import clean
from ..extensions import Extension, Middleware
from ..transports.base import Transport
from ..transports.stdio import StdioTransport

__all__ = [
    "OPTIONS", "ServerEntry", "Target", "connect", "credentials_of", "describe_target", "entry_options", "named",
    "open_client", "opening",
]

log = logging.getLogger("mcpclient")

#: Statuses to an initialize POST that mean "maybe an old HTTP+SSE server" (spec, backwards
#: compatibility): try the GET event stream instead.
FALLBACK_STATUSES = frozenset({400, 404, 405})


class ServerEntry(abc.ABC):
    """What the opener needs of a server's config entry (``mcpclient.config.ServerConfig`` is
    one): declared here so that opening a target never imports the config layer above it.

    ``target()`` is the argv list or the URL and ``check()`` raises when the entry cannot be
    opened as written; ``env``, ``headers``, ``cwd`` and ``transport`` are the entry's own
    options, ``name`` its name and ``source`` the file it came from (None: none), for messages.
    """

    name: str
    source: str | None
    env: Mapping[str, str]
    headers: Mapping[str, str]
    cwd: str | None
    transport: str | None

    @abc.abstractmethod
    def target(self) -> list[str] | str:
        """The argv list, or the URL."""

    @abc.abstractmethod
    def check(self) -> None:
        """Raise ``ConfigError`` if this entry cannot be opened as written."""

    def extensions(self) -> Sequence[Extension]:
        """The extensions the entry brings to its client (its tool transformations), before
        the caller's; none by default."""
        return ()


#: What a server can be given as: a command (argv list), an http(s) URL, a ready Transport
#: (``mcpclient.testing.FakeServer`` included), or a config entry.
Target = Union[Sequence[str], str, Transport, ServerEntry]


def connect(
    target: Target,
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    protocol: str = "auto",
    handlers: Handlers | None = None,
    plugins: Plugins | None = None,
    http: HTTP | None = None,
    stdio: Stdio | None = None,
    middleware: Sequence[Middleware] = (),
    extensions: Sequence[Extension] = (),
    resume: t.SessionState | Mapping[str, Any] | None = None,
    on_session_lost: str = "raise",
    client_info: t.Implementation | None = None,
    max_dispatch: int = 16,
    retry: Retry | None = None,
    **old: Any,
) -> Client:
    """Connect to an MCP server and return an initialized ``Client`` (close it when done).

    ``target`` is an ``https://`` URL (``http://`` is fine to a loopback address such as
    127.0.0.1 or localhost; to any other host it warns: a ``UserWarning``), a command as a list of
    strings (started with ``StdioTransport``, never through a shell), a ``Transport`` or a
    config entry (``config.ServerConfig``). A URL is tried with Streamable HTTP first; if the
    initialize POST is answered 400, 404 or 405, the deprecated HTTP+SSE transport is tried at
    the same URL, as the MCP specification's backwards-compatibility section describes.

    ``http`` (an ``HTTP``: headers, auth, tokens, a ``requests.Session``, retries) configures
    a URL's transport and ``stdio`` (a ``Stdio``: env, cwd, stderr) a command's. The other
    keywords are ``Client``'s: ``timeout`` bounds the handshake and every call,
    ``handlers`` and ``plugins`` are the ``Handlers`` and ``Plugins`` groups (each documented
    on its class). ``resume`` takes up a saved legacy Streamable HTTP session with no
    ``initialize`` (and no HTTP+SSE fallback); see docs/reliability.md.

    Raises what ``Client.initialize`` raises; when the fallback fails too, the error of the
    Streamable HTTP attempt is raised, with the fallback's as its cause.
    """
    options = {
        "timeout": timeout, "protocol": protocol, "handlers": handlers, "plugins": plugins, "http": http,
        "stdio": stdio, "middleware": middleware, "extensions": extensions, "resume": resume,
        "on_session_lost": on_session_lost, "client_info": client_info, "max_dispatch": max_dispatch,
        "retry": retry,
    }
    return open_client(target, respell("connect()", options, old) if old else options)


#: ``connect``'s keywords, which every front that opens clients takes (``opening``).
OPTIONS: tuple[str, ...] = tuple(
    name for name, parameter in inspect.signature(connect).parameters.items() if parameter.kind is parameter.KEYWORD_ONLY
)


def opening(where: str, options: Mapping[str, Any], own: Collection[str] = ()) -> dict[str, Any]:
    """``options`` given to ``where`` (a front that takes ``connect``'s keywords) in this
    release's spelling: the old keywords moved into their groups, each with a
    ``DeprecationWarning`` (``settings.respell``). ``own`` are keywords of the front's own,
    passed on as they are; any other keyword is a ``TypeError`` now, not at the first open."""
    unknown = sorted(set(options) - set(OPTIONS) - set(OLD_KEYWORDS) - set(own))
    if unknown:
        raise TypeError(f"{where} got an unexpected keyword argument {unknown[0]!r}")
    old = {name: value for name, value in options.items() if name in OLD_KEYWORDS}
    if not old:
        return dict(options)
    return respell(where, {name: value for name, value in options.items() if name not in old}, old)


def open_client(target: Target, options: Mapping[str, Any], *, open_timeout: float | None = DEFAULT) -> Client:
    """An initialized ``Client`` for ``target`` opened with ``options`` (``connect``'s keywords,
    this release's spelling); closed again if the handshake fails.

    ``open_timeout`` bounds the handshake (``DEFAULT``: the client's ``timeout``).
    """
    if isinstance(target, ServerEntry):
        target.check()
        options = entry_options(target, options)
        target = target.target()
    client_options = dict(options)
    http: HTTP = client_options.pop("http", None) or HTTP()
    if http.max_retries:  # a spelling of the client's Retry, whose attempts middleware sees
        if client_options.get("retry") is not None:
            raise TypeError("give retry=Retry(...) or http=HTTP(max_retries=...), not both")
        client_options["retry"] = Retry(attempts=http.max_retries + 1)
        http = attrs.evolve(http, max_retries=0)
    stdio: Stdio = client_options.pop("stdio", None) or Stdio()
    start = functools.partial(_started, client_options, open_timeout)
    if isinstance(target, Transport):
        return start(target)
    resuming = client_options.get("resume") is not None
    if isinstance(target, str):
        return _open_url(_url(target), http, resuming, start)
    return start(StdioTransport(_command(target, resuming), stdio.env, cwd=stdio.cwd, stderr=stdio.stderr))


def _started(options: Mapping[str, Any], open_timeout: float | None, transport: Transport) -> Client:
    """A ``Client`` on ``transport`` with ``options``, initialized within ``open_timeout``;
    on any failure nothing is left open (the transport, or the client, is closed)."""
    try:
        client = Client(transport, **options)
    except BaseException:
        transport.close()
        raise
    try:
        client.initialize(timeout=open_timeout)
    except BaseException:
        client.close()
        raise
    return client


def _url(target: str) -> str:
    if not target.lower().startswith(("http://", "https://")):
        raise ValueError(f"connect() takes an http(s) URL or a command as a list of strings, got {target!r}; "
                         "to run a command, pass it as a list (no shell is used)")
    return target


def _command(target: object, resuming: bool) -> list[str]:
    if not (isinstance(target, (list, tuple)) and target and all(isinstance(a, (str, os.PathLike)) for a in target)):
        raise TypeError(f"connect() takes an http(s) URL, a command as a list of strings, a Transport or a config "
                        f"entry, got {target!r}")
    if resuming:
        raise ValueError("resume= takes up a Streamable HTTP session: connect() needs the server's URL")
    return [os.fspath(part) for part in target]


def _open_url(url: str, http: HTTP, resuming: bool, start: Callable[[Transport], Client]) -> Client:
    """Streamable HTTP at ``url``, then HTTP+SSE if the initialize POST says "not here"."""
    _warn_if_plain_http(url)
    # The HTTP stack (requests, urllib3) is imported by the first client that needs it:
    # a stdio client never does.
    from ..transports.http import StreamableHTTPTransport
    from ..transports.sse import SSETransport

    transport_options = attrs.asdict(http, recurse=False)
    keep_session = transport_options.pop("keep_session")
    streamable = StreamableHTTPTransport(url, **transport_options, keep_session=keep_session)
    try:
        return start(streamable)
    except (HTTPStatusError, RPCError) as exc:
        status = streamable.initialize_status
        if status not in FALLBACK_STATUSES or resuming:
            raise
        log.info("initialize over Streamable HTTP got HTTP %d; trying the HTTP+SSE transport", status)
        try:
            legacy = SSETransport(url, **transport_options)
        except MCPError as fallback_error:
            # Both attempts failed: report the Streamable HTTP error, with the fallback's
            # as its cause (Python 3.10 has no add_note).
            raise exc from fallback_error
        return start(legacy)


def entry_options(entry: ServerEntry, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` for opening ``entry``: its headers, env and cwd under the caller's, its
    extensions before the caller's, the policy and lockfile bound to its name."""
    merged = named(options, entry.name)
    http, stdio = merged.get("http") or HTTP(), merged.get("stdio") or Stdio()
    merged["http"] = attrs.evolve(http, headers=_under(entry.headers, http.headers, entry, "http=HTTP(headers"))
    merged["stdio"] = attrs.evolve(stdio, env=_under(entry.env, stdio.env, entry, "stdio=Stdio(env"),
                                   cwd=entry.cwd or stdio.cwd)
    if brought := entry.extensions():
        merged["extensions"] = [*brought, *merged.get("extensions", ())]
    return merged


def _under(own: Mapping[str, str], given: object, entry: ServerEntry, spelled: str) -> dict[str, str] | None:
    """An entry's ``own`` headers or env with the caller's ``given`` over them (None: none)."""
    if given is not None and not isinstance(given, Mapping):
        raise TypeError(f"the server {entry.name!r} has values of its own to add to: give {spelled}={{...}}) a mapping")
    return {**own, **(given or {})} or None


def named(options: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``options`` with the policy and lockfile of its ``plugins`` bound to the server name
    ``name`` (``plugins.naming.named``: a rule or lockfile entry for "fs" means the server
    you call fs)."""
    out = dict(options)
    plugins = out.get("plugins")
    if plugins is not None and (plugins.policy is not None or plugins.lock is not None):
        from ..plugins.naming import named as bind

        out["plugins"] = attrs.evolve(plugins, **bind({"policy": plugins.policy, "lock": plugins.lock}, name))
    return out


def credentials_of(target: object, options: Mapping[str, Any] | None = None) -> Credentials:
    """The account of what a client of ``target`` opened with ``options`` (the ``http`` and
    ``stdio`` groups) sends, made as its transport makes it (``Credentials``): for what must
    know it before any transport is made (``SharedClient``, a replay). A ready transport gives
    its own; a function making the client gives an account nobody can tell in advance."""
    options = options or {}
    if isinstance(target, ServerEntry):
        return credentials_of(target.target(), entry_options(target, options))
    if isinstance(target, Transport):
        return target.about.credentials
    if isinstance(target, str):
        from ..transports._requester import credentials_for

        http = options.get("http") or HTTP()
        return credentials_for(target, http.headers, auth=http.auth, token_provider=http.token_provider,
                               session=http.session)
    if isinstance(target, (list, tuple)):
        return Credentials.for_stdio((options.get("stdio") or Stdio()).env)
    return Credentials.unknown("a function making the transport or the client")


def describe_target(target: Target) -> str:
    """A short human name for a target, for messages: a URL without the credentials it holds."""
    if isinstance(target, str):
        return credentials_of(target).redactor.redact(target)
    if isinstance(target, Transport):
        return repr(target)
    if isinstance(target, ServerEntry):
        return target.name
    return " ".join(str(part) for part in target)


def _warn_if_plain_http(url: str) -> None:
    """Plain http is fine on this machine (nothing crosses a network); to any other host it
    carries requests and credentials in clear text: say so, once per connect().

    A ``UserWarning``, not a log record: the application can avoid it (use https), and a
    log record would reach no one where logging is not configured (mcpclient's logger has a
    ``NullHandler``). Python shows it once per line of the caller's code that connects."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "http":
        return
    host = (parts.hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        pass
    warnings.warn(
        f"mcpclient: connecting to {clean(host, None)} over plain http: requests and any credentials "
        "travel unencrypted; use https for a server that is not on this machine",
        UserWarning, stacklevel=first_frame_outside(),
    )
