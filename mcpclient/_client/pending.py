"""A tool call that waits for a person: the ``PendingInput`` a call with ``on_input="return"``
gives instead of answering the server's questions, and its JSON.

What the server asks is plain data to render (``questions``: forms with their schema, URL
elicitations, sampling, roots). What the client needs to go on is kept beside it, unseen: for a
2026-07-28 server, the server's ``requestState`` and the call to send again with the answers;
for a legacy server, the name of the call held in this process (``holding.Hold``).

Its JSON (``to_json``) is signed with the client's ``Handlers(pending_key=...)``: HMAC-SHA256
over everything else, with the server it was made for and the owner of the client's
credentials (``Credentials.owner``) each entered as an HMAC of the key too, never as they are.
``Client.resume`` checks it before anything is sent: signature, expiry, server, owner, then
(legacy) the process and the hold. No credential is ever in it, nor in its repr.
"""

from __future__ import annotations

import json
import time
import weakref
from typing import Any, Mapping

import attrs

from .._core.exceptions import MCPError, PendingInputRefused

__all__ = ["InputQuestion", "PendingInput", "Binding", "KEY_SETTING", "check_key"]

#: What the JSON says it is, and the version of its form.
KIND, VERSION = "mcpclient.PendingInput", 1
#: How the key is given, as errors name it.
KEY_SETTING = "Handlers(pending_key=...)"
#: The shortest key taken: an HMAC key shorter than this is guessable.
MIN_KEY_BYTES = 16
ERAS = ("modern", "legacy")


def check_key(key: bytes | str | None) -> bytes | None:
    """``key`` as bytes (None stays None); ``ValueError`` for one too short, ``TypeError`` for another type."""
    if key is None:
        return None
    if isinstance(key, str):
        key = key.encode()
    if not isinstance(key, bytes):
        raise TypeError(f"pending_key takes bytes or a string, got {type(key).__name__}")
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"pending_key must have {MIN_KEY_BYTES} bytes at least (a random secret), got {len(key)}")
    return key


@attrs.frozen(kw_only=True)
class InputQuestion:
    """One thing the server asks, as plain data: ``kind`` is "form", "url", "sampling", "roots"
    or "other" (a request of an extension's); ``method`` and ``params`` are the server's
    request as sent (render ``message`` and ``schema`` as text: they are the server's).
    ``key`` names it in the answers (``resume(pending, {key: answer})``)."""

    key: str
    method: str
    params: Mapping[str, Any]

    @property
    def kind(self) -> str:
        if self.method == "elicitation/create":
            return "url" if self.params.get("mode") == "url" else "form"
        return {"sampling/createMessage": "sampling", "roots/list": "roots"}.get(self.method, "other")

    @property
    def message(self) -> str:
        """The server's message to the person ("" when none): text, never markup."""
        message = self.params.get("message")
        return message if isinstance(message, str) else ""

    @property
    def schema(self) -> Mapping[str, Any]:
        """A form's ``requestedSchema`` ({} for other kinds)."""
        schema = self.params.get("requestedSchema")
        return schema if isinstance(schema, dict) else {}

    @property
    def url(self) -> str | None:
        """A URL elicitation's URL (None for other kinds); check it before showing it."""
        url = self.params.get("url")
        return url if isinstance(url, str) and self.kind == "url" else None


@attrs.frozen
class Binding:
    """Whom and what a pending input is for: the server's identity and the credentials' owner
    (``Credentials.owner``), as this process knows them (None: cannot be told)."""

    server: str | None
    owner: str | None


