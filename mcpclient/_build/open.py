"""Open one server target (argv list, URL, Transport or config entry) as a Client."""

from __future__ import annotations

import abc
import os
from typing import Any, Mapping, Sequence, Union

from .._client.client import DEFAULT_TIMEOUT, Client
from .._core.credentials import Credentials
from ..extensions import Extension
from ..plugins.naming import named
from ..transports.base import Transport
from ..transports.stdio import StdioTransport
from .connect import connect
from .factory import make_client, pick_options

__all__ = ["ServerEntry", "Target", "credentials_of", "describe_target", "open_target"]


class ServerEntry(abc.ABC):
    """What the opener needs of a server's config entry (``mcpclient.config.ServerConfig`` is
    one): declared here so that opening a target never imports the config layer above it.

    ``target()`` is what ``connect`` takes (the argv list or the URL) and ``check()`` raises
    when the entry cannot be opened as written; ``env``, ``headers``, ``cwd`` and
    ``transport`` are the entry's own options, ``name`` its name and ``source`` the file it
    came from (None: none), for messages.
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

_NOT_GIVEN: Any = object()


def open_target(
    target: Target,
    *,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    transport: str | None = None,
    timeout: float | None = None,
    call_timeout: float | None = DEFAULT_TIMEOUT,
    stderr: Any = _NOT_GIVEN,
    **kwargs: Any,
) -> Client:
    """An initialized ``Client`` for ``target``; closed again if the handshake fails.

    ``timeout`` bounds the handshake (None: the client default); ``call_timeout`` becomes the
    client's timeout for later calls (default ``DEFAULT_TIMEOUT``; None for no limit). ``stderr`` (stdio only) is where the server's stderr
    goes, as in ``StdioTransport``. Other keyword arguments go to ``mcpclient.connect``.
    """
    if isinstance(target, ServerEntry):
        target.check()
        kwargs = named(kwargs, target.name)
        if brought := target.extensions():
            kwargs["extensions"] = [*brought, *kwargs.get("extensions", ())]
        return open_target(
            target.target(), env={**target.env, **(env or {})} or None,
            headers={**target.headers, **(headers or {})} or None, cwd=target.cwd or cwd,
            transport=target.transport, timeout=timeout, call_timeout=call_timeout, stderr=stderr, **kwargs,
        )
    client: Client
    if isinstance(target, Transport):
        client = make_client(target, **pick_options(kwargs))
        _initialize(client, timeout)
    elif stderr is not _NOT_GIVEN and not isinstance(target, str):
        # connect() has no stderr option: build the stdio transport here.
        client = make_client(StdioTransport(list(target), env, cwd=cwd, stderr=stderr), **pick_options(kwargs))
        _initialize(client, timeout)
    else:
        options: dict[str, Any] = dict(kwargs)
        if timeout is not None:
            options["timeout"] = timeout
        if isinstance(target, str):
            if headers:
                options["headers"] = dict(headers)
        else:
            if env:
                options["env"] = dict(env)
            if cwd is not None:
                options["cwd"] = cwd
        client = connect(target, **options)
    client.timeout = call_timeout  # connect() used the handshake timeout for both
    return client


def _initialize(client: Client, timeout: float | None) -> None:
    try:
        client.initialize(**({} if timeout is None else {"timeout": timeout}))
    except BaseException:
        client.close()
        raise


def credentials_of(target: object, options: Mapping[str, Any] | None = None) -> Credentials:
    """The account of what a client of ``target`` opened with ``options`` (``headers``,
    ``auth``, ``token_provider``, ``session``; ``env``) sends, made as its transport makes it
    (``Credentials``): for what must know it before any transport is made (``SharedClient``,
    a replay). A ready transport gives its own; a function making the client gives an
    account nobody can tell in advance."""
    options = options or {}
    if isinstance(target, ServerEntry):
        merged = {**options, "env": {**target.env, **(options.get("env") or {})},
                  "headers": {**target.headers, **(options.get("headers") or {})}}
        return credentials_of(target.target(), merged)
    if isinstance(target, Transport):
        return target.about.credentials
    if isinstance(target, str):
        from ..transports._requester import credentials_for

        return credentials_for(target, options.get("headers"), auth=options.get("auth"),
                               token_provider=options.get("token_provider"), session=options.get("session"))
    if isinstance(target, (list, tuple)):
        return Credentials.for_stdio(options.get("env"))
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
