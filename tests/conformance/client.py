"""The mcpclient client for the MCP conformance suite (``@modelcontextprotocol/conformance``).

The suite's ``client`` command starts a mock server per scenario and runs
``python tests/conformance/client.py URL`` with, in the environment,
``MCP_CONFORMANCE_SCENARIO`` (the scenario name), ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the
spec version under test) and, for some scenarios, ``MCP_CONFORMANCE_CONTEXT`` (JSON). The mock
server records what this client does and judges it; this program only has to behave like a
well-written application for each scenario, and exit 0.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import mcpclient  # noqa: E402
from mcpclient import Client, CreateMessageResult, ElicitationResult, Handlers  # noqa: E402

log = logging.getLogger("conformance-client")

TIMEOUT = 20.0


def connect(url: str, version: str, **options: Any) -> Client:
    # A dated (handshake-era) spec version means the legacy protocol; the suite's mock servers
    # for those scenarios know nothing of server/discover.
    protocol = "legacy" if version and version < "2026" else "auto"
    return mcpclient.connect(url, timeout=TIMEOUT, protocol=protocol, **options)


def run_initialize(url: str, version: str, context: dict[str, Any]) -> None:
    with connect(url, version) as client:
        if "tools" in client.server_capabilities:
            client.list_tools()


def run_tools_call(url: str, version: str, context: dict[str, Any]) -> None:
    with connect(url, version) as client:
        names = [tool.name for tool in client.list_tools()]
        if "add_numbers" in names:
            result = client.call_tool("add_numbers", {"a": 5, "b": 3})
            log.info("add_numbers: %s", result.text if hasattr(result, "text") else result)


def run_elicitation_defaults(url: str, version: str, context: dict[str, Any]) -> None:
    # Accept with no content: the client fills in the schema's defaults (SEP-1034).
    def accept(request: Any) -> ElicitationResult:
        return ElicitationResult(action="accept", content={})

    with connect(url, version, handlers=Handlers(elicitation=accept)) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name, {})


def run_sse_retry(url: str, version: str, context: dict[str, Any]) -> None:
    with connect(url, version) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name, {})


def run_json_schema_preservation(url: str, version: str, context: dict[str, Any]) -> None:
    with connect(url, version) as client:
        tools = client.list_tools()
        focal = next(t for t in tools if "$schema" in t.input_schema or "$defs" in t.input_schema)
        echo = next(t for t in tools if "schema" in t.input_schema.get("properties", {}))
        client.call_tool(echo.name, {"schema": focal.input_schema})


# -- 2026-07-28 (modern era) scenarios ------------------------------------------------------------


def run_request_metadata(url: str, version: str, context: dict[str, Any]) -> None:
    # Handlers installed, so _meta declares roots, sampling and elicitation (checked when present).
    def sample(request: Any) -> CreateMessageResult:
        return CreateMessageResult.from_text("ok", model="conformance")

    def elicit(request: Any) -> ElicitationResult:
        return ElicitationResult(action="decline")

    handlers = Handlers(sampling=sample, elicitation=elicit, roots=["file:///conformance"])
    with connect(url, version, handlers=handlers) as client:
        if "tools" in client.server_capabilities:
            client.list_tools()


def run_standard_headers(url: str, version: str, context: dict[str, Any]) -> None:
    """Touch every feature with a name: each request's Mcp-Method (and Mcp-Name) is judged."""
    with connect(url, version) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name, {})
        for resource in client.list_resources():
            client.read_resource(resource.uri)
        for prompt in client.list_prompts():
            client.get_prompt(prompt.name)


def run_custom_headers(url: str, version: str, context: dict[str, Any]) -> None:
    """Make the calls the scenario names in its context; their Mcp-Param-* headers are judged."""
    with connect(url, version) as client:
        known = {tool.name for tool in client.list_tools()}
        for call in context.get("toolCalls", []):
            if call["name"] in known:
                client.call_tool(call["name"], call.get("arguments") or {})


def run_invalid_tool_headers(url: str, version: str, context: dict[str, Any]) -> None:
    """Call every tool the client kept: those with invalid x-mcp-header annotations must be gone."""
    with connect(url, version) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name, _sample_arguments(tool.input_schema))


def run_schema_ref_no_deref(url: str, version: str, context: dict[str, Any]) -> None:
    """List the tools, as an application showing them would: a network $ref must never be fetched."""
    with connect(url, version) as client:
        for tool in client.list_tools():
            log.info("tool %s: %s", tool.name, json.dumps(tool.input_schema)[:200])


def run_request_state(url: str, version: str, context: dict[str, Any]) -> None:
    """Input-required (MRTR) rounds: requestState echoed, omitted when absent, never leaked."""
    calls: list[str] = []

    def confirm(request: Any) -> ElicitationResult:
        # Another request made while a multi-round call waits must not carry that call's state.
        if "test_mrtr_unrelated" in tools and not calls:
            calls.append(client.call_tool("test_mrtr_unrelated", {}).text)
        return ElicitationResult(action="accept", content={"confirmed": True})

    with connect(url, version, handlers=Handlers(elicitation=confirm)) as client:
        tools = [tool.name for tool in client.list_tools()]
        for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"):
            if name in tools:
                log.info("%s: %s", name, client.call_tool(name, {}).text)


def _sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Plausible values for a tool's required arguments (enough for the mock servers)."""
    samples = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}, "null": None}
    properties = schema.get("properties") or {}
    return {
        name: samples.get((properties.get(name) or {}).get("type"), "x")
        for name in schema.get("required") or ()
    }


SCENARIOS: dict[str, Callable[[str, str, dict[str, Any]], None]] = {
    "initialize": run_initialize,
    "tools_call": run_tools_call,
    "elicitation-sep1034-client-defaults": run_elicitation_defaults,
    "sse-retry": run_sse_retry,
    "json-schema-2020-12-preservation": run_json_schema_preservation,
    "request-metadata": run_request_metadata,
    "http-standard-headers": run_standard_headers,
    "http-custom-headers": run_custom_headers,
    "http-invalid-tool-headers": run_invalid_tool_headers,
    "json-schema-ref-no-deref": run_schema_ref_no_deref,
    "sep-2322-client-request-state": run_request_state,
}
SCENARIOS.update(__import__("skills_scenarios").scenarios(connect))  # SEP-2640: see skills_scenarios.py


def main(argv: list[str]) -> int:
    level = logging.DEBUG if os.environ.get("MCPCLIENT_CONFORMANCE_DEBUG") else logging.INFO
    logging.basicConfig(level=level, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
    if len(argv) < 2:
        print("usage: client.py SERVER_URL", file=sys.stderr)
        return 2
    url = argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if scenario.startswith("auth/"):  # OAuth scenarios: see auth_scenarios.py
        from auth_scenarios import run as run_auth

        run = lambda url, version, context: run_auth(url, scenario, context, version)  # noqa: E731
    else:
        run = SCENARIOS.get(scenario, run_initialize)
    log.info("scenario %r (spec %s) against %s", scenario, version or "?", url)
    run(url, version, context)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
