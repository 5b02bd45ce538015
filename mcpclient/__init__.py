"""mcpclient: a synchronous, thread-based client for the Model Context Protocol (MCP).

    >>> from mcpclient import Client, StdioTransport
    >>> with Client(StdioTransport(["python", "server.py"])) as client:
    ...     print(client.call_tool("add", {"a": 1, "b": 2}).text)

Blocking calls with timeouts, a daemon reader thread, and plain-function handlers: usable
from scripts, notebooks, WSGI views and task queues without an event loop.
"""

import logging
from typing import TYPE_CHECKING, Any

from ._core.version import __version__

from . import plugins as _plugins  # noqa: F401  (registers the built-ins that Client's options stand for)
from .types import set_html_renderer as _set_html_renderer
from ._client.client import DEFAULT_TIMEOUT, Client
from ._core.exceptions import (
    CapabilityError,
    ClientClosedError,
    ConnectionClosed,
    HTTPStatusError,
    MCPError,
    OutputValidationError,
    PendingInputRefused,
    ProtocolError,
    RequestCancelled,
    RequestTimeout,
    ResourceNotFound,
    SessionLost,
    StreamInterrupted,
    StructuredOutputError,
    SubscriptionError,
    RPCError,
    SkillVerificationError,
    TaskSupportError,
    ToolCallDenied,
    ToolChanged,
    ToolError,
    TransportError,
    URLElicitationRequired,
)
from ._client.features import Task
from ._client.pages import Page
from ._client.pending import PendingInput
from ._client.settings import HTTP, Handlers, Plugins, Stdio
from ._core.cancel import CancelToken
from ._core.retry import Retry
from ._client.skill_model import Skill, SkillFile
from .extensions import Extension, Message, Middleware, Options
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
    SessionState,
    ToolContent,
    ToolDef,
    ToolResult,
)

# A library logs and lets the application decide what is shown (the logging HOWTO's advice):
# without a handler of the application's, nothing of mcpclient's reaches stderr.
logging.getLogger("mcpclient").addHandler(logging.NullHandler())


def _render_html(value: Any) -> str:
    """The models' HTML for Jupyter, by the notebook display (``_display.html``), loaded the
    first time a value is shown: importing it installs its renderer in place of this one."""
    from ._display.html import render

    return render(value)


_set_html_renderer(_render_html)

if TYPE_CHECKING:
    from . import ai, config, llm, prompting
    from ._build.pool import ClientPool
    from ._build.shared import SharedClient
    from .ai import tools
    from ._build.open import connect
    from .auth import AuthorizationError, OAuth
    from .group import ClientGroup
    from .plugins.keepalive import KeepAlive
    from .plugins.telemetry import Telemetry
    from ._shared_group import SharedGroup
    from .transports import SSETransport, StreamableHTTPTransport

# What needs the HTTP stack (requests), and what a script calling tools does not need, is
# imported on first use, so that ``import mcpclient`` stays fast: ``from mcpclient import
# connect`` works as usual.
_LAZY = {
    "ai": (".ai", None),
    "tools": (".ai", "tools"),
    "SharedClient": ("._build.shared", "SharedClient"),
    "ClientPool": ("._build.pool", "ClientPool"),
    "connect": ("._build.open", "connect"),
    "SSETransport": (".transports.sse", "SSETransport"),
    "StreamableHTTPTransport": (".transports.http", "StreamableHTTPTransport"),
    "OAuth": (".auth", "OAuth"),
    "AuthorizationError": (".auth", "AuthorizationError"),
    "ClientGroup": (".group", "ClientGroup"),
    "KeepAlive": (".plugins.keepalive", "KeepAlive"),
    "Telemetry": (".plugins.telemetry", "Telemetry"),
    "SharedGroup": ("._shared_group", "SharedGroup"),
    "config": (".config", None),
    "llm": (".llm", None),
    "prompting": (".prompting", None),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'mcpclient' has no attribute {name!r}")
    import importlib

    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name, __name__)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AuthorizationError",
    "CancelToken",
    "CapabilityError",
    "Client",
    "ClientClosedError",
    "ClientGroup",
    "ClientPool",
    "Completion",
    "CompletionRef",
    "ConnectionClosed",
    "CreateMessageRequest",
    "CreateMessageResult",
    "DEFAULT_TIMEOUT",
    "ElicitationRequest",
    "ElicitationResult",
    "Extension",
    "HTTP",
    "HTTPStatusError",
    "Handlers",
    "Implementation",
    "KeepAlive",
    "MCPError",
    "Message",
    "Middleware",
    "OAuth",
    "Options",
    "OutputValidationError",
    "Page",
    "PendingInput",
    "PendingInputRefused",
    "Plugins",
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
    "Retry",
    "Root",
    "SSETransport",
    "SamplingMessage",
    "SessionLost",
    "SessionState",
    "SharedClient",
    "SharedGroup",
    "Skill",
    "SkillFile",
    "SkillVerificationError",
    "Stdio",
    "StdioTransport",
    "StreamInterrupted",
    "StreamableHTTPTransport",
    "StructuredOutputError",
    "SubscriptionError",
    "Task",
    "TaskSupportError",
    "Telemetry",
    "ToolCallDenied",
    "ToolChanged",
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
    "prompting",
    "tools",
]
