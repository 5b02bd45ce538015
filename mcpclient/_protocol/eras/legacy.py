"""The legacy MCP era (2024-11-05 to 2025-11-25): the initialize handshake and sessions."""

from __future__ import annotations

import logging
from typing import Any, Mapping

from ... import types as t
from ..._core.exceptions import CapabilityError, ProtocolError
from ..._core.options import CallOptions
from ..wire import unstructure
from .base import Era, HandshakeResult, Messenger, handshake_result

__all__ = [
    "LATEST_VERSION", "SUPPORTED_VERSIONS", "HandshakeResult", "LegacyEra", "initialize_params",
    "read_initialize_result",
]

log = logging.getLogger("mcpclient")

#: Newest first: the first is what we ask for.
SUPPORTED_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION = SUPPORTED_VERSIONS[0]


def initialize_params(
    client_info: t.Implementation, capabilities: dict[str, Any], version: str = LATEST_VERSION
) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": capabilities,
        "clientInfo": unstructure(client_info),
    }


def read_initialize_result(result: dict[str, Any]) -> HandshakeResult:
    """Check the server's answer to ``initialize``; a version we do not speak is refused."""
    version = result.get("protocolVersion")
    if version not in SUPPORTED_VERSIONS:
        raise ProtocolError(
            f"the server answered initialize with protocol version {version!r}, which mcpclient "
            f"does not support (supported: {', '.join(SUPPORTED_VERSIONS)})"
        )
    return handshake_result(result, version, "initialize", result.get("serverInfo"))


#: Where each task action is declared under the server's ``tasks`` capability (None: the
#: capability itself), and the request it stands for.
_TASK_FEATURES: dict[str, tuple[str | None, str]] = {
    "start": ("requests.tools.call", "tools/call"),
    "get": (None, "tasks/get"),
    "list": ("list", "tasks/list"),
    "cancel": ("cancel", "tasks/cancel"),
}


class LegacyEra(Era):
    """The initialize-handshake era: capabilities fixed at opening, plain requests.

    ``declared`` is what the handshake declared for the client: a capability missing from it
    (a handler set late) the server never learns of.
    """

    name = "legacy"
    blocking_task_result = True
    tools_declare_task_support = True

    def __init__(self, version: str, declared: dict[str, Any]) -> None:
        self._version = version
        self._declared = declared

    @property
    def version(self) -> str:
        return self._version

    def decorate(self, params: dict[str, Any]) -> dict[str, Any]:
        return params

    def ping(self, messenger: Messenger, options: CallOptions) -> None:
        messenger.call("ping", None, options)

    def set_log_level(self, messenger: Messenger, level: str, options: CallOptions) -> None:
        if "logging" not in messenger.capabilities:
            raise CapabilityError("logging", "logging/setLevel")
        messenger.call("logging/setLevel", {"level": level}, options)

    def subscribe(self, messenger: Messenger, uri: str, options: CallOptions) -> None:
        _require_subscribe(messenger.capabilities)
        messenger.call("resources/subscribe", {"uri": uri}, options)

    def unsubscribe(self, messenger: Messenger, uri: str, options: CallOptions) -> None:
        _require_subscribe(messenger.capabilities)
        messenger.call("resources/unsubscribe", {"uri": uri}, options)

    def listen_filter(
        self, capabilities: dict[str, Any], wants_lists: bool, subscribed: set[str]
    ) -> dict[str, Any] | None:
        return None  # a legacy server pushes list_changed and resources/updated unasked

    def roots_changed(self, messenger: Messenger, options: CallOptions) -> None:
        if "roots" in self._declared:
            messenger.notify("notifications/roots/list_changed", None, options)

    def handler_set_late(self, what: str) -> None:
        log.warning("%s set after initialize(): the server was not told this client supports it", what)

    @staticmethod
    def require_tasks(capabilities: Mapping[str, Any], action: str) -> None:
        feature, method = _TASK_FEATURES[action]
        node: Any = capabilities.get("tasks")
        for part in feature.split(".") if feature else []:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            raise CapabilityError(f"tasks.{feature}" if feature else "tasks", method)

    @staticmethod
    def task_params(params: dict[str, Any], ttl: float | None) -> dict[str, Any]:
        return {**params, "task": {} if ttl is None else {"ttl": int(ttl * 1000)}}

    @staticmethod
    def task_state(result: dict[str, Any]) -> dict[str, Any] | None:
        task = result.get("task")
        return task if isinstance(task, dict) else None  # a server may ignore the task field


def _require_subscribe(capabilities: dict[str, Any]) -> None:
    resources = capabilities.get("resources")
    if not (isinstance(resources, dict) and resources.get("subscribe")):
        raise CapabilityError("resources.subscribe", "resources/subscribe")
