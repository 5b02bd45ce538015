"""What a client is opened with, in four groups, as httpx groups ``Timeout`` and ``Limits``.

    >>> connect(url, http=HTTP(headers={"Authorization": "Bearer ..."}), plugins=Plugins(cache=True))

``Handlers`` answer what the server asks; ``Plugins`` switch on the built-in plug-ins;
``HTTP`` configures a URL's transport and ``Stdio`` a command's. Each is a small frozen,
keyword-only attrs class, documented here once: ``connect``, ``Client``, ``SharedClient``,
``ClientGroup`` and ``SharedGroup`` take the same groups (``Client`` takes ``handlers`` and
``plugins``: it is given its transport made).

The flat keywords of the release before (``connect(headers=...)``, ``Client(cache=True)``)
still work for this release, as spellings of the groups: ``respell`` moves each into its
group's field, with a ``DeprecationWarning`` that names the user's line.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any, Callable, Collection, Mapping, Sequence

import attrs

from .. import types as t
from .._core.call_checks import first_frame_outside
from ..transports.stdio import _DEFAULT_STDERR

if TYPE_CHECKING:
    import requests

    from ..cache import CacheStore, PartitionOption

__all__ = ["GROUPS", "HTTP", "NO_HANDLERS", "NO_PLUGINS", "OLD_KEYWORDS", "Handlers", "Plugins", "Stdio", "respell"]


def _names_only(values: Any) -> str:
    """The repr of headers and an environment: their names, never their values (often tokens)."""
    if isinstance(values, Mapping):
        return "{" + ", ".join(f"{name!r}: '***'" for name in values) + "}"
    return repr(values)


def _kind(value: Any) -> str:
    """The repr of a credential-bearing object (an auth, a token source, a session): its type."""
    return "None" if value is None else f"<{type(value).__name__}>"


@attrs.frozen(kw_only=True)
class Handlers:
    """What answers the server: installed before the handshake, so their capabilities are declared.

    ``sampling(request, cancel_token)`` answers ``sampling/createMessage`` with a
    ``CreateMessageResult`` (``sampling_tools=True`` declares that it takes requests with
    ``tools``); ``elicitation(request, cancel_token)`` answers ``elicitation/create``
    with an ``ElicitationResult``, in the ``elicitation_modes`` it can do ("form" and/or "url");
    ``roots`` (file:// URIs or ``Root``) answer ``roots/list``; ``notification(method, params)``
    sees every notification. Each runs on a dispatch thread. None: not answered (sampling gets
    -32601, elicitation is declined). The setters (``Client.set_sampling_handler``...) change
    them later. See docs/handlers.md.

    ``pending_key`` (bytes or text, 16 bytes at least; its repr is hidden) signs the JSON of a
    ``PendingInput`` (``call_tool(on_input="return")``: a question the server asks a person,
    answered later with ``Client.resume``), so that another process of the app may resume it
    and a tampered or foreign one is refused. Keep it secret, the same in every worker (a
    Django ``SECRET_KEY``-like setting). Without it ``PendingInput.to_json()`` raises.
    ``pending_expiry`` is how many seconds a ``PendingInput`` may be resumed (15 minutes).
    """

    sampling: Callable[..., Any] | None = None
    sampling_tools: bool = False
    elicitation: Callable[..., Any] | None = None
    elicitation_modes: Sequence[str] = ("form",)
    roots: Sequence[t.Root | str] | None = None
    notification: Callable[[str, dict[str, Any]], None] | None = None
    pending_key: bytes | str | None = attrs.field(default=None, repr=lambda key: "None" if key is None else "'***'")
    pending_expiry: float = 900.0


@attrs.frozen(kw_only=True)
class Plugins:
    """The built-in plug-ins a client runs (each an extension of the public seam).

    ``cache=True`` keeps list and read results while they are fresh (``ttlMs``), dropping them
    on change notifications; ``cache=store`` (``mcpclient.cache.FileStore``, ``RedisStore``)
    keeps them there, shared with other workers, with the server's era and discover answer.
    ``cache_partition`` (a ``cache.Partition``, a name, or a function giving one per call) is
    whom private results are kept for; without it they are never kept (docs/extending.md).

    ``output_validation`` checks structured tool output against the tool's ``outputSchema``
    (with the ``jsonschema`` extra): "strict" raises ``OutputValidationError``, "lenient" logs,
    "off" skips. ``apps=True`` adds MCP Apps (``mcpclient.apps``; docs/apps.md).
    ``telemetry`` reports calls with OpenTelemetry: "auto" when ``opentelemetry-api`` is
    installed, ``False`` never, or a ``Telemetry`` (docs/observability.md). ``keepalive=30``
    pings a legacy server every 30 s and ends the connection when one goes unanswered.

    ``policy`` (a ``mcpclient.policy.Policy``) gates every tool call; ``lock`` (a lockfile
    path or a ``Lock``) checks the server's tools against a lockfile, and ``on_change`` says
    what a changed tool gets: "refuse", "warn" or "update" (docs/policy.md).
    """

    cache: bool | CacheStore = False
    cache_partition: PartitionOption = None
    output_validation: str = "strict"
    apps: bool = False
    telemetry: Any = "auto"
    keepalive: float | None = None
    policy: Any = None
    lock: Any = None
    on_change: str = "refuse"


@attrs.frozen(kw_only=True)
class HTTP:
    """How a URL is reached (see ``StreamableHTTPTransport``); its repr shows no credential.

    ``headers`` go with every request (to the server's origin only); ``auth`` is a
    ``requests`` auth (``mcpclient.OAuth``, HTTP Basic...); ``token_provider`` (a function, or
    an object with ``token()``) gives a bearer token, sent in ``auth_header`` (default
    ``Authorization``); ``session`` is a ``requests.Session`` to send through (its proxies,
    ``verify`` and certificates); ``max_retries=N`` spells ``retry=Retry(attempts=N + 1)``
    (give one or the other; a transport made by hand retries inside itself instead).
    ``keep_session=True`` leaves a legacy Streamable HTTP session open on ``close()`` so that
    another client can ``resume`` it (docs/reliability.md). See docs/auth.md.
    """

    headers: Mapping[str, str] | None = attrs.field(default=None, repr=_names_only)
    auth: requests.auth.AuthBase | None = attrs.field(default=None, repr=_kind)
    token_provider: Any = attrs.field(default=None, repr=_kind)
    auth_header: str | None = None
    session: requests.Session | None = attrs.field(default=None, repr=_kind)
    max_retries: int = 0
    keep_session: bool = False


@attrs.frozen(kw_only=True)
class Stdio:
    """How a command is started (see ``StdioTransport``; never through a shell).

    ``env`` is the server's environment: a mapping of variables added to a safe base, or a
    list of names to pass through from this process's; ``cwd`` its directory; ``stderr`` where
    its stderr goes (default: this process's; None discards it; a file or a function of one
    line). Its repr shows the names of ``env``, not the values.
    """

    env: Mapping[str, str] | Sequence[str] | None = attrs.field(default=None, repr=_names_only)
    cwd: str | os.PathLike[str] | None = None
    stderr: Any = attrs.field(default=_DEFAULT_STDERR, repr=lambda sink: "default" if sink is _DEFAULT_STDERR else repr(sink))


#: What a client without ``handlers=`` or ``plugins=`` has: nothing installed, the defaults.
NO_HANDLERS, NO_PLUGINS = Handlers(), Plugins()

#: The groups, by the keyword that takes each.
GROUPS: Mapping[str, type] = {"handlers": Handlers, "plugins": Plugins, "http": HTTP, "stdio": Stdio}

#: The keywords of the release before, and the group field each spells: ``connect(headers=h)``
#: is ``connect(http=HTTP(headers=h))``. They go in the next release.
OLD_KEYWORDS: Mapping[str, tuple[str, str]] = {
    "sampling_handler": ("handlers", "sampling"),
    "elicitation_handler": ("handlers", "elicitation"),
    "elicitation_modes": ("handlers", "elicitation_modes"),
    "roots": ("handlers", "roots"),
    "notification_handler": ("handlers", "notification"),
    **{name: ("plugins", name) for name in attrs.fields_dict(Plugins)},
    **{name: ("http", name) for name in attrs.fields_dict(HTTP)},
    **{name: ("stdio", name) for name in attrs.fields_dict(Stdio)},
}


def respell(where: str, options: Mapping[str, Any], old: Mapping[str, Any],
            groups: Collection[str] = tuple(GROUPS)) -> dict[str, Any]:
    """``options`` with each keyword of ``old`` moved into its field of the group ``options``
    gives (or a new one), with a ``DeprecationWarning`` each, naming the user's line.

    ``where`` names the callee for messages ("connect()"), ``groups`` the groups it takes.
    Raises ``TypeError`` for a keyword that spells none of them, or a field given both ways.
    """
    spelled = dict(options)
    for name, value in old.items():
        group, field = OLD_KEYWORDS.get(name, ("", ""))
        if group not in groups:
            raise TypeError(f"{where} got an unexpected keyword argument {name!r}")
        kind = GROUPS[group]
        warnings.warn(
            f"mcpclient deprecates {where[:-1]}{name}=...): give {group}={kind.__name__}({field}=...) instead; "
            "the old keyword goes in the next release",
            DeprecationWarning, stacklevel=first_frame_outside(),
        )
        current = spelled.get(group) or kind()
        default = attrs.fields_dict(kind)[field].default
        given = getattr(current, field)
        if not (given is default or given == default):
            raise TypeError(f"{where} got {name}= and {group}={kind.__name__}({field}=...): give the group only")
        spelled[group] = attrs.evolve(current, **{field: value})
    return spelled
