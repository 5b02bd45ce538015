"""The policy gate's decision is an event on the tools/call span."""

from __future__ import annotations

import sys

import pytest

import mcpclient
from mcpclient.policy import Policy, Rule

from ..conftest import SERVERS


def test_a_refused_call_leaves_an_mcp_policy_event_on_its_span(otel):
    policy = Policy([Rule("deny", tool="delete_all", name="no deleting"), Rule("allow")])
    with mcpclient.connect([sys.executable, str(SERVERS / "sdk_policy_server.py")],
                           plugins=mcpclient.Plugins(policy=policy, telemetry=otel.telemetry()),
                           protocol="legacy", timeout=30) as client:
        client.call_tool("calls")
        with pytest.raises(mcpclient.ToolCallDenied):
            client.call_tool("delete_all")
    events = {span.name: [e for e in span.events if e.name == "mcp.policy"] for span in otel.spans()}
    [denied] = events["tools/call delete_all"]
    assert denied.attributes["mcp.policy.decision"] == "deny"
    assert denied.attributes["mcp.policy.rule"] == "no deleting"
    [allowed] = events["tools/call calls"]
    assert allowed.attributes["mcp.policy.decision"] == "allow"
