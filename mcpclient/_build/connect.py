"""``connect()``: one call from a URL or a command to an initialized ``Client``."""

from __future__ import annotations

import ipaddress
import logging
import os
import urllib.parse
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from .. import types as t
from .._client.client import DEFAULT_TIMEOUT, Client
from .._core.exceptions import HTTPStatusError, MCPError, RPCError
from ..extensions import Extension, Middleware
from ..transports.base import Transport
from ..transports.stdio import _DEFAULT_STDERR, StdioTransport
from .factory import make_client

if TYPE_CHECKING:
    import requests

    from ..cache import CacheStore, PartitionOption

__all__ = ["connect"]

log = logging.getLogger("mcpclient")

#: Statuses to an initialize POST that mean "maybe an old HTTP+SSE server" (spec, backwards
#: compatibility): try the GET event stream instead.
FALLBACK_STATUSES = frozenset({400, 404, 405})


def connect(
    target: str | Sequence[str],
    *,
    headers: Mapping[str, str] | None = None,
    token_provider: Any = None,
    auth_header: str | None = None,
    auth: requests.auth.AuthBase | None = None,
    session: requests.Session | None = None,
    max_retries: int = 0,
    env: Mapping[str, str] | Sequence[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: Any = _DEFAULT_STDERR,
    timeout: float | None = DEFAULT_TIMEOUT,
    client_info: t.Implementation | None = None,
    max_dispatch: int = 16,
    protocol: str = "auto",
    cache: bool | CacheStore = False,
    cache_partition: PartitionOption = None,
    output_validation: str = "strict",
    apps: bool = False,
    telemetry: Any = "auto",
    middleware: Sequence[Middleware] = (),
    extensions: Sequence[Extension] = (),
    keepalive: float | None = None,
    policy: Any = None,
    lock: Any = None,
    on_change: str = "refuse",
    sampling_handler: Callable[..., Any] | None = None,
    elicitation_handler: Callable[..., Any] | None = None,
    elicitation_modes: Sequence[str] = ("form",),
    notification_handler: Callable[[str, dict[str, Any]], None] | None = None,
    roots: Sequence[t.Root | str] | None = None,
    resume: t.SessionState | Mapping[str, Any] | None = None,
    on_session_lost: str = "raise",
    keep_session: bool = False,
) -> Client:
    """Connect to an MCP server and return an initialized ``Client`` (close it when done).

    ``target`` is an ``https://`` URL (``http://`` is fine to a loopback address such as
    127.0.0.1 or localhost; to any other host it logs a warning), or a command as a list of strings
    (started with ``StdioTransport``, never through a shell). A URL is tried with Streamable
    HTTP first; if the initialize POST is answered 400, 404 or 405, the deprecated HTTP+SSE
    transport is tried at the same URL (a GET stream whose first event names the POST
    endpoint), as the MCP specification's backwards-compatibility section describes.

    ``headers``, ``token_provider``, ``auth_header``, ``auth``, ``session`` and
    ``max_retries`` configure HTTP (see ``StreamableHTTPTransport``); ``env``, ``cwd`` and
    ``stderr`` the command (see ``StdioTransport``). ``timeout``, ``client_info``,
    ``max_dispatch``, ``protocol``, ``cache``, ``cache_partition``, ``output_validation``, ``apps``, ``telemetry``,
    ``middleware``, ``extensions``, ``keepalive``, ``policy``, ``lock``, ``on_change``,
    ``resume`` and ``on_session_lost`` go to the ``Client``.
    ``resume`` (a ``Client.session_state``, or its ``as_dict()``) takes up that legacy Streamable
    HTTP session with no ``initialize`` (and no HTTP+SSE fallback); ``keep_session=True`` leaves
    the session open on ``close()`` so that another client can resume it (docs/reliability.md).
    Handlers
    (``elicitation_modes``: what the elicitation handler takes, "form" and/or "url")
    and ``roots`` are installed before the handshake, so their capabilities are declared.

    Raises what ``Client.initialize`` raises; when the fallback fails too, the error of the
    Streamable HTTP attempt is raised, with a note saying what the fallback hit.
    """

    def start(transport: Transport) -> Client:
        client = make_client(
            transport,
            timeout=timeout,
            client_info=client_info,
            max_dispatch=max_dispatch,
            protocol=protocol,
            cache=cache,
            cache_partition=cache_partition,
            output_validation=output_validation,
            apps=apps,
            telemetry=telemetry,
            middleware=middleware,
            extensions=extensions,
            keepalive=keepalive,
            policy=policy,
            lock=lock,
            on_change=on_change,
            sampling_handler=sampling_handler,
            elicitation_handler=elicitation_handler,
            elicitation_modes=elicitation_modes,
            notification_handler=notification_handler,
            roots=roots,
            resume=resume,
            on_session_lost=on_session_lost,
        )
        try:
            client.initialize()
        except BaseException:
            client.close()
            raise
        return client

    if isinstance(target, str):
        if not target.lower().startswith(("http://", "https://")):
            raise ValueError(
                f"connect() takes an http(s) URL or a command as a list of strings, got {target!r}; "
                "to run a command, pass it as a list (no shell is used)"
            )
        _warn_if_plain_http(target)
        # The HTTP stack (requests, urllib3) is imported by the first client that needs it:
        # a stdio client never does.
        from ..transports.http import StreamableHTTPTransport
        from ..transports.sse import SSETransport

        http_options: dict[str, Any] = {
            "headers": headers,
            "token_provider": token_provider,
            "auth_header": auth_header,
            "auth": auth,
            "session": session,
            "max_retries": max_retries,
        }
        streamable = StreamableHTTPTransport(target, **http_options, keep_session=keep_session)
        try:
            return start(streamable)
        except (HTTPStatusError, RPCError) as exc:
            status = streamable.initialize_status
            if status not in FALLBACK_STATUSES or resume is not None:
                raise
            log.info("initialize over Streamable HTTP got HTTP %d; trying the HTTP+SSE transport", status)
            try:
                legacy = SSETransport(target, **http_options)
            except MCPError as fallback_error:
                # Both attempts failed: report the Streamable HTTP error, with the fallback's
                # as its cause (Python 3.10 has no add_note).
                raise exc from fallback_error
            return start(legacy)
    if isinstance(target, (list, tuple)) and target and all(isinstance(a, (str, os.PathLike)) for a in target):
        if resume is not None:
            raise ValueError("resume= takes up a Streamable HTTP session: connect() needs the server's URL")
        return start(StdioTransport(list(target), env, cwd=cwd, stderr=stderr))
    raise TypeError(f"connect() takes an http(s) URL or a command as a list of strings, got {target!r}")


def _warn_if_plain_http(url: str) -> None:
    """Plain http is fine on this machine (nothing crosses a network); to any other host it
    carries requests and credentials in clear text: say so, once per connect()."""
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
    log.warning(
        "connecting to %s over plain http: requests and any credentials travel unencrypted; "
        "use https for a server that is not on this machine", parts.hostname,
    )
