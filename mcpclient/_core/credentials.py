"""One account of the credentials a client sends, on every channel, and of whom its results belong to.

A transport makes one ``Credentials`` when it is made and enters every channel it sends
credentials on:

- each header it sends with every request (``header``): all the user gave, since which of
  them carries a credential only the server knows; a value's credential after its scheme and,
  for HTTP Basic, the ``user:password`` pair and the password count too;
- the URL (``url``): its user info as the ``user:password`` pair, the password (or a user
  name alone), and the Basic header value they become; and each value of its query
  (``?api_key=...``);
- an HTTP Basic pair (``basic``: ``auth=("user", "pw")``, a ``.netrc`` entry);
- each value of a stdio server's added environment (``env``);
- the cookies of a session the user lent (``cookie``);
- a channel whose values are known only as they are sent (``changing``: a token provider, an
  auth object): each value it sends is entered as it goes (``sent``, ``sent_header``), the
  most recent ones kept.

Everything that must know the client's credentials asks this one object: the ``Redactor``
(``redactor``) over every secret above, in every form a server may echo it in; whether a
request carries any credential (``sends``, ``carries``); and whom a private result belongs to
(``owner``, ``identity``), as a digest that names the credentials without holding them. No
other list of secrets exists in mcpclient.

Thread-safe: entering a sent value may race any question (see ``Redactor``).
"""

from __future__ import annotations

import base64
import json
import threading
from typing import Iterable, Mapping

from .redact import Redactor, credential_secrets

__all__ = ["ANONYMOUS", "PROTOCOL_HEADER", "Credentials"]

#: The owner of what a request without any credential and without a partition fetched: one
#: for every such client of a server (they all see the same answers).
ANONYMOUS = "anonymous"
#: The prefix of the MCP protocol's own headers (``MCP-Protocol-Version``, ``Mcp-Method``,
#: ``Mcp-Name``, ``Mcp-Param-*``, ``Mcp-Session-Id``), which say what a message is, not who sent it.
PROTOCOL_HEADER = "mcp-"
#: Owners remembered per account (``Credentials.owner``: a partition and a request's own
#: credential headers each make another); past this many, the memory starts again.
OWNERS_KEPT = 256


