"""mcpclient: a synchronous, thread-based client for the Model Context Protocol (MCP).

    >>> from mcpclient import Client, StdioTransport
    >>> with Client(StdioTransport(["python", "server.py"])) as client:
    ...     print(client.call_tool("add", {"a": 1, "b": 2}).text)

Blocking calls with timeouts, a daemon reader thread, and plain-function handlers: usable
from scripts, notebooks, WSGI views and task queues without an event loop.
"""

__version__ = "0.1.0.dev0"

from . import ai, config, llm
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
    SkillVerificationError,
    ToolError,
    TransportError,
    URLElicitationRequired,
)
from ._rpc.cancel import CancelToken
from ._skills import Skill, SkillFile
from ._structured import OutputValidationError
from ._task import Task
from .auth import AuthorizationError, OAuth
from .ai import tools
from .group import ClientGroup
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
    "AuthorizationError",
    "CancelToken",
    "CapabilityError",
    "Client",
    "ClientClosedError",
    "ClientGroup",
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
    "OAuth",
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
    "Skill",
    "SkillFile",
    "SkillVerificationError",
    "StdioTransport",
    "StreamInterrupted",
    "StreamableHTTPTransport",
    "Task",
    "ToolContent",
    "ToolDef",
    "ToolError",
    "ToolResult",
    "Transport",
    "TransportError",
    "URLElicitationRequired",
    "__version__",
    "ai",
    "config",
    "connect",
    "llm",
    "tools",
]
