"""The secrets a transport or an OAuth flow sent, and their removal from what servers say back.

A server that echoes a request into an error body, a JSON-RPC error, a log message or a
token endpoint's ``error_description`` would otherwise put the caller's credentials in an
exception message or a log line. One ``Redactor`` holds every secret its owner sent (what
the owner's ``Credentials`` entered: the fixed ones for good, tokens as they are attached,
bounded to the most recent ones) and replaces each one, in every form a server is likely to
echo it in, with ``[redacted]``:

- as is;
- base64, standard and URL-safe, with and without padding, and at any of the three byte
  alignments (so the secret is found inside the base64 of a longer text, such as a whole
  ``Authorization: Bearer ...`` line);
- percent-encoded (upper and lower case hex, ``quote`` and ``quote_plus``).

For HTTP Basic credentials the ``user:password`` pair and the password alone are secrets
too. The longest form is replaced first, so a whole header value goes before its parts.
Secrets shorter than ``MIN_SECRET`` characters are not kept: redacting every ``ab`` in a
text would hide the text, not a credential.

``scrub`` does the same to an exception of ours in place, down its chain: its message, its
attributes, and the foreign exceptions it was raised from (a ``requests`` error quoting a
status line or a chunk header): one of those whose text shows a secret is cut off the chain.

Nothing here recurses over server data (see ``_bounded``): a value nested deeper than
``_bounded.MAX_DEPTH`` is replaced, not walked.

Thread-safe: ``add`` may race ``redact`` from any thread; a redaction uses the patterns as
they were when it started.
"""

from __future__ import annotations

import base64
import binascii
import collections
import re
import threading
from types import TracebackType
from typing import Any, Iterable, Literal, TypeVar

from . import bounded as _bounded
from .exceptions import MCPError

__all__ = ["MIN_SECRET", "REDACTED", "Redactor", "credential_secrets"]

E = TypeVar("E", bound=BaseException)

REDACTED = "[redacted]"
#: Secrets shorter than this are not kept.
MIN_SECRET = 6
#: Secrets kept besides the permanent ones (the most recent tokens of a rotating provider).
RECENT = 16
#: Links of an exception chain looked at by ``scrub``.
MAX_CHAIN = 32


