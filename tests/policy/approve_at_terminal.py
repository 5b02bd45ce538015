"""Run on a pseudo-terminal by test_terminal_approver.py: one call of the hostile server's
tool under a policy that asks the person at the terminal (``mcpclient.prompting.approve_tool``),
then the outcome and the server's own call counts, each on a line of its own."""

from __future__ import annotations

import sys
from pathlib import Path

import mcpclient
from mcpclient import ToolCallDenied
from mcpclient.policy import Policy, Rule
from tests.servers.sdk_policy_server import HOSTILE_TOOL

SERVER = [sys.executable, str(Path(__file__).resolve().parents[1] / "servers" / "sdk_policy_server.py"), "--hostile"]


def main() -> None:
    policy = Policy([Rule("allow", tool="calls")], default="ask", approver=mcpclient.prompting.approve_tool)
    # stderr=None: the SDK's own warning about the tool's name quotes it raw on the server's
    # stderr, which is not what this test looks at (the prompt is).
    with mcpclient.connect(SERVER,
                           plugins=mcpclient.Plugins(policy=policy), protocol="legacy", timeout=30, stdio=mcpclient.Stdio(stderr=None)) as client:
        try:
            print("OUTCOME ran:", client.call_tool(HOSTILE_TOOL).text, flush=True)
        except ToolCallDenied:
            print("OUTCOME denied", flush=True)
        print("COUNTS", client.call_tool("calls").text, flush=True)


if __name__ == "__main__":
    main()
