"""Every exception mcpclient raises, under one base class.

The hierarchy::

    MCPError
    ├── RPCError                  the server answered with a JSON-RPC error
    │   ├── ResourceNotFound      resources/read named a resource the server does not have
    │   └── URLElicitationRequired  the server needs URL elicitations completed first (-32042)
    ├── CapabilityError           the server did not declare what the method needs
    │   └── TaskSupportError      call_tool_as_task on a tool whose taskSupport forbids tasks
    ├── AuthorizationError        OAuth with the server's authorization server failed (auth)
    │   ├── DiscoveryError        metadata missing, invalid, insecure or for another server
    │   ├── RegistrationError     no client ID could be obtained
    │   └── TokenRequestError     the token endpoint refused (``error``, ``error_description``)
    ├── SubscriptionError         a 2026 server did not acknowledge a resource subscription
    ├── ClientClosedError         the client was closed (by you) before or during the call
    ├── PendingInputRefused       also a ValueError: a PendingInput that resume must not send (nothing was)
    ├── ProtocolError             the server sent something that breaks the protocol
    │   ├── OutputValidationError   structured tool output does not match its outputSchema
    │   └── SkillVerificationError  a skill file does not match its listing; never used
    ├── ToolError                 a tool result with is_error=True, raised on request
    ├── StructuredOutputError     also a ValueError: structured output does not fit the type asked for
    ├── RequestTimeout            also a TimeoutError
    ├── RequestCancelled          the call was cancelled by the caller
    ├── TransportError            also a ConnectionError
    │   ├── ConnectionClosed      the connection to the server is gone
    │   ├── StreamInterrupted     a reply stream broke before the reply (the request may have run)
    │   └── HTTPStatusError       the HTTP server answered with an error status
    │       └── SessionLost       the server no longer knows a resumed session (404, or 400 -32000)
    ├── ConfigError               also a ValueError: a config file or entry cannot be used
    ├── UnknownToolError          also a LookupError: no server of a ClientGroup has that tool
    ├── StubOutOfDate             a typed stub's tools differ from the server's (mcpclient stubs)
    └── ToolCallDenied            also a PermissionError: the policy gate refused a tool call
        └── ToolChanged           the tool changed since it was locked (mcp.lock); refused

Some are importable from where they are used too: ``mcpclient.auth`` (the authorization
errors), ``mcpclient.config.ConfigError`` and ``mcpclient.group.UnknownToolError``.

Foreign exceptions (OSError, json, cattrs, requests) never escape mcpclient unwrapped: they are
translated at the boundary where they happen and chained with ``raise ... from``.

Messages often quote the server (an error message, a body excerpt, a URL), and they end up
in tracebacks on a terminal and in log lines. So ``str()`` of every ``MCPError`` is one line
cleaned by ``_text.clean``: no escape sequence, newline or bidi control of the server's
survives it. The attributes (``RPCError.message``, ``HTTPStatusError.body``, ...) keep the
text as it was sent.
"""

from __future__ import annotations

from typing import Any, Sequence

from .text import clean

__all__ = [
    "AuthorizationError",
    "CapabilityError",
    "ClientClosedError",
    "ConfigError",
    "ConnectionClosed",
    "DiscoveryError",
    "HTTPStatusError",
    "MCPError",
    "OutputValidationError",
    "PendingInputRefused",
    "ProtocolError",
    "RegistrationError",
    "TokenRequestError",
    "ToolCallDenied",
    "ToolChanged",
    "UnknownToolError",
    "RPCError",
    "RequestCancelled",
    "RequestTimeout",
    "ResourceNotFound",
    "SessionLost",
    "StreamInterrupted",
    "StubOutOfDate",
    "SubscriptionError",
    "SkillVerificationError",
    "TaskSupportError",
    "ToolError",
    "TransportError",
    "URLElicitationRequired",
]


class MCPError(Exception):
    """Base class of every error raised by mcpclient."""

    def __str__(self) -> str:
        return clean(super().__str__(), None)


class RPCError(MCPError):
    """The server replied to a request with a JSON-RPC error object.

    ``code``, ``message`` and ``data`` are the error object's fields; ``method`` and
    ``request_id`` name the request that failed.
    """

    # Standard JSON-RPC codes, for comparisons in user code.
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    RESOURCE_NOT_FOUND = -32002

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        method: str | None = None,
        request_id: Any = None,
    ) -> None:
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        self.request_id = request_id
        where = f" (method {method!r}, request id {request_id!r})" if method else ""
        super().__init__(f"server error {code}: {message}{where}")

    def __reduce__(self) -> Any:
        return (
            _rebuild_rpc_error,
            (type(self), self.code, self.message, self.data, self.method, self.request_id),
        )