class PendingInput:
    """A tool call that waits for a person's answers (``call_tool(..., on_input="return")``).

    ``questions`` maps each key to an ``InputQuestion`` to render; ``Client.resume(pending,
    answers)`` goes on with the answers and returns the result, or another ``PendingInput``
    when the server asks again. ``name`` and ``arguments`` are the call's; ``era`` is
    "modern" (a 2026-07-28 server: the state travels, another process may resume it) or
    "legacy" (the call is held open in this process: only this client can resume it);
    ``expires_at`` (``time.time()``) is when it can no longer be resumed.

    ``to_json()`` gives text to keep (a Django session, a database row), signed with the
    client's ``Handlers(pending_key=...)``; ``PendingInput.from_json(text)`` reads it back,
    and ``resume`` checks it before sending anything (``PendingInputRefused``).
    """

    __slots__ = ("era", "method", "name", "arguments", "questions", "expires_at", "rounds", "meta",
                 "request_state", "binding", "hold_id", "process", "hold", "_key", "_mac", "_sealed", "_maker")

    def __init__(
        self, *, era: str, name: str, arguments: Mapping[str, Any], questions: Mapping[str, InputQuestion],
        expires_at: float, rounds: int, meta: Mapping[str, Any] | None = None, request_state: str | None = None,
        binding: Binding | None = None, hold_id: str | None = None, process: str | None = None,
        key: bytes | None = None, method: str = "tools/call", maker: object | None = None, hold: Any = None,
    ) -> None:
        self.era = era
        self.method = method
        self.name = name
        self.arguments = dict(arguments)
        self.questions = dict(questions)
        self.expires_at = expires_at
        self.rounds = rounds
        self.meta = dict(meta) if meta else None
        #: The server's ``requestState`` (modern era), sent back as it came.
        self.request_state = request_state
        #: What this process knew of the server and the owner when it was made (None once read from JSON).
        self.binding = binding
        #: The legacy hold's name and the process it lives in.
        self.hold_id = hold_id
        self.process = process
        #: The legacy hold itself, in the process that made it (None once read from JSON).
        self.hold = hold
        self._key = key
        #: Read from JSON: the signature and the signed fields, checked by ``resume``.
        self._mac: str | None = None
        self._sealed: dict[str, Any] | None = None
        #: What made it, in this process (a client's handlers), without keeping it alive.
        self._maker = None if maker is None else weakref.ref(maker)

    def made_by(self, maker: object) -> bool:
        """Whether ``maker`` made this, in memory (never one read from JSON)."""
        return self._sealed is None and self._maker is not None and self._maker() is maker

    def __repr__(self) -> str:
        left = self.expires_at - time.time()
        return (f"<PendingInput {self.era} {self.method} {self.name!r} questions={sorted(self.questions)} "
                f"{'expired' if left <= 0 else f'expires in {left:.0f}s'}>")

    # -- JSON --------------------------------------------------------------------------------

    def to_json(self) -> str:
        """This pending input as signed JSON text (no credential in it).

        Raises ``MCPError`` when the client that made it has no ``Handlers(pending_key=...)``,
        or cannot tell whom its credentials make it (a token provider without a
        ``Plugins(cache=True, cache_partition=...)``) or which server it talks to: such a state could be
        resumed by someone else. A legacy era's JSON says so: only this process resumes it.
        """
        if self._sealed is not None and self._mac is not None:
            return json.dumps({**self._sealed, "mac": self._mac}, sort_keys=True, separators=(",", ":"))
        key = self._key
        if key is None:
            raise MCPError(f"PendingInput.to_json() needs a key to sign the state with: give the client "
                           f"{KEY_SETTING} (the same secret in every worker)")
        binding = self.binding
        if binding is None or binding.server is None:
            raise MCPError("PendingInput.to_json(): the transport does not say which server it talks to, so a "
                           "resume could not be checked against it; resume it in this process, on this client")
        if binding.owner is None:
            raise MCPError("PendingInput.to_json(): this client's credentials change as they are sent (a token "
                           "provider, an auth object), so whom the state belongs to cannot be told: give the client "
                           "Plugins(cache=True, cache_partition=...) naming the user")
        fields = self._fields()
        fields["server"] = tag(key, "server", binding.server)
        fields["owner"] = tag(key, "owner", binding.owner)
        return json.dumps({**fields, "mac": sign(key, fields)}, sort_keys=True, separators=(",", ":"))

    def _fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "kind": KIND, "v": VERSION, "era": self.era, "method": self.method, "name": self.name,
            "arguments": self.arguments, "rounds": self.rounds, "expires": round(self.expires_at, 3),
            "questions": {key: {"method": q.method, "params": dict(q.params)} for key, q in self.questions.items()},
        }
        if self.meta:
            fields["meta"] = self.meta
        if self.request_state is not None:
            fields["requestState"] = self.request_state
        if self.era == "legacy":
            fields["heldIn"] = {"process": self.process, "hold": self.hold_id,
                                "note": "held open in the process that made it: only that process can resume it"}
        return fields

    @classmethod
    def from_json(cls, text: str | bytes) -> PendingInput:
        """Read what ``to_json`` wrote. Its signature is checked by ``Client.resume`` (with the
        client's key), not here; ``PendingInputRefused`` for text that is not a pending input."""
        try:
            data = json.loads(text)
        except (ValueError, TypeError) as exc:
            raise PendingInputRefused(f"not a PendingInput's JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise PendingInputRefused("not a PendingInput's JSON (PendingInput.to_json() writes it)")
        if data.get("v") != VERSION:
            raise PendingInputRefused(f"a PendingInput of another version ({data.get('v')!r}): start the call again")
        mac = data.pop("mac", None)
        try:
            questions = {str(key): InputQuestion(key=str(key), method=str(q["method"]), params=dict(q["params"]))
                         for key, q in dict(data["questions"]).items()}
            held: dict[str, Any] = data["heldIn"] if isinstance(data.get("heldIn"), dict) else {}
            era = data["era"]
            if era not in ERAS:
                raise ValueError(f"era {era!r}")
            pending = cls(
                era=era, method=str(data["method"]), name=str(data["name"]), arguments=dict(data["arguments"]),
                questions=questions, expires_at=float(data["expires"]), rounds=int(data["rounds"]),
                meta=data.get("meta"), request_state=data.get("requestState"),
                hold_id=held.get("hold"), process=held.get("process"),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise PendingInputRefused(f"a malformed PendingInput ({type(exc).__name__}: {exc})") from None
        if not isinstance(mac, str):
            raise PendingInputRefused("a PendingInput without its signature: refused")
        pending._mac, pending._sealed = mac, data
        return pending

    # -- what resume checks ----------------------------------------------------------------------

    def check(self, key: bytes | None, binding: Binding, same_client: bool, process: str) -> None:
        """Raise ``PendingInputRefused`` unless the client whose ``key`` and ``binding`` these
        are may resume this (nothing is sent before): signed by that key, not expired, (legacy)
        held in this ``process``, made for that server and that owner. ``same_client``: the
        client that made it (in memory)."""
        from hmac import compare_digest  # here: a client that never resumes does not load it (issue #45)

        sealed = self._sealed
        if sealed is not None:
            if key is None:
                raise PendingInputRefused(f"this client has no {KEY_SETTING}: it cannot check the PendingInput's "
                                          "signature, so it does not resume it")
            if not compare_digest(sign(key, sealed), self._mac or ""):
                raise PendingInputRefused("the PendingInput's signature does not match: it was changed, or signed "
                                          "with another key; nothing was sent")
        if time.time() >= self.expires_at:
            raise PendingInputRefused("the PendingInput expired (Handlers(pending_expiry=...)); start the call again")
        if self.era == "legacy" and self.process != process:
            raise PendingInputRefused("this PendingInput is a legacy server's call held open in another process (or "
                                      "before a restart): only that process can resume it; nothing was sent")
        if sealed is not None:
            assert key is not None
            if binding.server is None or not compare_digest(sealed.get("server", ""), tag(key, "server", binding.server)):
                raise PendingInputRefused("the PendingInput was made for another server; nothing was sent")
            if binding.owner is None or not compare_digest(sealed.get("owner", ""), tag(key, "owner", binding.owner)):
                raise PendingInputRefused("the PendingInput was made for other credentials (another user); "
                                          "nothing was sent")
            return
        made = self.binding
        if same_client:
            return
        if made is None or made.server is None or made.server != binding.server:
            raise PendingInputRefused("the PendingInput was made by a client of another server; nothing was sent")
        if made.owner is None or made.owner != binding.owner:
            raise PendingInputRefused("the PendingInput was made by a client with other credentials (another user); "
                                      "nothing was sent")


def sign(key: bytes, fields: Mapping[str, Any]) -> str:
    """HMAC-SHA256 of ``fields`` as canonical JSON, in hex."""
    import hashlib
    import hmac

    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def tag(key: bytes, what: str, value: str) -> str:
    """``value`` (a server's identity, an owner) as the JSON holds it: an HMAC, never itself."""
    import hashlib
    import hmac

    return hmac.new(key, f"{what}\0{value}".encode(), hashlib.sha256).hexdigest()
