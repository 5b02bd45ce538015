"""The policy gate: which tool calls go to the server, which are refused, which a person approves.

    >>> import mcpclient
    >>> from mcpclient.policy import Policy, Rule, Under
    >>> policy = Policy([Rule("allow", annotations={"readOnlyHint": True}),
    ...                  Rule("allow", tool="write_file", arguments=[Under("path", "/srv/data")]),
    ...                  Rule("deny", tool="delete_*")],
    ...                 default="ask", approver=mcpclient.prompting.approve_tool)
    >>> client = mcpclient.connect(["python", "server.py"], plugins=mcpclient.Plugins(policy=policy))  # doctest: +SKIP

The rules and what they match are described in ``mcpclient.plugins.policy`` and
docs/policy.md; ``load_policy`` reads the ``"policy"`` object of a config file;
``WebApprovals`` is the approver a web app answers from its own queue, ``NotebookApprovals``
the one with two buttons in the running notebook cell.
"""

from __future__ import annotations

from ._core.exceptions import ToolCallDenied
from .config import load_policy
from .plugins.approvers import Pending, WebApprovals
from .plugins.notebook_approvals import NotebookApprovals
from .plugins.policy import ApprovalRequest, Approver, Decision, MaxSize, OneOf, Policy, Rule, ToolCall, Under

__all__ = [
    "ApprovalRequest",
    "Approver",
    "Decision",
    "MaxSize",
    "NotebookApprovals",
    "OneOf",
    "Pending",
    "Policy",
    "Rule",
    "ToolCall",
    "ToolCallDenied",
    "Under",
    "WebApprovals",
    "load_policy",
]