def _rebuild_rpc_error(
    cls: type[RPCError], code: int, message: str, data: Any, method: Any, request_id: Any
) -> RPCError:
    return cls(code, message, data, method=method, request_id=request_id)


def method_not_found(method: str, detail: str) -> RPCError:
    """The -32601 error for a request ``method`` this side does not answer: the message is
    JSON-RPC's own "Method not found", as peers expect; ``detail`` (why) goes in ``data``."""
    return RPCError(RPCError.METHOD_NOT_FOUND, "Method not found", {"method": method, "detail": detail})


class ResourceNotFound(RPCError):
    """The server has no resource at the URI read (-32002, or -32602 naming the URI)."""


class URLElicitationRequired(RPCError):
    """The server cannot go on until the user completes URL elicitations (-32042, 2025-11-25).

    ``elicitations`` lists them as ``ElicitationRequest`` values (mode "url", with ``url``,
    ``elicitation_id`` and ``message``): show each URL to the user, open it only with their
    consent, then retry the request (``notifications/elicitation/complete`` may say when).
    mcpclient never opens or fetches these URLs itself. The client reads them from the
    error's ``data`` (``_elicitation.url_elicitation_error``): this error tree never parses
    wire data itself.
    """

    CODE = -32042

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        method: str | None = None,
        request_id: Any = None,
        elicitations: Sequence[Any] = (),
    ) -> None:
        super().__init__(code, message, data, method=method, request_id=request_id)
        self.elicitations = list(elicitations)

    def __reduce__(self) -> Any:
        return (
            _rebuild_url_elicitation,
            (type(self), self.code, self.message, self.data, self.method, self.request_id, self.elicitations),
        )


def _rebuild_url_elicitation(
    cls: type[URLElicitationRequired], code: int, message: str, data: Any, method: Any, request_id: Any,
    elicitations: list[Any],
) -> URLElicitationRequired:
    return cls(code, message, data, method=method, request_id=request_id, elicitations=elicitations)


class CapabilityError(MCPError):
    """A method needs a server capability the server did not declare; nothing was sent."""

    def __init__(self, capability: str, method: str | None = None, *, message: str | None = None) -> None:
        self.capability = capability
        self.method = method
        what = f"{method!r} needs" if method else "this call needs"
        super().__init__(message or f"{what} the server capability {capability!r}, which the server did not declare")

    def __reduce__(self) -> Any:
        return (type(self), (self.capability, self.method))


class TaskSupportError(CapabilityError):
    """The tool does not allow running as a task (its ``execution.taskSupport``); nothing was sent."""

    def __init__(self, tool: str, support: str) -> None:
        self.tool = tool
        self.support = support
        super().__init__(
            "execution.taskSupport",
            "tools/call",
            message=f"tool {tool!r} cannot run as a task: its execution.taskSupport is {support!r}"
            " (a task needs 'optional' or 'required'); call it with call_tool() instead",
        )

    def __reduce__(self) -> Any:
        return (type(self), (self.tool, self.support))


class SubscriptionError(MCPError):
    """The server did not acknowledge a subscription (2026-07-28 ``subscriptions/listen``)."""

    def __init__(self, message: str, *, uri: str | None = None) -> None:
        self.uri = uri
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (_rebuild_subscription_error, (str(self), self.uri))


def _rebuild_subscription_error(message: str, uri: str | None) -> SubscriptionError:
    return SubscriptionError(message, uri=uri)


class ClientClosedError(MCPError):
    """The client is closed: the call was abandoned or never sent."""

    def __init__(self, message: str = "mcp: client closed") -> None:
        super().__init__(message)


class PendingInputRefused(MCPError, ValueError):
    """``Client.resume`` refused a ``PendingInput``, and sent nothing: it was tampered with,
    made with another key, for another server or other credentials, it expired, or (legacy
    era) its call is held in another process or is over. Start the call again."""


class ProtocolError(MCPError):
    """The server sent a message that breaks the protocol (bad JSON, bad shape, bad version)."""


class SkillVerificationError(ProtocolError):
    """A skill file read from the server does not match the skill's listing entry.

    Its size, SHA-256 digest or (for SKILL.md) frontmatter differs from what ``skills/list`` or
    ``skills/get`` said, or the file is not listed at all. The content is discarded, never
    returned. ``uri`` names the file, ``skill`` the skill's SKILL.md URI; ``reason`` says what
    differed. The skill may have changed since it was listed: list it again and retry.
    """

    def __init__(self, reason: str, *, uri: str, skill: str) -> None:
        self.reason = reason
        self.uri = uri
        self.skill = skill
        super().__init__(f"skill file {uri} failed verification ({reason}); its content was not used")

    def __reduce__(self) -> Any:
        return (_rebuild_skill_error, (self.reason, self.uri, self.skill))


