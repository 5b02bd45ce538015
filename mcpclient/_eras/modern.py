"""The modern MCP era (2026-07-28 and later): no handshake, ``_meta`` on every request."""

from __future__ import annotations

from typing import Any

from .. import types as t
from .._exceptions import ProtocolError, RPCError
from .._wire import structure, unstructure
from .legacy import HandshakeResult

__all__ = [
    "MODERN_VERSIONS",
    "INPUT_REQUIRED_METHODS",
    "MODERN_ERROR_CODES",
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
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        raise ProtocolError(f"the server's discover result has no capabilities object: {capabilities!r:.100}")
    meta = result.get("_meta")
    info = (meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None) or result.get("serverInfo")
    server_info = structure(info, t.Implementation) if isinstance(info, dict) else t.Implementation(name="")
    instructions = result.get("instructions")
    return HandshakeResult(
        protocol_version=version,
        server_info=server_info,
        capabilities=capabilities,
        instructions=instructions if isinstance(instructions, str) else None,
    )


def pick_version(supported: list[str]) -> str | None:
    """Our newest modern version the server also supports."""
    for version in MODERN_VERSIONS:
        if version in supported:
            return version
    return None
