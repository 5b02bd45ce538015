"""Real servers for the framework tests: the demo server over stdio, a group of two demo
servers from examples/mcp.json (prefixed names), and the SDK server (errors, images, delays).

One of each per test module: the tests only call tools on them (none sets a handler or
closes them), and a server costs about a second to start.
"""

from __future__ import annotations

import sys

import pytest

import mcpclient
from mcpclient import ClientGroup

from tests.conftest import DEMO_SERVER, ROOT, SDK_SERVER


@pytest.fixture(scope="module")
def demo():
    with mcpclient.connect(DEMO_SERVER, timeout=20) as client:
        yield client


@pytest.fixture(scope="module")
def group():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHON", sys.executable)
        # This checkout's own file, so a project file: trusted for the test, as its code knows it.
        with ClientGroup.from_config(ROOT / "examples" / "mcp.json", names=["math", "text"], trust_project=True,
                                     open_timeout=30, timeout=20) as group:
            assert not group.errors
            yield group


@pytest.fixture(scope="module")
def sdk():
    with mcpclient.connect(SDK_SERVER, timeout=30) as client:
        yield client


#: The official-SDK policy server (annotated tools; ``calls`` reports what reached it).
POLICY_SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_policy_server.py")]
#: The refusal's words, as every adapter passes them to the model.
REFUSED = "refused by the policy"


@pytest.fixture
def gated():
    """The policy server behind a gate: reads allowed, ``delete_all`` denied by "no deletes"."""
    from mcpclient.policy import Policy, Rule

    policy = Policy([Rule("allow", annotations={"readOnlyHint": True}), Rule("deny", tool="delete_all",
                                                                              name="no deletes")])
    with mcpclient.connect(POLICY_SERVER,
                           plugins=mcpclient.Plugins(policy=policy), protocol="legacy", timeout=30) as client:
        yield client


def reached(client) -> dict:
    """The calls of each tool that reached the server (it counts them itself)."""
    import json

    return json.loads(client.call_tool("calls").text)