def _rebuild_skill_error(reason: str, uri: str, skill: str) -> SkillVerificationError:
    return SkillVerificationError(reason, uri=uri, skill=skill)


class OutputValidationError(ProtocolError):
    """A tool's structured output does not match the tool's ``outputSchema``.

    ``result`` is the ToolResult as received; ``errors`` lists what did not match.
    """

    def __init__(self, message: str, *, tool: str, result: Any, errors: list[str]) -> None:
        self.tool = tool
        self.result = result
        self.errors = errors
        super().__init__(message)


class ToolError(MCPError):
    """A tool ran and reported failure (``ToolResult.is_error``); raised only when asked for."""

    def __init__(self, message: str, result: Any = None, *, tool: str | None = None) -> None:
        self.result = result
        self.tool = tool
        super().__init__(message)


class StructuredOutputError(MCPError, ValueError):
    """A tool's structured output cannot be given the type asked for.

    Raised by ``ToolResult.data`` when the tool's ``outputSchema`` cannot be made into classes
    (nested too deep, or recursive) and by ``ToolResult.structured(cls)`` when the output does not
    fit ``cls``. ``path`` says where (``$`` is the whole value, ``$.items[2].name`` a part of it);
    ``errors`` lists every misfit found, each ending in its path.
    """

    def __init__(self, message: str, *, path: str = "$", errors: list[str] | None = None) -> None:
        self.path = path
        self.errors = errors if errors is not None else [message]
        super().__init__(message)


class RequestTimeout(MCPError, TimeoutError):
    """No reply came within the timeout; the server was told to cancel the request.

    ``delivered`` is true when the request reached the server (so it may have run).
    """

    def __init__(
        self, message: str, *, method: str | None = None, timeout: float | None = None, delivered: bool = False
    ) -> None:
        self.method = method
        self.timeout = timeout
        self.delivered = delivered
        super().__init__(message)


class RequestCancelled(MCPError):
    """The caller cancelled the request before its reply arrived.

    ``delivered`` is true when the request may have reached the server (it was then told to
    cancel it); false when it was cancelled before any of it was sent.
    """

    def __init__(self, message: str, *, method: str | None = None, delivered: bool = False) -> None:
        self.method = method
        self.delivered = delivered
        super().__init__(message)


class TransportError(MCPError, ConnectionError):
    """The transport failed: the server cannot be started, reached or written to.

    ``delivered`` is false when the failure proves the server never took the request up (a
    refused connection, a name that does not resolve, a connect timeout; an HTTP 429 or 503,
    its refusal), so that sending it again cannot run it twice; true (the class default) when
    it may have run.
    """

    delivered: bool = True


class StreamInterrupted(TransportError):
    """The stream carrying one reply broke before the reply came; other calls are unaffected.

    The server may or may not have acted on the request: mcpclient re-sends only requests
    that change nothing (lists, reads, discovery), never a tool call.
    """


class ConnectionClosed(TransportError):
    """The connection to the server is gone; ``reason`` says why (exit code, stderr tail)."""

    def __init__(self, reason: str, *, exit_code: int | None = None, stderr_tail: str = "") -> None:
        self.reason = reason
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        message = f"connection closed: {reason}"
        if stderr_tail:  # one line, as every message (see MCPError): the lines are joined with " | "
            message += " (last lines of the server's stderr: " + " | ".join(stderr_tail.splitlines()) + ")"
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (_rebuild_connection_closed, (self.reason, self.exit_code, self.stderr_tail))


def _rebuild_connection_closed(reason: str, exit_code: Any, stderr_tail: str) -> ConnectionClosed:
    return ConnectionClosed(reason, exit_code=exit_code, stderr_tail=stderr_tail)