def _digest(value: object) -> str:
    import hashlib  # here: a client that never asks whose its calls are does not load it (issue #45)

    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Credentials:
    """What one client sends as credentials, channel by channel (see the module's docstring).

    Build it with the channel methods when the transport is made (``for_stdio``, or the HTTP
    transports' ``credentials_for``), then ask it. ``repr`` never shows a secret.
    """

    def __init__(self) -> None:
        #: Every secret entered, in every form: for every text a server chose.
        self.redactor = Redactor()
        self._fixed: list[tuple[str, str, str]] = []
        self._changing: list[str] = []
        self._lock = threading.Lock()
        self._identity: str | None = None
        self._owners: dict[tuple[str | None, tuple[tuple[str, str], ...]], str] = {}  # owner() as computed

    def __repr__(self) -> str:
        channels = sorted({channel for channel, _, _ in self._fixed} | set(self._changing))
        return f"<Credentials {', '.join(channels) or 'none'}>"

    # -- the channels, entered when the transport is made --------------------------------------

    def _fix(self, channel: str, name: str, value: str, secrets: Iterable[str]) -> None:
        with self._lock:
            self._fixed.append((channel, name, value))
            self._identity = None
            self._owners.clear()
        self.redactor.add(*secrets, permanent=True)

    def header(self, name: str, value: str | bytes) -> None:
        """A header sent with every request."""
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        self._fix("header", name.lower(), text, credential_secrets(text))

    def headers(self, headers: Mapping[str, str | bytes] | None) -> None:
        """Each of ``headers`` (``header``)."""
        for name, value in (headers or {}).items():
            self.header(name, value)

    def url(self, url: str) -> None:
        """The credentials a URL carries: its user info and each value of its query."""
        from urllib.parse import unquote, unquote_plus, urlsplit  # here: it costs import time (issue #45)

        parts = urlsplit(url)
        if parts.username is not None or parts.password is not None:
            user, password = unquote(parts.username or ""), unquote(parts.password or "")
            pair = f"{user}:{password}"
            raw = parts.netloc.rpartition("@")[0]
            secrets = [pair, raw, password, parts.password or "", *self._basic_forms(user, password)]
            if not password:
                secrets.append(user)  # a key given as the user name alone
            self._fix("url-user", "", pair, secrets)
        for item in parts.query.split("&") if parts.query else ():
            name, equals, value = item.partition("=")
            raw = value if equals else name  # ``?KEY`` alone: the key is the value
            decoded = unquote_plus(raw)
            self._fix("url-query", unquote_plus(name) if equals else "", decoded, [decoded, raw])

    def basic(self, user: str | bytes, password: str | bytes) -> None:
        """An HTTP Basic pair (an ``auth`` tuple, a ``.netrc`` entry)."""
        user_text = user.decode("utf-8", "replace") if isinstance(user, bytes) else str(user)
        password_text = password.decode("utf-8", "replace") if isinstance(password, bytes) else str(password)
        pair = f"{user_text}:{password_text}"
        self._fix("basic", "", pair, [pair, password_text, *self._basic_forms(user_text, password_text)])

    def env(self, env: Mapping[str, str] | Iterable[str] | None) -> None:
        """Each value of a stdio server's added environment (a mapping, or ``NAME=value`` items)."""
        items = env.items() if isinstance(env, Mapping) else (str(item).partition("=")[::2] for item in env or ())
        for name, value in items:
            self._fix("env", str(name), str(value), [str(value)])

    def cookie(self, name: str, value: str) -> None:
        """A cookie of a session the user lent, sent to the server."""
        self._fix("cookie", name, value, [value])

    def changing(self, what: str) -> None:
        """A channel whose values are known only as they are sent (``what`` names it: "a token
        provider", "an auth object"): who the client is cannot be told before a request."""
        with self._lock:
            self._changing.append(what)
            self._owners.clear()

    def hide(self, *secrets: str) -> None:
        """Values to redact that are on no channel (a recording's ``secrets=``): they name nobody."""
        self.redactor.add(*secrets, permanent=True)

    @staticmethod
    def _basic_forms(user: str, password: str) -> list[str]:
        pair = f"{user}:{password}".encode()
        return credential_secrets("Basic " + base64.b64encode(pair).decode("ascii"))

    # -- as requests go --------------------------------------------------------------------------

    def sent(self, *values: str | None) -> None:
        """Values a changing channel just sent (a token): redacted from then on, the most recent kept."""
        self.redactor.add(*values)

    def sent_header(self, value: str | bytes | None) -> None:
        """A credential header's value a changing channel just sent (``sent`` of its parts)."""
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        self.redactor.add(*credential_secrets(text))

    # -- the questions -----------------------------------------------------------------------------

    @property
    def sends(self) -> bool:
        """Whether any channel carries a credential."""
        return bool(self._fixed or self._changing)

    @staticmethod
    def carried(headers: Mapping[str, str] | None) -> list[tuple[str, str]]:
        """The credentials among one request's own headers (a middleware's ``with_headers``):
        all but the protocol's (``PROTOCOL_HEADER``), as sorted (lowercased name, value) pairs."""
        if not headers:
            return []
        return sorted((str(name).lower(), str(value)) for name, value in headers.items()
                      if not str(name).lower().startswith(PROTOCOL_HEADER))

    def carries(self, headers: Mapping[str, str] | None = None) -> bool:
        """Whether a request with its own ``headers`` carries any credential, on any channel."""
        return self.sends or bool(self.carried(headers))

    @property
    def identity(self) -> str | None:
        """A digest naming whom these credentials make the client, the same in every process.

        None when the client sends none, or when a channel's values are known only as they
        are sent (``changing``): then who it is cannot be told before a request. Two clients
        have the same identity when they send the same credentials on the same channels.
        """
        if self._changing or not self._fixed:
            return None
        return self._fixed_digest()

    def _fixed_digest(self) -> str:
        identity = self._identity
        if identity is None:
            with self._lock:
                identity = self._identity = _digest(sorted(self._fixed))
        return identity

    def owner(self, partition: str | None = None, headers: Mapping[str, str] | None = None) -> str | None:
        """Whom a private result of one request belongs to: a digest of the ``partition``
        (a ``Partition.scope``, the user's word for the authorization context), the fixed
        credentials and the request's own credential headers.

        ``ANONYMOUS`` when the request carries no credential and there is no partition; None
        when it cannot be told (a changing channel and no partition): nothing private may
        then be kept or served.
        """
        carried = self.carried(headers)
        if partition is None:
            if self._changing:
                return None
            if not self._fixed and not carried:
                return ANONYMOUS
        key = (partition, tuple(carried))
        owner = self._owners.get(key)
        if owner is None:
            fixed = self._fixed_digest() if self._fixed else None
            owner = _digest({"partition": partition, "fixed": fixed, "changing": sorted(self._changing),
                             "request": carried})
            with self._lock:
                if len(self._owners) >= OWNERS_KEPT:
                    self._owners.clear()
                self._owners[key] = owner
        return owner

    # -- how transports make one ------------------------------------------------------------------

    @classmethod
    def for_stdio(cls, env: Mapping[str, str] | Iterable[str] | None = None) -> Credentials:
        """A stdio server's: each value of the environment added for it."""
        credentials = cls()
        credentials.env(env)
        return credentials

    @classmethod
    def unknown(cls, what: str = "a transport that does not say what it sends") -> Credentials:
        """A transport's that does not say: it may send anything, so it counts as a changing channel."""
        credentials = cls()
        credentials.changing(what)
        return credentials
