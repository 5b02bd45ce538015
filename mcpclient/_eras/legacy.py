"""The legacy MCP era (2024-11-05 to 2025-11-25): the initialize handshake and sessions."""

from __future__ import annotations

from typing import Any

from attrs import frozen

from .. import types as t
from .._exceptions import ProtocolError
from .._wire import structure, unstructure

__all__ = ["LATEST_VERSION", "SUPPORTED_VERSIONS", "HandshakeResult", "initialize_params", "read_initialize_result"]

#: Newest first: the first is what we ask for.
SUPPORTED_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_VERSION = SUPPORTED_VERSIONS[0]


@frozen(kw_only=True)
class HandshakeResult:
    protocol_version: str
    server_info: t.Implementation
    capabilities: dict[str, Any]
    instructions: str | None


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
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        raise ProtocolError(f"the server's initialize result has no capabilities object: {capabilities!r:.100}")
    info = result.get("serverInfo")
    server_info = structure(info, t.Implementation) if isinstance(info, dict) else t.Implementation(name="")
    instructions = result.get("instructions")
    return HandshakeResult(
        protocol_version=version,
        server_info=server_info,
        capabilities=capabilities,
        instructions=instructions if isinstance(instructions, str) else None,
    )
