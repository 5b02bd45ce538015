"""Tokens, client registrations, and where they are kept between runs (token stores).

A store keeps one JSON-able record per MCP server (keyed by its canonical URL): the current
tokens and the client registrations per authorization server issuer. ``MemoryTokenStore``
forgets on exit; ``FileTokenStore`` writes one file per server, mode 0600, atomically. To keep
them elsewhere (a keyring, a database), subclass ``TokenStore`` and implement three methods.
"""

from __future__ import annotations

import abc
import copy
import hashlib
import json
import logging
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

from attrs import define, field

from .._core.files import UnsafeDirectory, check_private_directory, write_private
from ._errors import AuthorizationError

__all__ = ["ClientInfo", "FileTokenStore", "MemoryTokenStore", "TokenStore", "Tokens"]

log = logging.getLogger(__name__)


def _redacted(value: str | None) -> str:
    return "None" if value is None else "'***'"


@define(kw_only=True, repr=False)
class Tokens:
    """An access token and what came with it; the repr never shows a token."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None
    issuer: str | None = None
    resource: str | None = None

    def __repr__(self) -> str:
        left = "unknown" if self.expires_at is None else f"{self.expires_at - time.time():.0f}s"
        return (
            f"Tokens(token_type={self.token_type!r}, access_token='***', refresh_token={_redacted(self.refresh_token)}, "
            f"expires_in={left}, scope={self.scope!r}, issuer={self.issuer!r})"
        )

    def expires_within(self, seconds: float) -> bool:
        return self.expires_at is not None and self.expires_at - time.time() <= seconds

    @property
    def scopes(self) -> list[str]:
        return (self.scope or "").split()

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in {
            "access_token": self.access_token, "token_type": self.token_type, "refresh_token": self.refresh_token,
            "expires_at": self.expires_at, "scope": self.scope, "issuer": self.issuer, "resource": self.resource,
        }.items() if v is not None}

    @classmethod
    def from_json(cls, data: Any) -> Tokens | None:
        if not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
            return None
        expires = data.get("expires_at")
        return cls(
            access_token=data["access_token"],
            token_type=str(data.get("token_type") or "Bearer"),
            refresh_token=data.get("refresh_token") if isinstance(data.get("refresh_token"), str) else None,
            expires_at=float(expires) if isinstance(expires, (int, float)) else None,
            scope=data.get("scope") if isinstance(data.get("scope"), str) else None,
            issuer=data.get("issuer") if isinstance(data.get("issuer"), str) else None,
            resource=data.get("resource") if isinstance(data.get("resource"), str) else None,
        )


@define(kw_only=True, repr=False)
class ClientInfo:
    """A client ID at one authorization server (``issuer``) and how to authenticate with it.

    ``source`` is ``"pre-registered"``, ``"metadata-document"`` or ``"dynamic"``.
    """

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str = "none"
    redirect_uris: list[str] = field(factory=list)
    issuer: str | None = None
    source: str = "dynamic"
    secret_expires_at: float | None = None

    def __repr__(self) -> str:
        return (
            f"ClientInfo(client_id={self.client_id!r}, client_secret={_redacted(self.client_secret)}, "
            f"method={self.token_endpoint_auth_method!r}, issuer={self.issuer!r}, source={self.source!r})"
        )

    def expired(self) -> bool:
        return bool(self.secret_expires_at) and self.secret_expires_at <= time.time()  # type: ignore[operator]

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in {
            "client_id": self.client_id, "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.token_endpoint_auth_method, "redirect_uris": self.redirect_uris,
            "issuer": self.issuer, "source": self.source, "secret_expires_at": self.secret_expires_at,
        }.items() if v is not None}

    @classmethod
    def from_json(cls, data: Any) -> ClientInfo | None:
        if not isinstance(data, dict) or not isinstance(data.get("client_id"), str):
            return None
        uris = data.get("redirect_uris")
        expires = data.get("secret_expires_at")
        return cls(
            client_id=data["client_id"],
            client_secret=data.get("client_secret") if isinstance(data.get("client_secret"), str) else None,
            token_endpoint_auth_method=str(data.get("token_endpoint_auth_method") or "none"),
            redirect_uris=[u for u in uris if isinstance(u, str)] if isinstance(uris, list) else [],
            issuer=data.get("issuer") if isinstance(data.get("issuer"), str) else None,
            source=str(data.get("source") or "dynamic"),
            secret_expires_at=float(expires) if isinstance(expires, (int, float)) and expires else None,
        )


class TokenStore(abc.ABC):
    """Keeps one record (a JSON-able ``dict``) per MCP server between runs.

    ``key`` is the server's canonical URL. Records hold refresh tokens and client secrets:
    keep them where only the user can read them. Implementations must be thread-safe.
    """

    @abc.abstractmethod
    def load(self, key: str) -> dict[str, Any] | None:
        """The record saved for ``key``, or None."""

    @abc.abstractmethod
    def save(self, key: str, record: dict[str, Any]) -> None:
        """Replace the record for ``key``."""

    @abc.abstractmethod
    def delete(self, key: str) -> None:
        """Forget ``key`` (logging out); no error if unknown."""


class MemoryTokenStore(TokenStore):
    """Records in memory, for one process; the default."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<MemoryTokenStore {len(self._records)} server(s)>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled empty: the records are this process's, and tokens never travel."""
        return (MemoryTokenStore, ())

    def load(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            record = self._records.get(key)
            return copy.deepcopy(record) if record is not None else None

    def save(self, key: str, record: dict[str, Any]) -> None:
        with self._lock:
            self._records[key] = copy.deepcopy(record)

    def delete(self, key: str) -> None:
        with self._lock:
            self._records.pop(key, None)


def default_directory() -> Path:
    """``$XDG_STATE_HOME/mcpclient/oauth`` (``~/.local/state/mcpclient/oauth``), or under
    ``%LOCALAPPDATA%`` on Windows."""
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "mcpclient" / "oauth"
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "mcpclient" / "oauth"


def check_directory(directory: Path) -> bool:
    """Whether ``directory`` exists and is safe to keep tokens in; raise ``AuthorizationError`` if not.

    Another user who can write to the directory can swap a record for theirs (their own
    authorization server, their client) or plant a symlink; a symlinked directory may be
    somewhere else entirely. So on POSIX a symlink, or a directory owned by someone else, is
    refused, and a group- or world-writable directory of the user's own is repaired to 0700
    with a warning (``check_private_directory``). Elsewhere (no ``os.getuid``) a symlink is
    refused and existence checked.
    """
    try:
        repaired = check_private_directory(directory, "token directory", closed=stat.S_IWGRP | stat.S_IWOTH)
    except UnsafeDirectory as exc:
        raise AuthorizationError(str(exc)) from exc
    except OSError as exc:
        raise AuthorizationError(f"cannot use the token directory {directory}: {exc.strerror or exc}") from exc
    if repaired:
        log.warning("the token directory %s was writable by other users; its mode is now 0700", directory)
    return repaired is not None


class FileTokenStore(TokenStore):
    """One JSON file per server in ``directory`` (created mode 0700), each mode 0600.

    Writes go to a temporary file in the same directory, are flushed to disk, then renamed
    over the old file, so a crash never leaves half a record. A file that other users can
    read is refused (with a warning) rather than trusted. The directory is checked before
    every use (``check_directory``): a symlink or another user's directory raises
    ``AuthorizationError``; one of the user's own that others can write to is made 0700.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_directory()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<FileTokenStore {str(self.directory)!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its directory: a process that receives it reads the records kept there."""
        return (FileTokenStore, (self.directory,))

    def path_for(self, key: str) -> Path:
        """The file of ``key``: a hash of the URL, so the name leaks nothing and is always valid."""
        return self.directory / (hashlib.sha256(key.encode("utf-8")).hexdigest()[:32] + ".json")

    def load(self, key: str) -> dict[str, Any] | None:
        path = self.path_for(key)
        with self._lock:
            if not check_directory(self.directory):
                return None
            try:
                with open(path, "rb") as fh:
                    mode = os.fstat(fh.fileno()).st_mode
                    if os.name != "nt" and mode & (stat.S_IRWXG | stat.S_IRWXO):
                        log.warning("ignoring %s: it is readable by other users (chmod 600 it to use it)", path)
                        return None
                    data = json.load(fh)
            except FileNotFoundError:
                return None
            except (OSError, ValueError) as exc:
                log.warning("ignoring unreadable token file %s: %s", path, type(exc).__name__)
                return None
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        record = data.get("record")
        return record if isinstance(record, dict) else None

    def save(self, key: str, record: dict[str, Any]) -> None:
        path = self.path_for(key)
        payload = json.dumps({"key": key, "record": record}, indent=1).encode("utf-8")
        with self._lock:
            if not check_directory(self.directory):
                self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
                check_directory(self.directory)  # created meanwhile by someone else: checked all the same
            write_private(path, payload)

    def delete(self, key: str) -> None:
        with self._lock:
            if not check_directory(self.directory):
                return
            try:
                os.unlink(self.path_for(key))
            except FileNotFoundError:
                pass
