"""The transport boundary: move one JSON-RPC message each way, and nothing else."""

from __future__ import annotations

import abc
import json
from typing import Any, ClassVar

from .._exceptions import ProtocolError

__all__ = ["Transport", "decode_message", "encode_message"]


class Transport(abc.ABC):
    """Moves JSON-RPC messages between a ``Client`` and one server.

    A transport is used by exactly one reader thread (``receive``) and by writers (``send``).
    Unless ``self_serializing`` is true, the client calls ``send`` from one thread at a time;
    a transport that sets it must accept concurrent ``send`` calls (HTTP does).

    Implement three methods:

    - ``send(message, timeout=None)``: deliver one message (a JSON-able ``dict``). Should not
      block past ``timeout`` seconds when given. Raise ``TransportError`` (or
      ``ConnectionClosed``) on failure.
    - ``receive()``: block until the next message arrives and return it decoded (a ``dict``,
      or a ``list`` for a JSON-RPC batch). Raise ``ProtocolError`` for one malformed message
      (the client logs and skips it) and ``ConnectionClosed`` when no more can come.
    - ``close()``: release everything; it must unblock a thread waiting in ``receive`` and must
      be safe to call more than once.

    Optionally ``abandon(request_id)``: the caller gave up on that request (cancelled); a
    transport whose ``send`` may still be blocked on it ends that work. Called from another
    thread; must not block. The default does nothing.
    """

    self_serializing: ClassVar[bool] = False

    @abc.abstractmethod
    def send(self, message: dict[str, Any], *, timeout: float | None = None) -> None:
        """Deliver one JSON-RPC message to the server."""

    @abc.abstractmethod
    def receive(self) -> Any:
        """Return the next decoded message from the server."""

    def abandon(self, request_id: Any) -> None:
        """The request ``request_id`` was cancelled: stop any work in flight for it."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection; unblock ``receive``; idempotent."""

    def reopen(self) -> Transport | None:
        """A new, unused transport to the same server, or None if this kind cannot make one.

        The client calls it when the era probe's ``server/discover`` ended the connection (old
        servers exit on an unknown method), to go straight to ``initialize`` on a fresh one.
        The default is None: the error is raised as it is.
        """
        return None

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_message(message: Any) -> bytes:
    """Serialize one message as compact UTF-8 JSON (no trailing newline)."""
    return _encoder.encode(message).encode("utf-8")


def decode_message(data: bytes | str) -> Any:
    """Parse one message; a bad one raises ``ProtocolError`` with an excerpt of it."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        excerpt = data[:120]
        raise ProtocolError(f"the server sent invalid JSON ({exc}): {excerpt!r}") from exc
