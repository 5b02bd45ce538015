"""The public surface changes only on purpose."""

from __future__ import annotations

import subprocess
import sys

import mcpclient

EXPECTED = {
    "DEFAULT_TIMEOUT", "CancelToken", "CapabilityError", "Client", "ClientClosedError", "Completion",
    "CompletionRef", "ConnectionClosed", "CreateMessageRequest", "CreateMessageResult",
    "ElicitationRequest", "ElicitationResult", "Implementation", "MCPError", "ProtocolError",
    "Prompt", "PromptArgument", "PromptMessage", "PromptPart", "RPCError", "RequestCancelled",
    "RequestTimeout", "Resource", "ResourceContents", "ResourceTemplate", "Root", "SamplingMessage",
    "StdioTransport", "ToolContent", "ToolDef", "ToolError", "ToolCallDenied", "ToolChanged", "ToolResult", "Transport",
    "TransportError", "__version__", "ai", "tools",
    # Resource lookups, HTTP.
    "ResourceNotFound", "OutputValidationError", "HTTPStatusError", "StreamInterrupted", "SSETransport", "StreamableHTTPTransport", "connect",
    # Config files, server groups, LLM tool formats (issue #7).
    "ClientGroup", "config", "llm",
    # Tasks, skills, URL elicitation (issue #5).
    "Task", "TaskSupportError", "SubscriptionError", "Skill", "SkillFile", "SkillVerificationError", "URLElicitationRequired",
    # OAuth for remote servers (issue #6).
    "AuthorizationError", "OAuth",
    # A person answers elicitation and sampling at a prompt (issue #13).
    "prompting",
    # One client per process for web apps and task queues (issue #17).
    "SharedClient", "SharedGroup",
    # OpenTelemetry (issue #14).
    "Telemetry",
    # The open client: middleware, extensions, one page of a listing (issue #29).
    "Extension", "Message", "Middleware", "Options", "Page",
    # Keep-alive pings for legacy servers, a built-in extension (issue #30).
    "KeepAlive",
    # Typed views of structured tool output (issue #30).
    "StructuredOutputError",
    # Resuming a legacy Streamable HTTP session (issue #30).
    "SessionLost", "SessionState",
    # A client per user key, bounded, for multi-user web apps; a retry policy (issue #48).
    "ClientPool", "Retry",
    # A tool call that waits for a person, resumed later, in another process too (issue #48).
    "PendingInput", "PendingInputRefused",
    # What a client is opened with, in groups (issue #47).
    "HTTP", "Handlers", "Plugins", "Stdio",
}


def test_exported_names_are_exactly_the_public_api():
    exported = set(mcpclient.__all__)
    assert exported - EXPECTED == set(), "new public names must be added here on purpose"
    assert EXPECTED - exported == set(), "public names were removed"


def test_all_is_sorted_and_every_name_exists():
    assert list(mcpclient.__all__) == sorted(mcpclient.__all__)
    for name in mcpclient.__all__:
        assert hasattr(mcpclient, name), name


def test_every_error_is_an_mcp_error_and_matches_the_stdlib_type():
    assert issubclass(mcpclient.RequestTimeout, (mcpclient.MCPError, TimeoutError))
    assert issubclass(mcpclient.RequestTimeout, TimeoutError)
    assert issubclass(mcpclient.ConnectionClosed, ConnectionError)
    assert issubclass(mcpclient.ConnectionClosed, mcpclient.TransportError)
    for name in ("RPCError", "CapabilityError", "ClientClosedError", "ProtocolError", "ToolError",
                 "RequestCancelled", "TransportError"):
        assert issubclass(getattr(mcpclient, name), mcpclient.MCPError), name


def test_errors_survive_pickling():
    import pickle

    for error in (
        mcpclient.RPCError(-32601, "nope", {"x": 1}, method="m", request_id=3),
        mcpclient.CapabilityError("tools", "tools/list"),
        mcpclient.TaskSupportError("echo", "forbidden"),
        mcpclient.ConnectionClosed("gone", exit_code=2, stderr_tail="boom"),
    ):
        copy = pickle.loads(pickle.dumps(error))
        assert str(copy) == str(error)


def test_importing_mcpclient_does_not_import_the_http_stack_or_the_sdk():
    code = (
        "import sys, mcpclient; "
        "print(sorted(m for m in ('mcp', 'anyio', 'pydantic', 'requests', 'urllib3') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_http_names_load_on_first_use():
    code = (
        "import sys, mcpclient; before = 'requests' in sys.modules; "
        "from mcpclient import connect, StreamableHTTPTransport, OAuth; "
        "print(before, 'requests' in sys.modules, callable(connect), StreamableHTTPTransport.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True", "StreamableHTTPTransport"]


#: Each feature's one public path: what it exports, on purpose. The code lives under
#: ``mcpclient/plugins/`` (and ``_client/app_views``), which is not a path of its own.
FEATURES = {
    "mcpclient.apps": {"EXTENSION", "MIME_TYPE", "AppCall", "AppHost", "AppResult", "Apps", "UIResource",
                       "visible_to_app", "visible_to_model"},
    "mcpclient.policy": {"ApprovalRequest", "Approver", "Decision", "MaxSize", "NotebookApprovals", "OneOf", "Pending",
                         "Policy", "Rule", "ToolCall", "ToolCallDenied", "Under", "WebApprovals", "load_policy"},
    "mcpclient.lock": {"Change", "Lock", "LockFile", "ToolChanged", "assert_locked", "check", "snapshot", "write"},
}


def test_each_feature_exports_what_it_means_to():
    import importlib

    for module, expected in FEATURES.items():
        exported = importlib.import_module(module).__all__
        assert set(exported) == expected, module


def test_the_docs_and_examples_import_each_feature_from_its_one_public_path():
    """Not from the plug-in's own module: ``mcpclient.plugins`` is where the code lives."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    found = []
    for path in [root / "README.md", *(root / "docs").glob("*.md"), *(root / "examples").rglob("*.py")]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"^\s*(from|import) mcpclient\.plugins\b", line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert not found, found