class Redactor:
    """The set of secrets one transport or OAuth flow knows, and ``redact`` to remove them."""

    def __init__(self, recent: int = RECENT) -> None:
        self._lock = threading.Lock()
        self._permanent: dict[str, None] = {}
        self._recent: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._limit = recent
        self._pattern: re.Pattern[str] | None = None

    def __repr__(self) -> str:  # never the secrets, nor their number's worth of hints
        return "<Redactor>"

    def add(self, *secrets: str | None, permanent: bool = False) -> None:
        """Remember ``secrets`` (None and short ones are ignored); cheap when already known."""
        fresh = [s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET]
        if not fresh or all(s in self._permanent or s in self._recent for s in fresh):
            return
        with self._lock:
            for secret in fresh:
                if permanent:
                    self._permanent[secret] = None
                    self._recent.pop(secret, None)
                elif secret not in self._permanent:
                    self._recent[secret] = None
                    self._recent.move_to_end(secret)
            while len(self._recent) > self._limit:
                self._recent.popitem(last=False)
            forms: set[str] = set()
            for secret in (*self._permanent, *self._recent):
                forms.update(_forms(secret))
            ordered = sorted(forms, key=lambda form: (-len(form), form))
            self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def redact(self, text: str) -> str:
        """``text`` with every known secret, in every form, replaced by ``[redacted]``."""
        pattern = self._pattern
        if pattern is None or not text:
            return text
        return pattern.sub(REDACTED, text)

    def redact_value(self, value: Any) -> Any:
        """A copy of a decoded JSON value with every string (keys too) redacted.

        Walked with an explicit stack: a container nested deeper than ``_bounded.MAX_DEPTH``
        is replaced by ``_bounded.TOO_DEEP``.
        """
        pattern = self._pattern
        if pattern is None:
            return value
        return _bounded.map_strings(value, lambda text: pattern.sub(REDACTED, text) if text else text)

    def redact_message(self, message: Any) -> Any:
        """A JSON-RPC message as received, with what could end up in an error or a log redacted.

        Error replies (``error.message``, ``error.data``), malformed messages and log
        notifications are redacted. A good reply's ``result`` and the server's requests and
        other notifications are not: they are the data the user asked for or handles, and
        rewriting them would corrupt it. A batch (a list) is one level deep: a list inside it
        is a malformed message, redacted whole.
        """
        if self._pattern is None:
            return message
        if isinstance(message, list):
            return [self._redact_one(item) if isinstance(item, dict) else self.redact_value(item) for item in message]
        return self._redact_one(message)

    def _redact_one(self, message: Any) -> Any:
        if not isinstance(message, dict):
            return self.redact_value(message)
        method = message.get("method")
        if isinstance(method, str):
            if method == "notifications/message":
                return {**message, "params": self.redact_value(message.get("params"))}
            return message
        if "error" not in message and isinstance(message.get("result"), dict):
            return message
        return self.redact_value(message)

    def excerpt(self, value: Any, limit: int = 200) -> str:
        """A redacted ``repr`` of a server value, cut at ``limit`` after redaction (``_bounded``)."""
        return _cut(self.redact(_bounded.excerpt(value, limit + _MARGIN)), limit)

    def scrub(self, error: E) -> E:
        """Remove every known secret from ``error`` in place, down its chain; returns it.

        Each exception of ours in the chain (``__cause__`` and ``__context__`` alike) gets its
        ``args`` and its text and JSON attributes (``body``, ``data``, ``reason``...) redacted.
        A foreign exception whose text shows a secret is cut off the chain (``__cause__`` or
        ``__context__`` set to None, and the context suppressed): it cannot be rewritten.
        """
        if self._pattern is None:
            return error
        seen: set[int] = set()
        stack: list[BaseException] = [error]
        while stack and len(seen) < MAX_CHAIN:
            current = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if isinstance(current, MCPError):
                self._scrub_fields(current)
            cause, context = current.__cause__, current.__context__
            if cause is not None:
                if isinstance(cause, MCPError) or not self._shows_secret(cause):
                    stack.append(cause)
                else:
                    current.__cause__ = None
                    current.__suppress_context__ = True
            if context is not None:
                if isinstance(context, MCPError) or not self._shows_secret(context):
                    stack.append(context)
                else:
                    current.__context__ = None
                    current.__suppress_context__ = True
        return error

    def scrubbing(self) -> _Scrubbing:
        """A context manager that ``scrub``s the ``MCPError`` leaving its block (then re-raised)."""
        return _Scrubbing(self)

    def _scrub_fields(self, error: MCPError) -> None:
        error.args = tuple(self._redact_any(arg) for arg in error.args)
        for name, value in list(vars(error).items()):
            if isinstance(value, (str, dict, list)):
                setattr(error, name, self._redact_any(value))

    def _redact_any(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, (dict, list)):
            return self.redact_value(value)
        return value

    def _shows_secret(self, error: BaseException) -> bool:
        """Whether the text of a foreign exception (str, repr, args) holds a known secret."""
        try:
            texts = [str(error), repr(error), *(_bounded.excerpt(arg, 4096) for arg in error.args)]
        except Exception:  # noqa: BLE001 - an exception whose text cannot be read is not shown either
            return True
        return any(self.redact(text) != text for text in texts)


class _Scrubbing:
    __slots__ = ("_redactor",)

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> Literal[False]:
        if isinstance(error, MCPError):
            self._redactor.scrub(error)
        return False


#: Characters of an excerpt kept past its limit until redaction: a secret cut by the limit
#: must still be whole when it is looked for.
_MARGIN = 4096


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def credential_secrets(value: str | None) -> list[str]:
    """The secrets in one credential header value: itself, its credential, Basic's parts."""
    if not isinstance(value, str) or not value.strip():
        return []
    value = value.strip()
    found = [value]
    scheme, _, credential = value.partition(" ")
    credential = credential.strip()
    if credential:
        found.append(credential)
        if scheme.lower() == "basic":
            found.extend(_basic_parts(credential))
    return found


def _basic_parts(credential: str) -> list[str]:
    from urllib.parse import unquote  # here: it costs import time (issue #45)

    try:
        pair = base64.b64decode(credential, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return []
    user, colon, password = pair.partition(":")
    parts = [pair]
    if colon and password:
        parts.append(password)
        decoded = unquote(password)  # client_secret_basic form-encodes both parts first
        if decoded != password:
            parts.extend([f"{unquote(user)}:{decoded}", decoded])
    return parts


def _forms(secret: str) -> Iterable[str]:
    from urllib.parse import quote, quote_plus  # here: it costs import time (issue #45)

    yield secret
    raw = secret.encode("utf-8")
    for encoded in (quote(secret, safe=""), quote(secret), quote_plus(secret)):
        yield encoded
        yield re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)
    for offset in range(3):
        # The base64 of ``raw`` when it starts ``offset`` bytes into a longer text: keep the
        # characters made of its bits alone.
        full = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        start = -(-8 * offset // 6)
        end = (8 * (offset + len(raw))) // 6
        core = full[start:end]
        if offset == 0:
            yield full
            yield full.rstrip("=")
            yield full.replace("+", "-").replace("/", "_")
            yield full.replace("+", "-").replace("/", "_").rstrip("=")
        if len(core) >= MIN_SECRET:
            yield core
            yield core.replace("+", "-").replace("/", "_")
