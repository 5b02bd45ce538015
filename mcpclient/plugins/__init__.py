"""The built-in features, each a plug-in of the public seam (``mcpclient.extensions``).

A module here may import the core, the transports' public contract and the seam
(``mcpclient.extensions``, ``_client.seam``, ``_client.features``); the client core imports none
of them. This package only names them: each built-in's builder (what turns some of a
fields of a Client's ``Plugins``, ``apps=True``, ``cache=...``, ``telemetry=...``, into extension
instances) is registered by where it lives and when it is wanted, and its module is imported
the first time a Client's options want it, never by ``import mcpclient``.
"""

from __future__ import annotations

from typing import Any, Mapping

from .._client.seam import register_option_builder


def _given(option: str) -> Any:
    """Wanted when the Client's ``option`` is given (not None)."""
    return lambda options: options.get(option) is not None


def _cache_wanted(options: Mapping[str, Any]) -> bool:
    """``cache=`` on, or a ``cache_partition=`` (which the builder refuses without it)."""
    cache, partition = options.get("cache", False), options.get("cache_partition")
    return (cache is not False and cache is not None) or (partition is not None and partition != "")


def _speaks_http(options: Mapping[str, Any]) -> bool:
    """The header mirroring is for a transport whose peer speaks HTTP."""
    transport = options.get("transport")
    return transport is not None and transport.about.peer.protocol == "http"


# The outer builders run in this order, their extensions first of all: telemetry outermost,
# so a call's span covers what the lock and the policy gate do (and the refusals they make).
register_option_builder("mcpclient.plugins.telemetry:telemetry_extensions", outer=True,
                        wanted=lambda options: options.get("telemetry", "auto") is not False)
register_option_builder("mcpclient.plugins.lock:lock_extensions", outer=True, wanted=_given("lock"))
register_option_builder("mcpclient.plugins.policy:policy_extensions", outer=True, wanted=_given("policy"))
# Before the user's extensions too: their result hooks (and MCP Apps') see a checked result.
register_option_builder("mcpclient.plugins.validation:output_validation", outer=True)
# The inner ones, after the user's extensions and what the transport declares.
register_option_builder("mcpclient.plugins.keepalive:keepalive_extensions", outer=False, wanted=_given("keepalive"))
# After the user's: their result hooks see the plain ToolResult.
register_option_builder("mcpclient.plugins.apps.extension:apps_extensions", outer=False,
                        wanted=lambda options: bool(options.get("apps")))
register_option_builder("mcpclient.plugins.skills.extension:skills_extensions", outer=False)
register_option_builder("mcpclient.plugins.tasks:tasks_extension", outer=False)  # after the user's result hooks
register_option_builder("mcpclient.plugins.headers:header_extensions", outer=False, wanted=_speaks_http)
register_option_builder("mcpclient.plugins.cache:cache_extensions", outer=False, wanted=_cache_wanted)
