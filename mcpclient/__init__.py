"""mcpclient: a synchronous, thread-based client for the Model Context Protocol (MCP).

    >>> from mcpclient import Client, StdioTransport
    >>> with Client(StdioTransport(["python", "server.py"])) as client:
    ...     print(client.call_tool("add", {"a": 1, "b": 2}).text)

Blocking calls with timeouts, a daemon reader thread, and plain-function handlers: usable
from scripts, notebooks, WSGI views and task queues without an event loop.
"""

__version__ = "0.1.0.dev0"

from . import ai
from ._client import DEFAULT_TIMEOUT, Client
from ._exceptions import (
    CapabilityError,
    ClientClosedError,
    ConnectionClosed,
    MCPError,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    RPCError,
    ToolError,
    TransportError,
)
from ._rpc.cancel import CancelToken
from .ai import tools
from .transports import StdioTransport, Transport
from .types import (
    Completion,
    CompletionRef,
    CreateMessageRequest,
    CreateMessageResult,
    ElicitationRequest,
    ElicitationResult,
    Implementation,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptPart,
    Resource,
    ResourceContents,
    ResourceTemplate,
    Root,
    SamplingMessage,
    ToolContent,
    ToolDef,
    ToolResult,
)

__all__ = [
    "CancelToken",
    "CapabilityError",
    "Client",
    "ClientClosedError",
    "Completion",
    "CompletionRef",
    "ConnectionClosed",
    "CreateMessageRequest",
    "CreateMessageResult",
    "DEFAULT_TIMEOUT",
    "ElicitationRequest",
    "ElicitationResult",
    "Implementation",
    "MCPError",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptPart",
    "ProtocolError",
    "RPCError",
    "RequestCancelled",
    "RequestTimeout",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "Root",
    "SamplingMessage",
    "StdioTransport",
    "ToolContent",
    "ToolDef",
    "ToolError",
    "ToolResult",
    "Transport",
    "TransportError",
    "__version__",
    "ai",
    "tools",
]