class HTTPStatusError(TransportError):
    """The HTTP server answered with an error status (and no JSON-RPC error to report).

    ``status_code`` is the HTTP status; ``body`` a short excerpt of the response body (never
    the credentials sent); ``url`` the address, without query string or user info;
    ``retry_after`` the seconds its ``Retry-After`` header asked to wait (None: none).
    A 429 or 503 is the server's refusal, before it ran the request: ``delivered`` is false.
    """

    def __init__(
        self, message: str, *, status_code: int, body: str = "", url: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.status_code = status_code
        self.body = body
        self.url = url
        self.retry_after = retry_after
        if status_code in (429, 503):  # too many requests, not available: refused before it ran
            self.delivered = False
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (_rebuild_http_status_error, (str(self), self.status_code, self.body, self.url, self.retry_after))


def _rebuild_http_status_error(
    message: str, status_code: int, body: str, url: Any, retry_after: float | None = None
) -> HTTPStatusError:
    return HTTPStatusError(message, status_code=status_code, body=body, url=url, retry_after=retry_after)


class SessionLost(HTTPStatusError):
    """The server no longer knows the session this client resumed (``resume=``): it answered
    HTTP 404 (or the TypeScript SDK's 400 -32000) to a request carrying its id, which proves
    the request never ran. ``session_id`` is the lost id. Connect without ``resume=`` (or with
    ``on_session_lost="reinitialize"``) to start a new session."""

    def __init__(self, message: str, *, status_code: int, session_id: str, body: str = "", url: str | None = None) -> None:
        self.session_id = session_id
        super().__init__(message, status_code=status_code, body=body, url=url)

    def __reduce__(self) -> Any:
        return (_rebuild_session_lost, (str(self), self.status_code, self.session_id, self.body, self.url))


def _rebuild_session_lost(message: str, status_code: int, session_id: str, body: str, url: Any) -> SessionLost:
    return SessionLost(message, status_code=status_code, session_id=session_id, body=body, url=url)


class ConfigError(MCPError, ValueError):
    """A config file cannot be read, or a server entry cannot be used as written."""


class UnknownToolError(MCPError, LookupError):
    """No server of the group offers a tool under this name; nothing was sent."""

    def __init__(self, message: str, *, tool: str) -> None:
        self.tool = tool
        super().__init__(message)


class StubOutOfDate(MCPError):
    """A typed stub (``mcpclient stubs``) no longer matches the server: a tool it wraps was
    removed or changed (description, schemas, annotations). Generate the stub again.

    ``missing`` and ``changed`` name the tools, sorted.
    """

    def __init__(self, message: str, *, missing: Sequence[str] = (), changed: Sequence[str] = ()) -> None:
        self.missing = tuple(missing)
        self.changed = tuple(changed)
        super().__init__(message)


class ToolCallDenied(MCPError, PermissionError):
    """A tool call was refused before it was sent (``mcpclient.policy``): the server never saw it.

    ``tool`` and ``server`` name the call, ``rule`` the rule that decided (``"default"`` when
    none matched), ``reason`` why (a deny rule, an approver's no, no approver to ask, a
    deadline passed). An agent adapter turns it into a failed tool call the model can read.
    """

    def __init__(self, message: str, *, tool: str, server: str | None = None, rule: str | None = None,
                 reason: str = "") -> None:
        self.tool = tool
        self.server = server
        self.rule = rule
        self.reason = reason
        super().__init__(message)


class ToolChanged(ToolCallDenied):
    """The tool differs from its entry in the lockfile (or is not in it), and ``on_change="refuse"``.

    ``diff`` says what changed (description lines, schema paths), as ``mcpclient lock --check``
    shows it. Review the change, then ``mcpclient lock`` to accept it.
    """

    def __init__(self, message: str, *, tool: str, server: str | None = None, diff: str = "") -> None:
        self.diff = diff
        super().__init__(message, tool=tool, server=server, rule="lock", reason="changed since locked")


# -- authorization (mcpclient.auth): messages never contain tokens, client secrets,
# authorization codes or PKCE verifiers.


class AuthorizationError(MCPError):
    """Authorization failed; no token was sent to the MCP server.

    ``error`` is the OAuth error code when the authorization server sent one (e.g.
    ``access_denied``), ``url`` the address involved, without query string.
    """

    def __init__(self, message: str, *, error: str | None = None, url: str | None = None) -> None:
        self.error = error
        self.url = url
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), str(self), self.error, self.url))


def _rebuild(cls: type[AuthorizationError], message: str, error: Any, url: Any) -> AuthorizationError:
    return cls(message, error=error, url=url)


class DiscoveryError(AuthorizationError):
    """Protected resource or authorization server metadata is missing, invalid or unsafe."""


class RegistrationError(AuthorizationError):
    """No client ID: pre-registered, metadata document and dynamic registration all failed."""


class TokenRequestError(AuthorizationError):
    """The token endpoint refused the request.

    ``error`` and ``error_description`` are the server's (RFC 6749 section 5.2);
    ``status_code`` is the HTTP status.
    """

    def __init__(
        self,
        message: str,
        *,
        error: str | None = None,
        error_description: str | None = None,
        status_code: int | None = None,
        url: str | None = None,
    ) -> None:
        self.error_description = error_description
        self.status_code = status_code
        super().__init__(message, error=error, url=url)

    def __reduce__(self) -> Any:
        return (
            _rebuild_token_error,
            (str(self), self.error, self.error_description, self.status_code, self.url),
        )


def _rebuild_token_error(message: str, error: Any, description: Any, status: Any, url: Any) -> TokenRequestError:
    return TokenRequestError(message, error=error, error_description=description, status_code=status, url=url)
