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
from ._connect import connect
from ._exceptions import (
    CapabilityError,
    ClientClosedError,
    ConnectionClosed,
    HTTPStatusError,
    MCPError,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    ResourceNotFound,
    StreamInterrupted,
    RPCError,
    ToolError,
    TransportError,
)
from ._rpc.cancel import CancelToken
from ._structured import OutputValidationError
from .ai import tools
from .transports import SSETransport, StdioTransport, StreamableHTTPTransport, Transport
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
    "HTTPStatusError",
    "Implementation",
    "MCPError",
    "OutputValidationError",
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
    "ResourceNotFound",
    "ResourceTemplate",
    "Root",
    "SSETransport",
    "SamplingMessage",
    "StdioTransport",
    "StreamInterrupted",
    "StreamableHTTPTransport",
    "ToolContent",
    "ToolDef",
    "ToolError",
    "ToolResult",
    "Transport",
    "TransportError",
    "__version__",
    "ai",
    "connect",
    "tools",
]
