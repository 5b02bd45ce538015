"""The protocol core's one list of change-nothing methods, and its one rule for tools."""

from mcpclient._client import conversation as _conversation
from mcpclient._core import methods as _methods
from mcpclient._build import shared as _shared
from mcpclient import types as t


def test_one_list_of_change_nothing_methods():
    assert _conversation.IDEMPOTENT_METHODS is _methods.CHANGE_NOTHING
    assert "tools/call" not in _methods.CHANGE_NOTHING and "server/discover" in _methods.CHANGE_NOTHING


def test_one_rule_for_resendable_tools():
    """``SharedClient(retry="safe")`` and the client's own calls (tests/transports/test_contract.py)
    use the same rule."""
    cases = [({"readOnlyHint": True}, True), ({"idempotentHint": True}, True), ({"readOnlyHint": "yes"}, False),
             ({"destructiveHint": False}, False), (None, False)]
    for annotations, expected in cases:
        assert _methods.resendable_tool(annotations) is expected
        assert _shared.safe_tool(t.ToolDef(name="x", annotations=annotations)) is expected
