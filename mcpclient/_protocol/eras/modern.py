"""The modern MCP era (2026-07-28 and later): no handshake, ``_meta`` on every request."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ... import types as t
from ..._core.exceptions import CapabilityError, RPCError
from ..._core.options import CallOptions
from ..wire import unstructure
from .base import Era, HandshakeResult, Messenger, handshake_result

__all__ = [
    "MODERN_VERSIONS",
    "INPUT_REQUIRED_METHODS",
    "MODERN_ERROR_CODES",
    "ModernEra",
    "request_meta",
    "read_discover_result",
    "supported_from_error",
]

#: Newest first.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
#: Codes only a modern server sends: seeing one means the server is modern.
MODERN_ERROR_CODES = frozenset({HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_VERSION})

#: The tasks extension (SEP-2663): declared by every modern request, since ``call_tool`` waits
#: for a task transparently; a server may then answer ``tools/call`` with ``resultType: "task"``.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: Extensions this client implements, declared in the modern era only (2025-11-25 has none).
CLIENT_EXTENSIONS: dict[str, dict[str, Any]] = {TASKS_EXTENSION: {}}
#: Requests a server may answer with a task handle.
TASK_METHODS = frozenset({"tools/call"})

#: Requests on which a server may answer ``resultType: "input_required"``.
INPUT_REQUIRED_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


def request_meta(
    version: str,
    client_info: t.Implementation,
    capabilities: dict[str, Any],
    log_level: str | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_INFO_KEY: unstructure(client_info),
        CLIENT_CAPABILITIES_KEY: {**capabilities, "extensions": {**capabilities.get("extensions", {}), **CLIENT_EXTENSIONS}},
    }
    if log_level is not None:
        meta[LOG_LEVEL_KEY] = log_level
    return meta


def supported_from_error(error: RPCError) -> list[str] | None:
    """The versions an UnsupportedProtocolVersionError lists, or None if it is not one."""
    if error.code != UNSUPPORTED_VERSION:
        return None
    data = error.data if isinstance(error.data, dict) else {}
    supported = data.get("supported")
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def read_discover_result(result: dict[str, Any], version: str) -> HandshakeResult:
    meta = result.get("_meta")
    info = (meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None) or result.get("serverInfo")
    return handshake_result(result, version, "server/discover", info)


def pick_version(supported: list[str]) -> str | None:
    """Our newest modern version the server also supports."""
    for version in MODERN_VERSIONS:
        if version in supported:
            return version
    return None


class ModernEra(Era):
    """The 2026-07-28 era: no handshake state, so every request says who the client is.

    The client's capabilities are read afresh for each request (a handler set late is
    declared with the next one), and the log level chosen with ``set_log_level`` travels in
    every request's ``_meta``.
    """

    name = "modern"
    blocking_task_result = False
    tools_declare_task_support = False

    def __init__(
        self, version: str, client_info: t.Implementation, capabilities: Callable[[], dict[str, Any]]
    ) -> None:
        self._version = version
        self._client_info = client_info
        self._capabilities = capabilities
        self.log_level: str | None = None

    @property
    def version(self) -> str:
        return self._version

    def decorate(self, params: dict[str, Any]) -> dict[str, Any]:
        meta = dict(params.get("_meta") or {})
        meta.update(request_meta(self._version, self._client_info, self._capabilities(), self.log_level))
        return {**params, "_meta": meta}

    def ping(self, messenger: Messenger, options: CallOptions) -> None:
        messenger.call("server/discover", None, options)  # the era has no ping

    def set_log_level(self, messenger: Messenger, level: str, options: CallOptions) -> None:
        self.log_level = level  # no request: the level goes with every later one

    def subscribe(self, messenger: Messenger, uri: str, options: CallOptions) -> None:
        pass  # the subscription is a field of the listen filter

    def unsubscribe(self, messenger: Messenger, uri: str, options: CallOptions) -> None:
        pass

    def listen_filter(
        self, capabilities: dict[str, Any], wants_lists: bool, subscribed: set[str]
    ) -> dict[str, Any] | None:
        return {
            "toolsListChanged": wants_lists and "tools" in capabilities,
            "promptsListChanged": wants_lists and "prompts" in capabilities,
            "resourcesListChanged": wants_lists and "resources" in capabilities,
            "resourceSubscriptions": sorted(subscribed),
        }

    def roots_changed(self, messenger: Messenger, options: CallOptions) -> None:
        pass  # the server asks roots/list when it needs them; there is no notice to send

    def handler_set_late(self, what: str) -> None:
        pass  # declared with the next request

    @staticmethod
    def require_tasks(capabilities: Mapping[str, Any], action: str) -> None:
        if action == "list":
            raise CapabilityError("tasks.list", "tasks/list")  # the extension has no tasks/list
        if action == "cancel":
            return  # any task the server made may be cancelled
        extensions = capabilities.get("extensions")
        if not (isinstance(extensions, dict) and TASKS_EXTENSION in extensions):
            raise CapabilityError(f"extensions.{TASKS_EXTENSION}", "tools/call" if action == "start" else "tasks/get")

    @staticmethod
    def task_params(params: dict[str, Any], ttl: float | None) -> dict[str, Any]:
        return params  # the server alone decides; the extension has no ttl field

    @staticmethod
    def task_state(result: dict[str, Any]) -> dict[str, Any] | None:
        return result if result.get("resultType") == "task" else None
