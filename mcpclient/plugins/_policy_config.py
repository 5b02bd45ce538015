"""A ``Policy`` from its config form: the ``"policy"`` object beside the servers in a config file.

    {"mcpServers": {...},
     "policy": {"default": "ask", "audit": "mcp-audit.jsonl",
                "rules": [{"action": "allow", "annotations": {"readOnlyHint": true}},
                          {"action": "allow", "server": "fs", "tool": "write_file",
                           "arguments": {"path": {"under": ["/srv/data"]}, "content": {"maxSize": 100000}}},
                          {"action": "deny", "tool": ["delete_*", "drop_*"]}]}}

Every key is checked: one it does not know is a ``ConfigError``, so a typo (``"tools"`` for
``"tool"``) cannot turn a narrow rule into one that matches every call.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from .._core.exceptions import ConfigError
from .._core.text import clean
from ._policy_conditions import Condition, MaxSize, OneOf, Under
from .policy import Approver, Policy, Rule, check_action

__all__ = ["policy_from_dict"]

log = logging.getLogger("mcpclient.policy")

RULE_KEYS = frozenset({"action", "server", "tool", "annotations", "arguments", "name"})
POLICY_KEYS = frozenset({"default", "rules", "audit"})
CONDITION_KEYS = frozenset({"under", "in", "maxSize"})


def _unknown(keys: Any, known: frozenset[str], where: str) -> None:
    extra = sorted(str(k) for k in keys if k not in known)
    if extra:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(clean(repr(k), 60) for k in extra)} "
                          f"(known: {', '.join(sorted(known))})")


def _conditions(raw: Any, where: str) -> list[Condition]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: 'arguments' maps argument names to conditions")
    out: list[Condition] = []
    for argument, spec in raw.items():
        here = f"{where}, argument {clean(repr(argument), 60)}"
        if not isinstance(spec, dict) or not spec:
            raise ConfigError(f"{here}: a condition is an object with 'under', 'in' or 'maxSize'")
        _unknown(spec, CONDITION_KEYS, here)
        name = None if argument == "*" else str(argument)
        if "under" in spec:
            roots = spec["under"]
            roots = [roots] if isinstance(roots, str) else roots
            if name is None or not isinstance(roots, list) or not roots or not all(isinstance(r, str) for r in roots):
                raise ConfigError(f"{here}: 'under' takes a path or a list of paths")
            out.append(Under(name, *roots))
        if "in" in spec:
            if name is None or not isinstance(spec["in"], list):
                raise ConfigError(f"{here}: 'in' takes a list of values")
            out.append(OneOf(name, spec["in"]))
        if "maxSize" in spec:
            size = spec["maxSize"]
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise ConfigError(f"{here}: 'maxSize' takes a number of bytes")
            out.append(MaxSize(name, size))
    return out


def _rule(raw: Any, index: int, where: str) -> Rule:
    here = f"{where}, rule {index + 1}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{here}: a rule is an object")
    _unknown(raw, RULE_KEYS, here)
    action = check_action(raw.get("action"), here)
    try:
        return Rule(action, server=raw.get("server"), tool=raw.get("tool"),  # type: ignore[arg-type]
                    annotations=raw.get("annotations"),
                    arguments=_conditions(raw["arguments"], here) if "arguments" in raw else (),
                    name=str(raw["name"]) if raw.get("name") is not None else None)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{here}: {exc}") from None


def policy_from_dict(data: Mapping[str, Any], *, approver: Approver | None = None, where: str = "the policy",
                     allow_rules: bool = True) -> Policy:
    """A ``Policy`` from its config form ``data``; ``ConfigError`` for anything wrong or unknown.

    ``allow_rules=False`` (a project's file, not approved) drops its ``allow`` rules and an
    ``allow`` default with a warning: a checkout may make calls stricter, never looser.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: 'policy' is an object with 'rules' (and 'default', 'audit')")
    _unknown(data, POLICY_KEYS, where)
    rules = data.get("rules", [])
    if not isinstance(rules, list):
        raise ConfigError(f"{where}: 'rules' is a list")
    default = check_action(data.get("default", "ask"), f"{where}, default")
    audit = data.get("audit")
    if audit is not None and not isinstance(audit, str):
        raise ConfigError(f"{where}: 'audit' is a file path")
    parsed = [_rule(rule, i, where) for i, rule in enumerate(rules)]
    if not allow_rules:
        if any(rule.action == "allow" for rule in parsed) or default == "allow":
            log.warning("%s: ignoring its 'allow' rules: the file is a project's, not approved "
                        "(mcpclient trust, or --trust-project)", where)
        parsed = [rule for rule in parsed if rule.action != "allow"]
        default = "ask" if default == "allow" else default
        if audit is not None:
            log.warning("%s: ignoring its 'audit' file: the file is a project's, not approved", where)
            audit = None
    return Policy(parsed, default=default, approver=approver, audit=audit)  # type: ignore[arg-type]
